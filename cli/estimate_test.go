package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/runfile"
	"tribunal/runs"
	"tribunal/store"
)

// tableCounts is the number of rows of every table of the SQLite file.
func tableCounts(t *testing.T, dataDir string) map[string]int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "tribunal.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		var c int64
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}

// TestRunEstimate: run --estimate prints the run's estimate and leaves every
// table as it was, though the file defines a provider, tasks, a style and a
// judge; its figures are those POST /api/runs/estimate gives for the run once
// the file's things exist.
func TestRunEstimate(t *testing.T) {
	p := newInProcess(t)
	fake := llmtest.New(t, llmtest.DefaultReply)
	ctx := context.Background()
	st := p.store()
	if _, err := st.UpsertTasks(ctx, store.ImportInput{Collection: "Math basics", Tasks: []store.TaskInput{
		{TaskKey: "m1", Category: "math", Question: "What is 1+1?"}}}); err != nil {
		t.Fatal(err)
	}
	path := p.write("estimate.yaml", strings.ReplaceAll(`name: estimated
providers:
  - name: priced
    base_url: {{URL}}
    prices: [{model: fake-small, input_per_mtok: 1, output_per_mtok: 4}, {model: fake-judge, input_per_mtok: 3, output_per_mtok: 15}]
tasks:
  - {task_id: e1, question: "Write a haiku about the sea, in English, without rhyme."}
  - {task_id: e2, turns: ["Name a prime.", "Name a bigger one."]}
collections: [Math basics]
targets:
  - {provider: priced, model: fake-small, settings: {max_tokens: 200}}
  - {provider: priced, model: unpriced}
judge:
  provider: priced
  model: fake-judge
  style: {name: Estimate style, scale_min: 1, scale_max: 5, metrics: [accuracy]}
repeats: 2
max_cost_usd: 3
`, "{{URL}}", fake.URL))
	before := tableCounts(t, p.dataDir)
	code, out, errOut := p.main("run", "--estimate", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if after := tableCounts(t, p.dataDir); !maps.Equal(before, after) {
		t.Errorf("--estimate changed the database:\nbefore %v\nafter  %v", before, after)
	}
	if fake.CallCount() != 0 {
		t.Errorf("--estimate called the model %d times", fake.CallCount())
	}
	if !strings.Contains(errOut, "nothing was saved or started") || strings.Contains(errOut, "created") {
		t.Errorf("stderr:\n%s", errOut)
	}

	// The same run through the API, once the file's things are saved.
	f, err := runfile.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard}
	in, err := e.prepareRun(ctx, st, nil, f, "", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if in.MaxCostUSD == nil || *in.MaxCostUSD != 3 {
		t.Errorf("the file's max_cost_usd does not reach the run: %v", in.MaxCostUSD)
	}
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	body, _ := json.Marshal(in)
	res, err := http.Post(srv.URL+"/api/runs/estimate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var api runs.Estimate
	if err := json.NewDecoder(res.Body).Decode(&api); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/runs/estimate: %d %v", res.StatusCode, err)
	}
	if api.Tasks != 3 || len(api.Targets) != 2 || len(api.Judges) != 1 || !api.Partial || api.TotalUSD.Expected <= 0 {
		t.Fatalf("API estimate: %+v", api)
	}
	var want bytes.Buffer
	(&env{stdout: &want}).printEstimate(&api)
	if out != want.String() {
		t.Errorf("--estimate printed other figures than the API's:\ncli:\n%s\napi:\n%s", out, want.String())
	}
	for _, w := range []string{"fake-small", "unpriced", "no price for this model", "lower bound"} {
		if !strings.Contains(out, w) {
			t.Errorf("estimate lacks %q:\n%s", w, out)
		}
	}

	if code, _, errOut := p.main("run", "--estimate", "--resume", "1"); code != ExitUsage || !strings.Contains(errOut, "--estimate") {
		t.Errorf("--estimate with --resume: exit %d\n%s", code, errOut)
	}
}

// run --estimate with models: auto on a use case without runs estimates the
// models the run would benchmark (suggested from the providers' lists), as
// run does, rather than refusing for want of runs.
func TestRunEstimateModelsAutoSuggests(t *testing.T) {
	p := newInProcess(t)
	fake := llmtest.New(t, llmtest.DefaultReply)
	path := p.write("auto.yaml", strings.ReplaceAll(`name: auto estimate
providers:
  - name: prov
    base_url: {{URL}}
tasks:
  - {task_id: a1, question: "Summarise the ticket."}
usecase: support
models: auto
judge: {provider: prov, model: fake-judge}
`, "{{URL}}", fake.URL))
	code, out, errOut := p.main("run", "--estimate", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "fake-small") {
		t.Errorf("the estimate lacks the suggested models:\n%s", out)
	}
}

// A run file's target version: reaches the run's target; it names one
// model, so models: refuses it.
func TestRunFileTargetVersion(t *testing.T) {
	p := newInProcess(t)
	ctx := context.Background()
	st := p.store()
	file := `name: versioned
providers:
  - name: prov
    base_url: http://127.0.0.1:9
tasks:
  - {task_id: v1, question: "Hi"}
targets:
  - {provider: prov, model: m, version: "2024-08-06"}
judge: {provider: prov, model: j}
`
	f, err := runfile.Parse("v.yaml", []byte(file), ".", nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := (&env{stdout: io.Discard, stderr: io.Discard}).prepareRun(ctx, st, nil, f, "", nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Targets) != 1 || in.Targets[0].Version != "2024-08-06" {
		t.Errorf("targets %+v, want version 2024-08-06", in.Targets)
	}
	bad := strings.Replace(file, "model: m,", "models: [m, n],", 1)
	if _, err := runfile.Parse("v.yaml", []byte(bad), ".", nil); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("version with models: %v", err)
	}
}
