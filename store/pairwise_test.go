package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"tribunal/rubric"
	"tribunal/store"
	"tribunal/store/storetest"
)

// answerItems benchmarks the run's NEW items of the first `tasks` tasks:
// each completes without judging, except those fail says to fail.
func answerItems(t *testing.T, st *store.Store, run *store.Run, tasks int, fail func(store.Item) bool) {
	t.Helper()
	ctx := context.Background()
	items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress,
		WorkerID: "bench", Lease: time.Minute, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	taskIDs := map[int64]bool{}
	for _, it := range items {
		if !taskIDs[it.RunTaskID] && len(taskIDs) == tasks {
			// Leave this task's items NEW: hand the claim back.
			if err := st.RetryItem(ctx, &it, store.ItemNew, time.Now().UTC(), "", false); err != nil {
				t.Fatal(err)
			}
			continue
		}
		taskIDs[it.RunTaskID] = true
		if fail != nil && fail(it) {
			err = st.FailItem(ctx, &it, store.PhaseBenchmarking, "boom", true)
		} else {
			_, err = st.CompleteBenchmark(ctx, &it, store.BenchmarkResult{Request: "{}", Response: "answer"}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestComparisonLeaseGuardsResultWrite: comparisons are made once for the
// pairs whose answers completed, a claim is a lease the rescuer frees when
// it runs out, and only the current claim can write the outcome, once.
func TestComparisonLeaseGuardsResultWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 2, 3)
		last := run.Targets[2].ID
		var failedTask int64
		answerItems(t, st, run, 2, func(it store.Item) bool {
			if it.RunTargetID == last && failedTask == 0 {
				failedTask = it.RunTaskID
				return true
			}
			return false
		})
		n, err := st.CreateComparisons(ctx, run.ID)
		if err != nil || n != 4 { // 3 pairs on one task, 1 on the task where the last target failed
			t.Fatalf("created %d comparisons, %v; want 4", n, err)
		}
		if n, err := st.CreateComparisons(ctx, run.ID); err != nil || n != 0 {
			t.Fatalf("creating again added %d, %v", n, err)
		}
		all, err := st.RunComparisons(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range all {
			if c.TargetA >= c.TargetB || c.Status != store.ComparisonNew || c.RunJudgeID != run.Judges[0].ID ||
				(c.RunTaskID == failedTask && c.TargetB == last) {
				t.Errorf("comparison %+v", c)
			}
		}

		judge := run.Judges[0].ID
		claim := func(worker string, lease time.Duration) store.Comparison {
			t.Helper()
			cs, err := st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: judge, WorkerID: worker, Lease: lease, Limit: 1})
			if err != nil || len(cs) != 1 {
				t.Fatalf("claim: %+v %v", cs, err)
			}
			return cs[0]
		}
		dead := claim("dead", -time.Second) // a lease that has already run out
		if dead.Status != store.ComparisonJudging || dead.Attempts != 1 || dead.ID != all[0].ID {
			t.Fatalf("claimed %+v", dead)
		}
		if n, err := st.RescueExpired(ctx); err != nil || n != 1 {
			t.Fatalf("rescued %d, %v; want 1", n, err)
		}
		alive := claim("alive", time.Minute)
		if alive.ID != dead.ID || alive.Attempts != 2 {
			t.Fatalf("re-claimed %+v, want comparison %d at attempt 2", alive, dead.ID)
		}
		ab := store.PairHalf{Pick: rubric.PickA, Reasoning: "A is right", Raw: `{"winner":"A"}`}
		result := store.PairResult{AB: ab, BA: store.PairHalf{Pick: rubric.PickB, Reasoning: "B is right"}, CostUSD: 0.5}
		if err := st.CompleteComparison(ctx, &dead, result); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the worker whose lease expired wrote its result: %v", err)
		}
		if err := st.RenewComparisonLease(ctx, &dead, time.Minute); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the worker whose lease expired renewed it: %v", err)
		}
		if err := st.RenewComparisonLease(ctx, &alive, time.Minute); err != nil {
			t.Fatal(err)
		}
		// The second order fails: the first order's pick stays for the next attempt.
		if err := st.RetryComparison(ctx, &alive, store.ComparisonRetry{At: time.Now().UTC().Add(-time.Millisecond), Reason: "429",
			Failed: true, AB: &ab, CostUSD: 0.25}); err != nil {
			t.Fatal(err)
		}
		again := claim("alive", time.Minute)
		if again.ID != dead.ID || again.Attempts != 3 || again.Failures != 1 || again.VerdictAB != rubric.PickA ||
			again.ReasoningAB != "A is right" || again.RawAB != ab.Raw {
			t.Fatalf("after the retry: %+v", again)
		}
		if err := st.CompleteComparison(ctx, &alive, result); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("an earlier claim of the same worker wrote its result: %v", err)
		}
		if err := st.CompleteComparison(ctx, &again, result); err != nil {
			t.Fatal(err)
		}
		if err := st.CompleteComparison(ctx, &again, result); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("a result was written twice: %v", err)
		}
		all, _ = st.RunComparisons(ctx, run.ID)
		got := all[0]
		if got.Status != store.ComparisonDone || got.Winner != rubric.PickTie || !got.Flipped || got.VerdictAB != rubric.PickA ||
			got.VerdictBA != rubric.PickB || got.WorkerID != "" || got.LeaseUntil != nil || math.Abs(got.CostUSD-0.75) > 1e-12 {
			t.Errorf("done comparison %+v", got)
		}

		// A paused run's comparisons are not claimed.
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunPaused, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		if cs, err := st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: judge, WorkerID: "w", Lease: time.Minute, Limit: 5}); err != nil || len(cs) != 0 {
			t.Fatalf("claimed %d comparisons of a paused run, %v", len(cs), err)
		}
		c, err := st.ComparisonProgress(ctx, run.ID)
		if want := (store.ComparisonCounts{Total: 4, New: 3, Done: 1, Flipped: 1, CostUSD: 0.75}); err != nil || c != want {
			t.Errorf("progress %+v, %v; want %+v", c, err, want)
		}
	})
}

