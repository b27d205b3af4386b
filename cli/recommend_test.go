package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/secret"
	"tribunal/store"
	"tribunal/store/storetest"
)

// fixedSupportRuns stores provider "prov" at baseURL and a finished run on
// use case "support" (n tasks, in collection "run support run") where
// "good" scores 90 at $10 per 1k tasks and "cheap" 80 at $1.
func fixedSupportRuns(t *testing.T, st *store.Store, baseURL string, n int) {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "prov", BaseURL: baseURL})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for i := range n {
		tasks = append(tasks, fmt.Sprintf("s%d", i))
	}
	for _, k := range tasks {
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: k, Category: "billing", Question: "q " + k, UseCase: "support"}); err != nil {
			t.Fatal(err)
		}
	}
	usd := func(v float64) *float64 { return &v }
	var res []storetest.ItemResult
	for _, k := range tasks {
		res = append(res,
			storetest.ItemResult{Model: "good", Task: k, Overall: 0.9, TimeMs: 800, CostUSD: usd(0.01), TokensPerS: 40},
			storetest.ItemResult{Model: "cheap", Task: k, Overall: 0.8, TimeMs: 300, CostUSD: usd(0.001), TokensPerS: 90})
	}
	storetest.FixedRun(t, st, "support run", p.ID, []string{"good", "cheap"}, tasks, res)
}

// tribunal recommend prints the same ranking as the API, as a table or JSON,
// and refuses a bad question with exit 2.
func TestRecommendCommand(t *testing.T) {
	p := newInProcess(t)
	box, err := secret.NewBox(testKey)
	if err != nil {
		t.Fatal(err)
	}
	fixedSupportRuns(t, storetest.SQLiteIn(t, p.dataDir, box), "http://127.0.0.1:9", 3)
	code, out, errOut := p.main("recommend", "--usecase", "support", "--min-items", "3", "--cost-priority", "high")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "#") || !strings.Contains(lines[1], "prov / good") || !strings.Contains(lines[1], "best overall") ||
		!strings.Contains(lines[1], "$10.00") || !strings.Contains(lines[2], "prov / cheap") || !strings.Contains(lines[2], "pareto") {
		t.Errorf("table:\n%s", out)
	}
	if !strings.Contains(errOut, "2 models from 1 finished run; cost priority high") {
		t.Errorf("stderr %q", errOut)
	}
	code, out, errOut = p.main("recommend", "--usecase", "support", "--min-items", "3", "--budget-per-1k", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rec runs.Recommendation
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Models) != 2 || rec.Models[0].Model != "cheap" || !rec.Models[0].Eligible || rec.Models[1].Eligible ||
		rec.Models[1].Reason != "over budget: $10.00 per 1k tasks (budget $2.00)" {
		t.Errorf("json %+v", rec.Models)
	}
	for _, bad := range [][]string{{"recommend"}, {"recommend", "--usecase", "nobody"}, {"recommend", "--usecase", "support", "--budget-per-1k", "lots"}} {
		if code, _, errOut := p.main(bad...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", bad, code, errOut)
		}
	}
}

// A run file's models: auto benchmarks the models recommended for its use
// case; with nothing that names the use case it stops before running.
func TestRunFileModelsAuto(t *testing.T) {
	p := newInProcess(t)
	box, err := secret.NewBox(testKey)
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.New(t, nil)
	st := storetest.SQLiteIn(t, p.dataDir, box)
	fixedSupportRuns(t, st, fake.URL, runs.DefaultMinItems)
	file := func(usecase string) string {
		return p.write(usecase+".yaml", `name: auto
providers:
  - name: prov
collections: ["run support run"]
usecase: `+usecase+`
models: auto
judge: {provider: prov, model: fake-judge}
`)
	}
	code, out, errOut := p.main("run", file("support"), "--progress", "none")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "models: auto: prov / good — best overall") || !strings.Contains(errOut, "models: auto: prov / cheap — ") {
		t.Errorf("stderr does not say what auto picked:\n%s", errOut)
	}
	run, err := st.Run(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, tg := range run.Targets {
		models = append(models, tg.Model)
	}
	if strings.Join(models, ",") != "good,cheap" || run.Status != store.RunFinished {
		t.Errorf("run %q (%s) benchmarked %v, want good, cheap", run.Name, run.Status, models)
	}
	code, _, errOut = p.main("run", file("nowhere"), "--progress", "none")
	if code != ExitUsage || !strings.Contains(errOut, `auto: use case "nowhere" not found: no task names it`) || !strings.Contains(errOut, "nowhere.yaml:6") {
		t.Errorf("unknown use case: exit %d\n%s", code, errOut)
	}
}
