package store_test

import (
	"context"
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
