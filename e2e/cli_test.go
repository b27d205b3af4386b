package e2e

// CLI tests: the real binary runs as a subprocess (built once, like the
// crash tests) against a fake OpenAI-compatible server, on its own SQLite
// data dir (or PostgreSQL with TEST_DATABASE_URL), and is judged by its exit
// codes, its output and what it leaves in the database.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
	"tribunal/secret"
	"tribunal/store"
	"tribunal/store/storetest"
)

// cliEnv is a work dir with run files, a data dir and a fake LLM.
type cliEnv struct {
	t       *testing.T
	bin     string
	dir     string
	dataDir string
	dbURL   string
	fake    *llmtest.Server
	extra   []string // environment
}

func newCLIEnv(t *testing.T, script func(llmtest.ChatRequest) llmtest.Reply) *cliEnv {
	t.Helper()
	return &cliEnv{t: t, bin: tribunalBinary(t), dir: t.TempDir(), dataDir: filepath.Join(t.TempDir(), "data"),
		fake: llmtest.New(t, script), extra: []string{"FAKE_API_KEY=fake-key"}}
}

// write puts a file in the work dir, replacing {{URL}} with the fake's URL.
func (c *cliEnv) write(name, text string) string {
	c.t.Helper()
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "{{URL}}", c.fake.URL)), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return path
}

type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

func (c *cliEnv) command(args ...string) *exec.Cmd {
	if c.dbURL != "" {
		args = append(args, "--database-url", c.dbURL)
	} else {
		args = append(args, "--data-dir", c.dataDir)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	cmd.Env = append(crashChildEnv(), c.extra...)
	return cmd
}

// run runs tribunal with args (and the data dir) and waits for it.
func (c *cliEnv) run(args ...string) cliResult {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("run tribunal %v: %v", args, err)
	}
	return cliResult{code, out.String(), errOut.String()}
}

// store opens the database the CLI wrote (SQLite in the data dir, or the PostgreSQL schema).
func (c *cliEnv) store() *store.Store {
	c.t.Helper()
	box, err := secret.NewBox(crashMasterKey)
	if err != nil {
		c.t.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Config{DataDir: c.dataDir, DatabaseURL: c.dbURL, Box: box})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { st.Close() })
	return st
}

const cliTasksCSV = `task_id,category,question,reference
c1,math,What is 3+3?,6
c2,math,What is 5*5?,25
`

// cliRunFile is the smallest run file, pointed at the fake, with gates.
const cliRunFile = `name: CI smoke
tags: [ci]
providers:
  - name: fake
    base_url: {{URL}}
    headers: {Authorization: "Bearer ${FAKE_API_KEY}"}
    prices: {fake-small: {input: 1, output: 2}}
tasks:
  - file: tasks.csv
  - task_id: t1
    question: "What is 2+2?"
    reference: "4"
    checks: [{type: numeric}]
targets:
  - {provider: fake, model: fake-small, settings: {temperature: 0}}
  - {provider: fake, model: fake-large}
judge: {provider: fake, model: fake-judge}
gates:
%s
`

func TestCLIRunGates(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testCLIRunGates(t, "") })
	t.Run("postgres", func(t *testing.T) { testCLIRunGates(t, storetest.PostgresURL(t)) })
}

