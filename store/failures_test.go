package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestCallCountsPerPhase: each phase counts its own provider calls; a claim
// handed back unworked, or failed before its call, is no call; the claim
// token (attempts) still counts every claim, so stale writes stay refused.
func TestCallCountsPerPhase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 2, 1)
		claim := func(from, to store.ItemStatus) store.Item {
			t.Helper()
			its, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: from, To: to, WorkerID: "w", Lease: time.Minute, Limit: 1})
			if err != nil || len(its) != 1 {
				t.Fatalf("claim %s: %v %v", from, its, err)
			}
			return its[0]
		}
		it := claim(store.ItemNew, store.ItemInProgress)
		if err := st.RetryItem(ctx, &it, store.ItemNew, time.Now().Add(-time.Second), "interrupted by shutdown", false); err != nil {
			t.Fatal(err)
		}
		it = claim(store.ItemNew, store.ItemInProgress)
		if err := st.RetryItem(ctx, &it, store.ItemNew, time.Now().Add(-time.Second), "HTTP 500", true); err != nil {
			t.Fatal(err)
		}
		it = claim(store.ItemNew, store.ItemInProgress)
		stale := it
		if _, err := st.CompleteBenchmark(ctx, &it, store.BenchmarkResult{Request: "{}", Response: "a", Judged: true}, nil); err != nil {
			t.Fatal(err)
		}
		it = claim(store.ItemWaitingForJudge, store.ItemJudging)
		if _, err := st.CompleteJudging(ctx, &it, store.Verdict{Overall: 5, Last: true}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CompleteBenchmark(ctx, &stale, store.BenchmarkResult{Request: "{}", Response: "again"}, nil); err == nil {
			t.Errorf("a stale claim wrote its result")
		}
		other := claim(store.ItemNew, store.ItemInProgress)
		if _, err := st.CompleteBenchmark(ctx, &other, store.BenchmarkResult{Request: "{}", Response: "b", Judged: true}, nil); err != nil {
			t.Fatal(err)
		}
		other = claim(store.ItemWaitingForJudge, store.ItemJudging)
		if err := st.FailItem(ctx, &other, store.PhaseJudging, "judge j: provider p: the provider was deleted", false); err != nil {
			t.Fatal(err)
		}
		got := map[int64][2]int{}
		for _, v := range items(t, st, run.ID) {
			got[v.ID] = [2]int{v.AnswerAttempts, v.JudgeAttempts}
		}
		if got[it.ID] != [2]int{2, 1} || got[other.ID] != [2]int{1, 0} {
			t.Errorf("answer, judge calls: %v of item %d, %v of item %d; want [2 1] and [1 0]", got[it.ID], it.ID, got[other.ID], other.ID)
		}
	})
}