// TestComparisonSlotsShareItemLimit: a (provider, model)'s concurrency
// limit counts items and comparisons in flight together.
func TestComparisonSlotsShareItemLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 3)
		answerItems(t, st, run, 2, nil) // the third task's items stay NEW
		if n, err := st.CreateComparisons(ctx, run.ID); err != nil || n != 6 {
			t.Fatalf("created %d, %v; want 6", n, err)
		}
		const slot = "1:judge"
		cs, err := st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: run.Judges[0].ID, WorkerID: "w",
			Lease: time.Minute, Limit: 10, SlotKey: slot, SlotLimit: 2})
		if err != nil || len(cs) != 2 {
			t.Fatalf("claimed %d comparisons, %v; want the slot limit 2", len(cs), err)
		}
		items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
			Lease: time.Minute, Limit: 10, SlotKey: slot, SlotLimit: 3})
		if err != nil || len(items) != 1 {
			t.Fatalf("claimed %d items, %v; want 1 (3 minus 2 comparisons in flight)", len(items), err)
		}
		cs, err = st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: run.Judges[0].ID, WorkerID: "w",
			Lease: time.Minute, Limit: 10, SlotKey: slot, SlotLimit: 3})
		if err != nil || len(cs) != 0 {
			t.Fatalf("claimed %d comparisons over the limit, %v", len(cs), err)
		}
		// Another slot is not held back.
		cs, err = st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: run.Judges[0].ID, WorkerID: "w",
			Lease: time.Minute, Limit: 10, SlotKey: "2:other", SlotLimit: 3})
		if err != nil || len(cs) != 3 {
			t.Fatalf("claimed %d comparisons on a free slot, %v; want 3", len(cs), err)
		}
	})
}

func TestPairwiseLeaderboard(t *testing.T) {
	targets := []store.RunTarget{{ID: 10, ProviderName: "p", Model: "weak"}, {ID: 11, ProviderName: "p", Model: "strong"},
		{ID: 12, ProviderName: "p", Model: "unjudged"}}
	judges := []store.RunJudge{{ID: 1, Name: "fair"}, {ID: 2, Name: "biased"}, {ID: 3, Name: "idle"}}
	tallies := []store.PairTally{
		{TargetA: 10, TargetB: 11, RunJudgeID: 1, Winner: rubric.PickB, N: 6},
		{TargetA: 10, TargetB: 11, RunJudgeID: 1, Winner: rubric.PickA, N: 1},
		{TargetA: 10, TargetB: 11, RunJudgeID: 2, Winner: rubric.PickTie, Flipped: true, N: 3},
		{TargetA: 10, TargetB: 11, RunJudgeID: 2, Winner: rubric.PickB, N: 1},
		{TargetA: 10, TargetB: 99, RunJudgeID: 1, Winner: rubric.PickA, N: 5}, // an unknown target is skipped
	}
	r := store.PairwiseLeaderboard(targets, judges, tallies, 7)
	type row struct {
		Model              string
		Wins, Losses, Ties int
		N                  int
	}
	var got []row
	for _, e := range r.Leaderboard {
		got = append(got, row{e.Model, e.Wins, e.Losses, e.Ties, e.N})
		if e.Lo > e.Rating || e.Hi < e.Rating {
			t.Errorf("%s: rating %g outside its interval [%g, %g]", e.Model, e.Rating, e.Lo, e.Hi)
		}
	}
	want := []row{{"strong", 7, 1, 3, 11}, {"unjudged", 0, 0, 0, 0}, {"weak", 1, 7, 3, 11}}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("leaderboard %+v, want %+v", got, want)
	}
	if r.Leaderboard[0].Rating <= 1000 || r.Leaderboard[2].Rating >= 1000 {
		t.Errorf("ratings %+v", r.Leaderboard)
	}
	rate := func(f *float64) float64 {
		if f == nil {
			return -1
		}
		return *f
	}
	gotJudges := map[string][3]float64{}
	for _, j := range r.Judges {
		gotJudges[j.Judge] = [3]float64{float64(j.Comparisons), float64(j.Flipped), rate(j.FlipRate)}
	}
	wantJudges := map[string][3]float64{"fair": {7, 0, 0}, "biased": {4, 3, 0.75}, "idle": {0, 0, -1}}
	if !reflect.DeepEqual(wantJudges, gotJudges) {
		t.Errorf("judges %v, want %v", gotJudges, wantJudges)
	}
}

// TestClaimComparisonsOnce: workers racing for a run's comparisons each
// get different ones, and every comparison is claimed exactly once.
func TestClaimComparisonsOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 10, 4)
		answerItems(t, st, run, 10, nil)
		if n, err := st.CreateComparisons(ctx, run.ID); err != nil || n != 60 {
			t.Fatalf("created %d, %v; want 60", n, err)
		}
		var mu sync.Mutex
		seen := map[int64]int{}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for {
					cs, err := st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: run.Judges[0].ID,
						WorkerID: fmt.Sprintf("w%d", w), Lease: time.Minute, Limit: 3})
					if err != nil {
						t.Error(err)
						return
					}
					if len(cs) == 0 {
						return
					}
					mu.Lock()
					for _, c := range cs {
						seen[c.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 60 {
			t.Fatalf("claimed %d distinct comparisons, want 60", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("comparison %d claimed %d times", id, n)
			}
		}
	})
}