func testCLIRunGates(t *testing.T, dbURL string) {
	c := newCLIEnv(t, nil) // every answer scores 7
	c.dbURL = dbURL
	c.write("tasks.csv", cliTasksCSV)

	// Passing gates: exit 0, a table per model, results in --out.
	c.write("pass.yaml", fmt.Sprintf(cliRunFile, "  min_score: 6\n  min_pass_rate: 0.8\n  max_cost_usd: 1\n  per_model: {fake-small: {min_score: 6.5}}"))
	r := c.run("run", "pass.yaml", "--out", "results")
	if r.code != 0 {
		t.Fatalf("passing gates: %s", r)
	}
	for _, want := range []string{"fake / fake-small", "fake / fake-large", "7.00", "100.0%", "All 4 gates passed", "PASS  overall"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !regexp.MustCompile(`\[\d\d:\d\d\] \w+ · answered \d+/6`).MatchString(r.stderr) {
		t.Errorf("no plain progress lines without a terminal:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, `provider "fake": created`) || !strings.Contains(r.stderr, "tasks: 3 created, 0 updated") {
		t.Errorf("the set-up is not reported:\n%s", r.stderr)
	}
	for _, f := range []string{"results.csv", "results.json", "report.html", "summary.json"} {
		if _, err := os.Stat(filepath.Join(c.dir, "results", f)); err != nil {
			t.Errorf("--out: %v", err)
		}
	}
	var summary struct {
		RunID    int64 `json:"run_id"`
		ExitCode int   `json:"exit_code"`
		Gates    []struct {
			Metric string   `json:"metric"`
			Value  *float64 `json:"value"`
			Pass   bool     `json:"pass"`
		} `json:"gates"`
	}
	b, _ := os.ReadFile(filepath.Join(c.dir, "results", "summary.json"))
	if err := json.Unmarshal(b, &summary); err != nil || summary.ExitCode != 0 || len(summary.Gates) != 4 || summary.Gates[0].Value == nil || *summary.Gates[0].Value != 7 {
		t.Errorf("summary.json: %s (%v)", b, err)
	}
	csv, _ := os.ReadFile(filepath.Join(c.dir, "results", "results.csv"))
	if lines := strings.Count(string(csv), "\n"); !strings.HasPrefix(string(csv), "task_id,category,subcategory,question,reference,provider,model,version,status,score,judge") || lines != 7 {
		t.Errorf("results.csv: %d lines\n%s", lines, csv)
	}
	// The run is in the database like any other, with the file's tags.
	st := c.store()
	run, err := st.Run(context.Background(), summary.RunID)
	if err != nil || run.Status != store.RunFinished || run.TriggeredBy != "CLI" || !run.Tags.Has("ci") || run.Name != "CI smoke" {
		t.Fatalf("run in the database: %+v %v", run, err)
	}

	// A failing overall gate: exit 1. A re-run updates the tasks instead of duplicating them.
	c.write("fail.yaml", fmt.Sprintf(cliRunFile, "  min_score: 7.5"))
	r = c.run("run", "fail.yaml")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  overall") || !strings.Contains(r.stderr, "1 gate of 1 failed") {
		t.Fatalf("failing gate: %s", r)
	}
	if !strings.Contains(r.stderr, "tasks: 0 created, 3 updated") {
		t.Errorf("re-run does not say the tasks were updated:\n%s", r.stderr)
	}
	// A failing per-model gate alone: exit 1 too.
	c.write("model.yaml", fmt.Sprintf(cliRunFile, "  min_score: 6\n  per_model:\n    fake-large: {min_score: 8}"))
	r = c.run("run", "model.yaml")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  fake / fake-large") || !strings.Contains(r.stdout, "PASS  overall") {
		t.Fatalf("failing per-model gate: %s", r)
	}

	// Every call refused: the run fails, exit 3.
	c.fake.SetScript(func(llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Status: 401} })
	r = c.run("run", "pass.yaml")
	if r.code != 3 || !strings.Contains(r.stderr, "failed") || !strings.Contains(r.stderr, "✗") {
		t.Fatalf("failed run: %s", r)
	}
	page, _ := st.Tasks(context.Background(), store.TaskFilter{})
	if page.Total != 3 {
		t.Errorf("%d tasks after four runs of the same file, want 3", page.Total)
	}
}

