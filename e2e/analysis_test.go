package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

// analysisTasks × 2 models per run: thousands of items, as the compare
// view and the charts must stay fast on.
const analysisTasks = 1500

// seedScoredRun creates a finished run of two models over the collection,
// scoring each item with a check (no engine: the scores are set directly
// through the store's claim and completion calls).
func seedScoredRun(t *testing.T, st *store.Store, providerID, collectionID int64, name string, strong float64) int64 {
	t.Helper()
	ctx := context.Background()
	run, err := st.CreateRun(ctx, store.RunInput{Name: name, Metrics: []string{"check_contains"}, CollectionIDs: []int64{collectionID},
		Targets: []store.ModelRef{{ProviderID: providerID, Model: "alpha"}, {ProviderID: providerID, Model: "beta"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending); err != nil {
		t.Fatal(err)
	}
	alpha := run.Targets[0].ID
	for {
		items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "seed", Lease: time.Minute, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		for i := range items {
			it := &items[i]
			// alpha passes `strong` of the tasks, beta a third; answers differ by a word.
			pass := float64(it.RunTaskID%100) < strong*100
			answer := "the answer is blue"
			if it.RunTargetID != alpha {
				pass = it.RunTaskID%3 == 0
				answer = "the answer is red"
			}
			score := 0.0
			if pass {
				score = 1
			}
			tm := int64(100 + it.RunTaskID%50)
			if _, err := st.CompleteBenchmark(ctx, it, store.BenchmarkResult{Request: "{}", Response: answer, TimeMs: tm, CompletionTokens: 5,
				Scores: []store.Score{{Source: "check:contains", Metric: "check_contains", Score: score}}}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunFinished, store.RunRunning); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// TestCompareAndChartsInBrowser opens the run page and the compare view of
// two 3,000-item runs in Chromium and checks the charts, verdicts and
// filters render, reporting the server time of each page.
func TestCompareAndChartsInBrowser(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	ins := make([]store.TaskInput, analysisTasks)
	refs := make([]store.TaskRef, analysisTasks)
	for i := range ins {
		ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("task-%04d", i), Category: fmt.Sprintf("cat-%d", i%4), Question: fmt.Sprintf("Which colour, %d?", i),
			Reference: "blue", Checks: []store.Check{{Type: "contains"}}}
		refs[i] = store.TaskRef{Key: ins[i].TaskKey}
	}
	if err := st.CreateTasks(ctx, ins); err != nil {
		t.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "colours", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	before := seedScoredRun(t, st, p.ID, col.ID, "before", 0.9)
	after := seedScoredRun(t, st, p.ID, col.ID, "after", 0.8)

	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler)) // not run: the runs are finished
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	b := newBrowser(t, srv.URL)

	start := time.Now()
	b.open(fmt.Sprintf("/runs/%d", before))
	b.waitFor("run charts", `document.querySelectorAll('[data-testid=run-charts] svg').length >= 3`, 20*time.Second)
	t.Logf("run page of %d items loaded in %s (browser)", 2*analysisTasks, time.Since(start).Round(time.Millisecond))
	b.screenshot("/tmp/e2e-run-analysis.png")
	verdict := mustEval[string](b, "run verdict", `document.querySelector('[data-testid=run-verdicts]').innerText`)
	if !strings.Contains(verdict, "alpha (before) beats beta (before)") {
		t.Errorf("run verdict: %q", verdict)
	}
	ci := mustEval[string](b, "score CI", `document.querySelector('[data-testid=score-ci]').innerText`)
	if !strings.Contains(ci, "n=1500") {
		t.Errorf("score CI cell %q", ci)
	}

	b.open(fmt.Sprintf("/compare?run_ids=%d,%d&baseline=%d", before, after, before))
	b.waitFor("compare charts", `document.querySelectorAll('[data-testid=compare-charts] svg').length >= 2`, 20*time.Second)
	serverTime := mustEval[string](b, "server time", `document.querySelector('[data-testid=server-time]').innerText`)
	t.Logf("compare page of 4 models × %d tasks: %s", analysisTasks, serverTime)
	verdicts := mustEval[string](b, "verdicts", `document.querySelector('[data-testid=verdicts]').innerText`)
	if !strings.Contains(verdicts, "alpha (before) beats alpha (after)") {
		t.Errorf("the 90%% → 80%% drop of alpha should be significant: %q", verdicts)
	}
	deltas := mustEval[int](b, "deltas", `document.querySelectorAll('td.delta-down').length`)
	if deltas != 1 {
		t.Errorf("%d entries marked as a significant drop, want 1 (alpha)", deltas)
	}
	// Only regressions: the tasks alpha passed before and fails after.
	b.open(fmt.Sprintf("/compare?run_ids=%d,%d&baseline=%d&only=regressions", before, after, before))
	if sel := mustEval[string](b, "filter", `document.querySelector('[data-testid=compare-only]').value`); sel != "regressions" {
		t.Errorf("the filter shows %q", sel)
	}
	b.waitFor("filtered rows", `document.querySelectorAll('[data-testid=compare-task]').length > 0`, 10*time.Second)
	rows := mustEval[string](b, "first regressed row", `document.querySelector('[data-testid=compare-task]').innerText`)
	if !strings.Contains(strings.ToLower(rows), "regressed") {
		t.Errorf("regression rows: %q", rows)
	}
	b.screenshot("/tmp/e2e-compare.png")
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors: %v", errs)
	}
}
