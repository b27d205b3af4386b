package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tribunal/runs"
	"tribunal/secret"
	"tribunal/store"
	"tribunal/store/storetest"
)

// fixedSupportRuns stores a finished run on use case "support" where "good"
// scores 90 at $10 per 1k tasks and "cheap" 80 at $1.
func fixedSupportRuns(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "prov", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	tasks := []string{"s1", "s2", "s3"}
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
	fixedSupportRuns(t, storetest.SQLiteIn(t, p.dataDir, box))
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