func TestCLIBadRunFile(t *testing.T) {
	c := newCLIEnv(t, nil)
	c.write("broken.csv", "task_id,question\nb1,fine\nb2,\n")
	path := c.write("bad.yaml", `providers:
  - name: local
    base_url: http://127.0.0.1:11434
    headers: {Authorization: "Bearer sk-live-literal"}
tasks:
  - file: broken.csv
  - task_id: t1
    question: "What is 2+2?"
    checks: [{type: numeric}]
targets:
  - {provider: local, model: "llama3.1:8b", settings: {temperature: 3}}
  - {provider: nobody, model: x}
judge: {provider: local, model: "qwen2.5:14b", stlye: strict}
gates: {min_score: 6, min_pass_rate: 90, max_tokens: 3}
`)
	want := []string{
		"bad.yaml:4: providers[\"local\"].headers.Authorization: a secret header takes its value from the environment",
		"bad.yaml:6: tasks[0].file: broken.csv has problems",
		"bad.yaml:9: checks[0]: numeric needs a value or the task's reference",
		"bad.yaml:11: targets[0].settings.temperature: must be within 0…2",
		"bad.yaml:12: targets[1].provider: no provider \"nobody\"",
		"bad.yaml:13: judge: unknown key \"stlye\" (did you mean \"style\"?)",
		"bad.yaml:14: gates.min_pass_rate: pass_rate is a fraction from 0 to 1",
		"broken.csv:3: row 2 question: is required",
	}
	for _, cmd := range [][]string{{"run", "bad.yaml"}, {"validate", "bad.yaml"}} {
		r := c.run(cmd...)
		if r.code != 2 {
			t.Fatalf("%v: %s", cmd, r)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", cmd, w, r.stderr)
			}
		}
		if n := strings.Count(r.stderr, "\n"); n < len(want)+1 {
			t.Errorf("%v: %d lines, want every problem", cmd, n)
		}
	}
	if _, err := os.Stat(filepath.Join(c.dataDir, "tribunal.db")); err == nil {
		t.Error("a bad run file touched the database")
	}
	// A gate on a metric the run does not have is caught when the run starts (exit 2, its line).
	c.write("tasks.csv", cliTasksCSV)
	c.write("metric.yaml", fmt.Sprintf(cliRunFile, "  min_accuracy: 3"))
	if r := c.run("run", "metric.yaml"); r.code != 2 || !strings.Contains(r.stderr, `metric.yaml:19: gates.min_accuracy: the run has no metric "accuracy"`) {
		t.Errorf("unknown gate metric: %s", r)
	}
	if r := c.run("validate", "tasks.csv", filepath.Base(path)+".missing"); r.code != 2 || !strings.Contains(r.stdout, "tasks.csv: OK — 2 tasks, csv") {
		t.Errorf("validate a task file and a missing file: %s", r)
	}
	if r := c.run("run"); r.code != 2 {
		t.Errorf("run without a file: %s", r)
	}
	if r := c.run("run", "pass.yaml", "--progress", "sideways"); r.code != 2 {
		t.Errorf("bad flag value: %s", r)
	}
}

// importFixtures are one small file per import format, written for this test.
var importFixtures = []struct {
	name, format, text string
	ids                []string
}{
	{"seed.csv", "csv", "Task ID,Category,Question,Excellent,Good,Pass,Incorrect answer direction,Notes\n" +
		"m1,math,What is 2+2?,4 with reasoning,4,4,says 5,kept as metadata\nm2,math,What is 3*3?,9,9,9,,\n", []string{"m1", "m2"}},
	{"chat.jsonl", "jsonl", `{"id": "j1", "prompt": "Say hi", "answer": "hi", "tags": ["greet"]}` + "\n" +
		`{"id": "j2", "prompt": "Say bye", "expected": "bye"}` + "\n", []string{"j1", "j2"}},
	{"suite.yaml", "yaml", `name: lecture_concept_extraction
description: Extract teaching concepts from lecture transcripts with precise timestamps
input_type: transcript
output_format: csv
constraints:
  min_duration_minutes: 2
evaluation_criteria:
  - No overlapping time ranges
judge_instructions: Count violations.
`, []string{"lecture_concept_extraction"}},
	{"promptfooconfig.yaml", "promptfoo", `prompts:
  - "Translate to {{ language }}: {{ text }}"
tests:
  - vars: {language: French, text: Hello}
    assert:
      - {type: equals, value: Bonjour}
  - vars: {language: German, text: Hello}
`, nil},
	{"question.jsonl", "mtbench", `{"question_id": 81, "category": "writing", "turns": ["Compose a travel blog post.", "Rewrite it."]}` + "\n" +
		`{"question_id": 111, "category": "math", "turns": ["Area of the triangle?", "Area of the circle?"], "reference": ["3", "5pi"]}` + "\n",
		[]string{"mtbench-81", "mtbench-111"}},
	{"arith.jsonl", "openai_evals", `{"input": [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "2+2?"}], "ideal": "4"}` + "\n" +
		`{"input": "Plain text prompt", "ideal": "x"}` + "\n", nil},
}