// TestRunFailuresAndRetryFailed: failures group by phase and the first line
// of the error; retry-failed sends each failed item back to the phase it
// failed in (its target warms up again) and restarts the run, and refuses
// while the run is active.
func TestRunFailuresAndRetryFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 2, 2)
		m0, m1 := run.Targets[0].ID, run.Targets[1].ID
		// m0's warm-up failed: both its items fail in benchmarking.
		if err := st.SetWarmup(ctx, m0, store.WarmupFailed, "warm-up failed after 3 attempt(s): HTTP 503"); err != nil {
			t.Fatal(err)
		}
		if n, err := st.FailTargetItems(ctx, m0, "warm-up failed after 3 attempt(s): HTTP 503"); err != nil || n != 2 {
			t.Fatalf("fail target items: %d %v", n, err)
		}
		// m1's items are answered; the judge's replies are unusable, each differently.
		for i := range 2 {
			its, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, TargetID: m1, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w", Lease: time.Minute, Limit: 1})
			if err != nil || len(its) != 1 {
				t.Fatalf("claim: %v %v", its, err)
			}
			if _, err := st.CompleteBenchmark(ctx, &its[0], store.BenchmarkResult{Request: "{}", Response: "a", Judged: true}, nil); err != nil {
				t.Fatal(err)
			}
			if its, err = st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemWaitingForJudge, To: store.ItemJudging, WorkerID: "w", Lease: time.Minute, Limit: 1}); err != nil || len(its) != 1 {
				t.Fatalf("claim judging: %v %v", its, err)
			}
			reason := fmt.Sprintf("judge j: not valid JSON\nraw judge output: reply %d", i)
			if err := st.FailItem(ctx, &its[0], store.PhaseJudging, reason, true); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.RetryFailed(ctx, run.ID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("retry failed items of a RUNNING run: %v, want a conflict", err)
		}
		if ended, err := st.EndRun(ctx, run.ID, store.RunFailed, "every item failed", nil); err != nil || !ended {
			t.Fatalf("end run: %v %v", ended, err)
		}
		got, err := st.RunFailures(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.FailureGroup{
			{Phase: store.PhaseBenchmarking, Reason: "warm-up failed after 3 attempt(s): HTTP 503", Count: 2},
			{Phase: store.PhaseJudging, Reason: "judge j: not valid JSON", Count: 2},
		}
		if !slices.Equal(got, want) {
			t.Errorf("run failures:\n got %+v\nwant %+v", got, want)
		}

		n, err := st.RetryFailed(ctx, run.ID)
		if err != nil || n != 4 {
			t.Fatalf("retry failed items: %d %v", n, err)
		}
		r, err := st.Run(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.RunRunning || r.Phase != store.PhaseBenchmarking || r.FinishedAt != nil || r.Error != "" {
			t.Errorf("run after retry: %s %s finished %v %q", r.Status, r.Phase, r.FinishedAt, r.Error)
		}
		if r.Targets[0].WarmupStatus != store.WarmupPending || r.Targets[0].WarmupError != "" || r.Targets[1].WarmupStatus != store.WarmupPending {
			t.Errorf("targets after retry: %+v", r.Targets)
		}
		for _, v := range items(t, st, run.ID) {
			wantStatus := store.ItemNew
			if v.Model == "m1" {
				wantStatus = store.ItemWaitingForJudge
			}
			if v.Status != wantStatus || v.FailedPhase != "" {
				t.Errorf("item %d of %s: %s %q, want %s", v.ID, v.Model, v.Status, v.FailedPhase, wantStatus)
			}
		}
		if fs, err := st.RunFailures(ctx, run.ID); err != nil || len(fs) != 0 {
			t.Errorf("failures after retry: %v %v", fs, err)
		}
		if _, err := st.RetryFailed(ctx, run.ID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("retry again while it runs: %v, want a conflict", err)
		}
		if _, err := st.RetryFailed(ctx, 99999); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("retry failed items of no run: %v, want not found", err)
		}
	})
}

// TestRunFailuresCapped: a run that failed for many reasons lists the most
// frequent MaxFailureGroups.
func TestRunFailuresCapped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, store.MaxFailureGroups+5, 1)
		for i := range store.MaxFailureGroups + 5 {
			its, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w", Lease: time.Minute, Limit: 1})
			if err != nil || len(its) != 1 {
				t.Fatalf("claim: %v %v", its, err)
			}
			reason := fmt.Sprintf("HTTP 500: reason %02d", i)
			if i < 3 {
				reason = "HTTP 429: slow down" // the most frequent comes first
			}
			if err := st.FailItem(ctx, &its[0], store.PhaseBenchmarking, reason, true); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.RunFailures(ctx, run.ID)
		if err != nil || len(got) != store.MaxFailureGroups || got[0].Reason != "HTTP 429: slow down" || got[0].Count != 3 || got[1].Count != 1 {
			t.Errorf("%d groups, first %+v, %v", len(got), got[:min(len(got), 2)], err)
		}
	})
}
