package bench_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"tribunal/bench"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestFillCompleted fills a run judged by a panel of two (a one-metric style
// and TaskBench, both 0–100; which weighs three metrics and asks for violations) and
// checks what the engine would have written: statuses, each judge's score
// rows, the item's score as the mean of the overalls, costs and violations.
func TestFillCompleted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		runID := panelRun(t, st, 30)
		n, err := bench.FillCompleted(ctx, st, runID)
		if err != nil {
			t.Fatal(err)
		}
		if n != 60 {
			t.Fatalf("filled %d items, want 60", n)
		}
		page, err := st.RunItems(ctx, runID, store.ItemFilter{PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		judges, err := st.RunJudges(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		var failed, violations int
		for _, it := range page.Items {
			if it.Status == store.ItemFailed {
				failed++
				if it.Score != nil {
					t.Errorf("failed item %d has score %v", it.ID, *it.Score)
				}
				continue
			}
			if it.Status != store.ItemCompleted || it.Response == nil || *it.Response == "" {
				t.Fatalf("item %d: status %s, response %v", it.ID, it.Status, it.Response)
			}
			checkScores(t, st, it.ID, it.Score, judges)
			if priced := it.Model == "a"; (it.CostUSD != nil) != priced || it.JudgeCostSource != store.CostPriceTable {
				t.Errorf("item %d of %s: cost %v, judges' cost from %q", it.ID, it.Model, it.CostUSD, it.JudgeCostSource)
			}
			vs, err := st.ItemViolations(ctx, it.ID)
			if err != nil {
				t.Fatal(err)
			}
			violations += len(vs)
		}
		if failed == 0 || failed > 5 {
			t.Errorf("%d of 60 items failed, want a few", failed)
		}
		if violations == 0 {
			t.Error("no violations, though TaskBench asks for them")
		}
		if again, err := bench.FillCompleted(ctx, st, runID); err != nil || again != 0 {
			t.Errorf("a second fill wrote %d items (%v), want 0", again, err)
		}
	})
}

// checkScores checks one item's score rows: every metric of every judge,
// each judge's overall its weighted mean, and the item's score their mean.
func checkScores(t *testing.T, st *store.Store, itemID int64, score *float64, judges []store.RunJudge) {
	t.Helper()
	rows, err := st.ItemScores(context.Background(), itemID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Judge+"/"+r.Metric] = r.Score
	}
	var mean float64
	for _, j := range judges {
		var sum, weights float64
		for _, m := range j.Metrics {
			v, ok := got[j.Name+"/"+m.Name]
			if !ok || v < float64(j.ScaleMin) || v > float64(j.ScaleMax) {
				t.Fatalf("item %d: %s %s = %v (%v), scale %d–%d", itemID, j.Name, m.Name, v, ok, j.ScaleMin, j.ScaleMax)
			}
			sum, weights = sum+m.Weight*v, weights+m.Weight
		}
		overall := got[j.Name+"/score"]
		if len(j.Metrics) > 1 && math.Abs(overall-sum/weights) > 1e-9 {
			t.Errorf("item %d: %s overall %v, want %v", itemID, j.Name, overall, sum/weights)
		}
		mean += overall / float64(len(judges))
	}
	if score == nil || math.Abs(*score-mean) > 1e-9 {
		t.Errorf("item %d: score %v, want %v", itemID, score, mean)
	}
}

// panelRun creates a run of tasks × 2 priced models judged by a panel of two.
func panelRun(t *testing.T, st *store.Store, tasks int) int64 {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9",
		Prices: []store.ProviderPrice{{Model: "a", InputPerMTok: 1, OutputPerMTok: 2}, {Model: "j", InputPerMTok: 3, OutputPerMTok: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	ins := make([]store.TaskInput, tasks)
	refs := make([]store.TaskRef, tasks)
	for i := range ins {
		ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("t%03d", i), Category: fmt.Sprintf("c%d", i%3), Question: "q"}
		refs[i] = store.TaskRef{Key: ins[i].TaskKey}
	}
	if err := st.CreateTasks(ctx, ins); err != nil {
		t.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	single, err := st.CreateStyle(ctx, store.StyleInput{Name: "single (0–100)", ScaleMin: 0, ScaleMax: 100})
	if err != nil {
		t.Fatal(err)
	}
	styles, err := st.Styles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var judgeIDs []int64
	for _, s := range styles {
		if s.ID == single.ID || s.Name == store.TaskBenchStyleName {
			j, err := st.CreateJudge(ctx, store.JudgeInput{Name: s.Name, ProviderID: p.ID, Model: "j", StyleID: s.ID})
			if err != nil {
				t.Fatal(err)
			}
			judgeIDs = append(judgeIDs, j.ID)
		}
	}
	if len(judgeIDs) != 2 {
		t.Fatalf("judges of styles %d: %v", single.ID, judgeIDs)
	}
	run, err := st.CreateRun(ctx, store.RunInput{JudgeIDs: judgeIDs, CollectionIDs: []int64{col.ID},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "a"}, {ProviderID: p.ID, Model: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	return run.ID
}