func TestCLIImportFormats(t *testing.T) {
	c := newCLIEnv(t, nil)
	for _, fx := range importFixtures {
		t.Run(fx.format, func(t *testing.T) {
			c.write(fx.name, fx.text)
			r := c.run("import", fx.name, "--collection", "fmt-"+fx.format, "--json")
			var res struct {
				Created    int      `json:"created"`
				Updated    int      `json:"updated"`
				TaskIDs    []string `json:"task_ids"`
				Collection struct {
					Name      string `json:"name"`
					TaskCount int64  `json:"task_count"`
				} `json:"collection"`
			}
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
				t.Fatalf("import %s: %s", fx.name, r)
			}
			if res.Created != 2 && fx.format != "yaml" || res.Updated != 0 || res.Collection.TaskCount != int64(res.Created) {
				t.Errorf("import %s: %s", fx.name, r.stdout)
			}
			if fx.ids != nil && strings.Join(res.TaskIDs, ",") != strings.Join(fx.ids, ",") {
				t.Errorf("task ids %v, want %v", res.TaskIDs, fx.ids)
			}
			// The detected format is the one the file is written in.
			r = c.run("validate", fx.name)
			if r.code != 0 || !strings.Contains(r.stdout, ", "+fx.format+"\n") {
				t.Errorf("validate %s: %s", fx.name, r)
			}
		})
	}
	st := c.store()
	ctx := context.Background()
	tasks, _ := st.Tasks(ctx, store.TaskFilter{PerPage: 100})
	byKey := map[string]store.Task{}
	for _, task := range tasks.Items {
		byKey[task.TaskKey] = task
	}
	if tasks.Total != 11 {
		t.Errorf("%d tasks, want 11", tasks.Total)
	}
	if m1 := byKey["m1"]; m1.Excellent != "4 with reasoning" || m1.IncorrectAnswerDirection != "says 5" || m1.Metadata["Notes"] != "kept as metadata" {
		t.Errorf("CSV task m1: %+v", m1)
	}
	if j1 := byKey["j1"]; j1.Reference != "hi" || len(j1.Tags) != 1 {
		t.Errorf("JSONL task j1: %+v", j1)
	}
	if mt := byKey["mtbench-111"]; len(mt.Turns) != 2 || mt.Reference != "3" {
		t.Errorf("MT-Bench task: %+v", mt)
	}
	if y := byKey["lecture_concept_extraction"]; !strings.Contains(y.Constraints, "Output format: csv") || y.Metadata["input_type"] != "transcript" {
		t.Errorf("YAML task: %+v", y)
	}
	// A file that names no category takes the collection's, as on the Import page.
	for _, task := range tasks.Items {
		if strings.HasPrefix(task.Question, "Plain text prompt") && task.Category != "fmt-openai_evals" {
			t.Errorf("OpenAI-evals task without a category got %q, want the collection's name", task.Category)
		}
	}

	// Re-importing a file updates its tasks and says which.
	r := c.run("import", "seed.csv", "--collection", "fmt-csv")
	if r.code != 0 || !strings.Contains(r.stdout, "0 created, 2 updated") || !strings.Contains(r.stdout, "updated (their task_id existed): m1, m2") {
		t.Errorf("re-import: %s", r)
	}
	if tasks, _ := st.Tasks(ctx, store.TaskFilter{}); tasks.Total != 11 {
		t.Errorf("re-import duplicated tasks: %d", tasks.Total)
	}
}

