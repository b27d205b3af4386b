package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/secret"
	"tribunal/store"
)

const testKey = "cli-test-key"

// inProcess runs commands through Main in this process, on one SQLite data dir.
type inProcess struct {
	t       *testing.T
	dir     string
	dataDir string
}

func newInProcess(t *testing.T) *inProcess {
	t.Setenv("TRIBUNAL_MASTER_KEY", testKey)
	t.Setenv("DATABASE_URL", "")
	t.Setenv("TRIBUNAL_DATA_DIR", "")
	return &inProcess{t: t, dir: t.TempDir(), dataDir: filepath.Join(t.TempDir(), "data")}
}

func (p *inProcess) write(name, text string) string {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func (p *inProcess) main(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(append(args, "--data-dir", p.dataDir), &out, &errOut)
	return code, out.String(), errOut.String()
}

func (p *inProcess) store() *store.Store {
	p.t.Helper()
	box, _ := secret.NewBox(testKey)
	st, err := store.Open(context.Background(), store.Config{DataDir: p.dataDir, Box: box})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { st.Close() })
	return st
}

// TestRunFileJudgesProvidersCollections: a run file reuses a stored provider
// by name and updates the one it defines, creates a judgement style and a
// judge with a personality (then reuses them, or versions them when the file
// changes), draws tasks from its own and stored collections through the query
// picker, and gates on the style's own metrics.
func TestRunFileJudgesProvidersCollections(t *testing.T) {
	p := newInProcess(t)
	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: `{"accuracy": {"score": 4, "reasoning": "right"}, "clarity": {"score": 5, "reasoning": "clear"}}`}
		}
		return llmtest.DefaultReply(r)
	})
	ctx := context.Background()
	st := p.store()
	if _, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Stored", BaseURL: fake.URL}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpsertTasks(ctx, store.ImportInput{Collection: "Math basics", Tasks: []store.TaskInput{
		{TaskKey: "m1", Category: "math", Question: "1+1?"}, {TaskKey: "m2", Category: "math", Question: "2+2?"},
		{TaskKey: "m3", Category: "math", Question: "3+3?"}}}); err != nil {
		t.Fatal(err)
	}
	file := func(description string) string {
		return strings.ReplaceAll(`name: judged
providers:
  - name: fake
    base_url: {{URL}}
    concurrency: 4
  - name: Stored
tasks:
  - {task_id: a1, question: "Say A"}
  - {task_id: a2, question: "Say B"}
collections: [Math basics]
select: {mode: top, n: 4}
targets:
  - {provider: fake, model: fake-small}
  - {provider: Stored, model: fake-large, tags: [stored]}
judge:
  provider: fake
  model: fake-judge
  style: {name: CI two metrics, scale_min: 1, scale_max: 5, metrics: [accuracy, clarity]}
  personality: {name: strict, description: "`+description+`"}
gates:
  min_accuracy: 3.5
  per_model: {fake-large: {min_clarity: 4.5}}
`, "{{URL}}", fake.URL)
	}
	judged := p.write("judged.yaml", file("Punishes hedging."))
	code, out, errOut := p.main("run", judged, "--progress", "none")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{`provider "fake": created`, `provider "Stored": using the stored one`,
		`style "CI two metrics": created`, `judge "fake-judge (strict)": created`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "PASS  overall") || !strings.Contains(out, "accuracy = 4") || !strings.Contains(out, "clarity = 5") {
		t.Errorf("gates on the style's metrics:\n%s", out)
	}
	run, err := st.Run(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := st.RunTaskList(ctx, 1)
	var keys []string
	for _, rt := range tasks {
		keys = append(keys, rt.TaskKey)
	}
	if strings.Join(keys, ",") != "a1,a2,m1,m2" {
		t.Errorf("top 4 of the file's and the collection's tasks: %v", keys)
	}
	if len(run.Judges) != 1 || run.Judges[0].PersonalityName != "strict" || run.Judges[0].ScaleMax != 5 || run.Judges[0].JudgeID == nil {
		t.Errorf("judge: %+v", run.Judges)
	}
	if len(run.Targets) != 2 || run.Targets[1].ProviderName != "Stored" || !run.Targets[1].Tags.Has("stored") {
		t.Errorf("targets: %+v", run.Targets)
	}

	// The same file again reuses the judge and the style; the file's provider is updated.
	code, out, errOut = p.main("run", judged, "--progress", "none")
	if code != ExitOK || !strings.Contains(errOut, `judge "fake-judge (strict)": reusing the saved one`) ||
		strings.Contains(errOut, "style") || !strings.Contains(errOut, `provider "fake": updated the stored one`) {
		t.Errorf("second run: exit %d\n%s\n%s", code, out, errOut)
	}
	// A changed personality makes a new version of the judge.
	p.write("judged.yaml", file("Punishes hedging and padding."))
	if code, _, errOut = p.main("run", judged, "--progress", "none"); code != ExitOK || !strings.Contains(errOut, "version 2") {
		t.Errorf("changed judge: exit %d\n%s", code, errOut)
	}
	judges, _ := st.Judges(ctx)
	if len(judges) != 1 || judges[0].Version != 2 || judges[0].PersonalityDescription != "Punishes hedging and padding." {
		t.Errorf("saved judges: %+v", judges)
	}

	// Names the database does not know are problems with their lines.
	unknown := p.write("unknown.yaml", `providers: [{name: Nowhere}, {name: fake, base_url: http://127.0.0.1:1}]
collections: [No such collection]
targets: [{provider: fake, model: m}]
judges: [{name: No such judge}]
`)
	code, _, errOut = p.main("run", unknown)
	for _, want := range []string{`unknown.yaml:1: providers: no stored provider "Nowhere"`, `unknown.yaml:2: collections: no collection "No such collection"`,
		`unknown.yaml:4: judge: no saved judge "No such judge"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != ExitUsage {
		t.Errorf("unknown names: exit %d", code)
	}
	// A store rule (a panel must share one scale) is reported at the file's line.
	panel := p.write("panel.yaml", strings.ReplaceAll(`providers: [{name: fake, base_url: {{URL}}}]
tasks: [{task_id: a1, question: "Say A"}]
targets: [{provider: fake, model: fake-small}]
judges:
  - {name: fake-judge (strict)}
  - {provider: fake, model: fake-judge}
`, "{{URL}}", fake.URL))
	if code, _, errOut = p.main("run", panel); code != ExitUsage || !strings.Contains(errOut, "panel.yaml:") || !strings.Contains(errOut, "share a scoring scale") {
		t.Errorf("panel of two scales: exit %d\n%s", code, errOut)
	}
}

func TestProgressDisplay(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := func(answered, done int64) snapshot {
		p := store.Progress{Total: 10, ByStatus: map[store.ItemStatus]int64{
			store.ItemNew: 10 - answered, store.ItemWaitingForJudge: answered - done, store.ItemCompleted: done}}
		return snapshot{Status: store.RunRunning, Phase: store.PhaseBenchmarking, Progress: p, Judged: true,
			Current: &store.CurrentWork{TaskID: "t3", Provider: "local", Model: "llama", Status: store.ItemInProgress}}
	}
	var plain bytes.Buffer
	pp := newProgress(&plain, false, 10*time.Second)
	pp.now = func() time.Time { return now }
	pp.update(snap(0, 0))
	for i := int64(1); i <= 5; i++ {
		now = now.Add(time.Second)
		pp.update(snap(i, 0))
	}
	pp.event("✗ local / llama · t4 failed")
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "answered 0/10") || lines[1] != "✗ local / llama · t4 failed" {
		t.Errorf("plain output (one line per interval, events at once):\n%s", plain.String())
	}
	now = now.Add(10 * time.Second)
	pp.update(snap(6, 0))
	if !strings.Contains(plain.String(), "answered 6/10 0.4 items/s ETA") || !strings.Contains(plain.String(), "answering local / llama · task t3") {
		t.Errorf("plain line lacks rate, ETA or current model:\n%s", plain.String())
	}

	var tty bytes.Buffer
	bp := newProgress(&tty, true, time.Second)
	bp.now = func() time.Time { return now }
	bp.update(snap(2, 1))
	now = now.Add(2 * time.Second)
	bp.update(snap(6, 4))
	out := tty.String()
	if !strings.Contains(out, "\x1b[3A") || !strings.Contains(out, "Answering  ") || !strings.Contains(out, "6/10 2.0 items/s ETA 00:02") ||
		!strings.Contains(out, "Judging    ") || !strings.Contains(out, "4/10 1.5 items/s ETA 00:04") {
		t.Errorf("bars:\n%q", out)
	}
}

func TestParseFlagsAnywhere(t *testing.T) {
	fs := newFlagSet("x", "", &bytes.Buffer{})
	out := fs.String("out", "", "")
	pos, err := parseFlags(fs, []string{"a.yaml", "--out", "dir", "b", "--", "--c"})
	if err != nil || *out != "dir" || strings.Join(pos, " ") != "a.yaml b --c" {
		t.Errorf("pos %v out %q err %v", pos, *out, err)
	}
}
