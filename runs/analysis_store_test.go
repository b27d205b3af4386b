package runs

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// The engine that ends a run stores its statistics (StoreEnded as its
// RunEndedFunc, as the server wires it): the run's first analysis in any
// process reads them, equal to computing them now; a grade makes them stale,
// and the next analysis computes them again with the grade and stores that.
func TestEngineStoresEndedRunAnalysis(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ended := make(chan error, 1)
		cfg := engine.Config{RunEndedFunc: func(ctx context.Context, runID int64, counts store.Progress) error {
			err := StoreEnded(ctx, st, runID, counts)
			ended <- err
			return err
		}}
		b := newBenchConfig(t, st, MinScored, nil, cfg, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 7, "reasoning": "fixed"}`}
			}
			return llmtest.Reply{Content: "an answer"}
		})
		run := b.run(t, store.RunInput{Repeats: 2}, "m1", "m2")
		select {
		case err := <-ended:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the engine ended the run without calling RunEndedFunc")
		}
		stamp := currentAnalysisStamp(t, st, run)
		body, err := st.AnalysisSnapshot(ctx, run.ID, stamp)
		if err != nil || body == nil {
			t.Fatalf("no analysis stored for the ended run's counts and grades (%v)", err)
		}
		stored, found, err := storedAnalysis(ctx, st, run.ID, stamp)
		if err != nil || !found {
			t.Fatalf("stored analysis not read back: found %v, %v", found, err)
		}
		now, err := analyze(ctx, st, run)
		if err != nil {
			t.Fatal(err)
		}
		// Equal to the last bits but for float sums, whose order a map's
		// iteration picks.
		if sj, nj := asJSON(t, stored), asJSON(t, now); !nearlyEqual(sj, nj) {
			t.Fatalf("stored analysis differs from computing it now:\nstored %v\nnow    %v", sj, nj)
		}
		// Marked, so that reading the stored analysis shows.
		var snap analysisSnapshot
		if err := json.Unmarshal(body, &snap); err != nil || len(snap.Report.Judges) != 1 {
			t.Fatalf("snapshot %s: %v", body, err)
		}
		snap.Report.Judges[0].Version = "read from the snapshot"
		marked, _ := json.Marshal(snap)
		if err := st.SaveAnalysisSnapshot(ctx, run.ID, stamp, marked); err != nil {
			t.Fatal(err)
		}
		other := New(st, nil) // another process: nothing in memory
		a, fresh, ok := analysisOfRun(t, other, run, false)
		if !fresh || !ok || a.Report.Judges[0].Version != "read from the snapshot" {
			t.Fatalf("first view: fresh %v ok %v judges %+v; want the stored analysis", fresh, ok, a.Report.Judges)
		}

		page, err := st.RunItems(ctx, run.ID, store.ItemFilter{})
		if err != nil || len(page.Items) == 0 {
			t.Fatalf("items %+v, %v", page.Items, err)
		}
		if _, err := st.SetGrade(ctx, page.Items[0].ID, store.GradeInput{Grade: store.GradeCorrect}); err != nil {
			t.Fatal(err)
		}
		if _, fresh, _ := analysisOfRun(t, other, run, false); fresh {
			t.Fatal("the analysis stored before the grade is still fresh")
		}
		a, fresh, ok = analysisOfRun(t, other, run, true)
		if !fresh || !ok || a.Report.Judges[0].Version == "read from the snapshot" {
			t.Fatalf("after the grade: fresh %v ok %v judges %+v; want them computed again", fresh, ok, a.Report.Judges)
		}
		if h := a.Agreement.Judges[0].Human; h == nil || h.N != 1 {
			t.Errorf("human agreement after one grade %+v, want n 1", h)
		}
		if body, err := st.AnalysisSnapshot(ctx, run.ID, currentAnalysisStamp(t, st, run)); err != nil || body == nil {
			t.Errorf("no analysis stored for the new grade stamp (%v)", err)
		}
	})
}

func currentAnalysisStamp(t *testing.T, st *store.Store, run *store.Run) string {
	t.Helper()
	ctx := context.Background()
	counts, err := st.RunProgress(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	grades, err := st.GradeStamp(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return analysisStamp(run, progressOf(counts), grades)
}

func analysisOfRun(t *testing.T, svc *Service, run *store.Run, compute bool) (a Analysis, fresh, ok bool) {
	t.Helper()
	ctx := context.Background()
	prog, err := svc.Progress(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	a, fresh, ok, err = svc.Analysis(ctx, run, prog, compute)
	if err != nil {
		t.Fatal(err)
	}
	return a, fresh, ok
}

// asJSON is a's stored form decoded into plain values.
func asJSON(t *testing.T, a Analysis) any {
	t.Helper()
	b, err := json.Marshal(analysisSnapshot{Analysis: a, Distributions: a.Report.Distributions})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// nearlyEqual compares decoded JSON values, numbers within a relative 1e-12.
func nearlyEqual(a, b any) bool {
	switch a := a.(type) {
	case float64:
		b, ok := b.(float64)
		return ok && math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !nearlyEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if !nearlyEqual(v, b[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// While this process's engine stores an ended run's statistics, the watch
// evaluator's Snapshot waits for them instead of counting and scanning the
// run beside the engine's scans, then reads the summary; a caller that
// gives up while waiting gets its context's error.
func TestSnapshotWaitsForTheEngineStoring(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "prov", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateTasks(ctx, []store.TaskInput{{TaskKey: "t1", Category: "c", Question: "q1"}, {TaskKey: "t2", Category: "c", Question: "q2"}}); err != nil {
			t.Fatal(err)
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"m"}, []string{"t1", "t2"},
			[]storetest.ItemResult{{Model: "m", Task: "t1", Overall: 1}, {Model: "m", Task: "t2", Overall: 0.5}})

		// The engine's counts, which Snapshot must take rather than count
		// the items again: they differ from the run's two, so the summary
		// tells which it read.
		engine := store.Progress{Total: 7, ByStatus: map[store.ItemStatus]int64{store.ItemCompleted: 7}}
		stored, done := ending.start(st, run.ID, engine)
		gaveUp, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := Snapshot(gaveUp, st, run); err != context.Canceled {
			t.Errorf("a cancelled wait: %v, want %v", err, context.Canceled)
		}
		type result struct {
			sum      *Summary
			err      error
			released bool
		}
		var released atomic.Bool
		got := make(chan result, 1)
		go func() {
			sum, err := Snapshot(ctx, st, run)
			got <- result{sum, err, released.Load()}
		}()
		select {
		case r := <-got:
			t.Fatalf("Snapshot returned (%v) while the engine was storing the run's summary", r.err)
		case <-time.After(50 * time.Millisecond): // time enough for a Snapshot that did not wait to return
		}
		released.Store(true)
		stored()
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !r.released {
			t.Error("Snapshot returned while the engine was storing the run's summary")
		}
		if len(r.sum.Models) != 1 || r.sum.Models[0].Overall == nil {
			t.Errorf("summary after the wait: %+v", r.sum.Models)
		}
		if r.sum.Best.Total != 7 {
			t.Errorf("summary after the wait is for %d items, want the engine's 7", r.sum.Best.Total)
		}
		// While the engine stores the statistics, after the summary.
		if sum, err := Snapshot(ctx, st, run); err != nil || sum.Best.Total != 7 {
			t.Errorf("summary while the statistics are stored: %v, %+v", err, sum)
		}
		done()
		if _, ok, err := ending.wait(ctx, st, run.ID); ok || err != nil {
			t.Errorf("a run no longer being stored: %v, %v", ok, err)
		}
		if sum, err := Snapshot(ctx, st, run); err != nil || sum.Best.Total != 2 {
			t.Errorf("summary once stored: %v, %+v", err, sum)
		}
	})
}