func TestCLIImportAllOrNothing(t *testing.T) {
	c := newCLIEnv(t, nil)
	c.write("good.jsonl", `{"task_id": "g1", "question": "fine"}`+"\n")
	c.write("bad.csv", "task_id,category,question\nok1,x,fine\nbad1,x,\nok2,x,also fine\n,x,\n")
	r := c.run("import", "good.jsonl", "bad.csv", "--collection", "never")
	if r.code != 2 {
		t.Fatalf("bad rows: %s", r)
	}
	for _, want := range []string{"bad.csv:3:1: row 2: question: is required", "bad.csv:5:1: row 4:", "nothing was imported"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(c.dataDir, "tribunal.db")); err == nil {
		st := c.store()
		tasks, _ := st.Tasks(context.Background(), store.TaskFilter{})
		cols, _ := st.Collections(context.Background())
		if tasks.Total != 0 || len(cols) != 0 {
			t.Errorf("a failed import wrote %d tasks, %d collections", tasks.Total, len(cols))
		}
	}
	// The same ids twice across files: refused as a whole, too.
	c.write("dup.jsonl", `{"task_id": "g1", "question": "again"}`+"\n")
	if r := c.run("import", "good.jsonl", "dup.jsonl"); r.code != 2 || !strings.Contains(r.stderr, "nothing was imported") {
		t.Errorf("duplicate ids across files: %s", r)
	}
	if r := c.run("import", "good.jsonl", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"created": 1`) {
		t.Errorf("after the refused imports, the good file creates its task: %s", r)
	}
}

func TestCLIExportAndModels(t *testing.T) {
	c := newCLIEnv(t, nil)
	c.write("tasks.csv", cliTasksCSV)
	c.write("run.yaml", fmt.Sprintf(cliRunFile, "  min_score: 1"))
	for range 2 {
		if r := c.run("run", "run.yaml", "--progress", "none"); r.code != 0 {
			t.Fatalf("run: %s", r)
		}
	}
	r := c.run("export", "1", "--format", "json")
	var doc struct {
		Format string            `json:"format"`
		Items  []json.RawMessage `json:"items"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil || doc.Format != "tribunal.run/v1" || len(doc.Items) != 6 {
		t.Fatalf("export json: %s", r)
	}
	if r := c.run("export", "1", "--out", "one.csv"); r.code != 0 {
		t.Errorf("export csv: %s", r)
	} else if b, _ := os.ReadFile(filepath.Join(c.dir, "one.csv")); strings.Count(string(b), "\n") != 7 {
		t.Errorf("one.csv:\n%s", b)
	}
	if r := c.run("export", "1", "2", "--format", "csv"); r.code != 2 {
		t.Errorf("csv of two runs: %s", r)
	}
	if r := c.run("export", "42", "--format", "json"); r.code != 2 || !strings.Contains(r.stderr, "run 42 not found") {
		t.Errorf("missing run: %s", r)
	}
	if r := c.run("export", "--runs", "1,2", "--format", "html", "--out", "compare.html"); r.code != 0 {
		t.Fatalf("export html: %s", r)
	}
	reportOffline(t, filepath.Join(c.dir, "compare.html"))

	r = c.run("models", "fake")
	if r.code != 0 || !regexp.MustCompile(`fake-small\s+–\s+1\s+2\s+manual`).MatchString(r.stdout) || !strings.Contains(r.stdout, "fake-judge") {
		t.Errorf("models: %s", r)
	}
	if r := c.run("models", "fake", "--file", "run.yaml", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"id": "fake-large"`) {
		t.Errorf("models from the run file: %s", r)
	}
	if r := c.run("models", "nobody"); r.code != 2 || !strings.Contains(r.stderr, `no provider "nobody"`) {
		t.Errorf("unknown provider: %s", r)
	}
}

// reportOffline opens a report from disk in headless Chromium and checks
// that it renders its charts without a single network request.
func reportOffline(t *testing.T, path string) {
	t.Helper()
	b := newBrowser(t, "")
	u := (&url.URL{Scheme: "file", Path: path}).String()
	var mu sync.Mutex
	var requests []string
	err := chromedp.Listen(b.ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	b.do("open the report", 20*time.Second, chromedp.Navigate(u), chromedp.WaitVisible(`[data-testid=comparison]`))
	charts := mustEval[int](b, "charts", `document.querySelectorAll("svg").length`)
	runs := mustEval[int](b, "run sections", `document.querySelectorAll("[data-testid=run]").length`)
	b.do("settle", 15*time.Second, chromedp.Sleep(300*time.Millisecond))
	if charts < 4 || runs != 2 {
		t.Errorf("report: %d charts, %d run sections", charts, runs)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range requests {
		if r != u {
			t.Errorf("the report made a request: %s", r)
		}
	}
	if len(requests) == 0 {
		t.Error("saw no request at all: the network listener is not working")
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("errors: %v", errs)
	}
}

func TestCLIInterruptAndResume(t *testing.T) {
	c := newCLIEnv(t, func(r llmtest.ChatRequest) llmtest.Reply {
		reply := llmtest.DefaultReply(r)
		reply.Delay = 150 * time.Millisecond
		return reply
	})
	var csv strings.Builder
	csv.WriteString("task_id,category,question\n")
	for i := range 8 {
		fmt.Fprintf(&csv, "s%d,slow,Question %d?\n", i, i)
	}
	c.write("tasks.csv", csv.String())
	c.write("slow.yaml", `providers: [{name: fake, base_url: {{URL}}}]
tasks: [{file: tasks.csv}]
targets: [{provider: fake, model: fake-small}]
judge: {provider: fake, model: fake-judge}
gates: {min_score: 6}
`)
	cmd := c.command("run", "slow.yaml", "--progress-interval", "1s")
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Interrupt once some answers are in.
	deadline := time.Now().Add(30 * time.Second)
	for c.fake.CallCount() < 4 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run made no progress:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no exit after Ctrl-C:\n%s", errOut.String())
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("Ctrl-C: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "tribunal run --resume 1 slow.yaml") {
		t.Errorf("no resume hint:\n%s", errOut.String())
	}
	st := c.store()
	ctx := context.Background()
	run, _ := st.Run(ctx, 1)
	prog, _ := st.RunProgress(ctx, 1)
	if run.Status != store.RunPaused || prog.Done() == prog.Total || prog.Count(store.ItemInProgress)+prog.Count(store.ItemJudging) != 0 {
		t.Fatalf("after Ctrl-C: run %s, progress %+v", run.Status, prog.ByStatus)
	}

	r := c.run("run", "--resume", "1", "slow.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, `Resuming run 1`) || !strings.Contains(r.stdout, "All 1 gates passed") {
		t.Fatalf("resume: %s", r)
	}
	run, _ = st.Run(ctx, 1)
	prog, _ = st.RunProgress(ctx, 1)
	if run.Status != store.RunFinished || prog.Count(store.ItemCompleted) != 8 {
		t.Errorf("after resume: run %s, progress %+v", run.Status, prog.ByStatus)
	}
	// Resuming a finished run reports it again.
	if r := c.run("run", "--resume", "1"); r.code != 0 || !strings.Contains(r.stderr, "FINISHED already") {
		t.Errorf("resume a finished run: %s", r)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
