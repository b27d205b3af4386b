package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunViolationCounts: violations written with verdicts (in one batch,
// as the engine writes them, and alone) are counted per target and
// category in SQL, listed per item, and filter the items list.
func TestRunViolationCounts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 2, 2) // 2 tasks × 2 targets
		judge := run.Judges[0].ID
		claim := func(from, to store.ItemStatus, n int) []store.Item {
			t.Helper()
			its, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: from, To: to, WorkerID: "w", Lease: time.Minute, Limit: n})
			if err != nil || len(its) != n {
				t.Fatalf("claim %s: %v %v", from, its, err)
			}
			return its
		}
		for _, it := range claim(store.ItemNew, store.ItemInProgress, 4) {
			if _, err := st.CompleteBenchmark(ctx, &it, store.BenchmarkResult{Request: "{}", Response: "a", Judged: true}, nil); err != nil {
				t.Fatal(err)
			}
		}
		its := claim(store.ItemWaitingForJudge, store.ItemJudging, 4)
		slices.SortFunc(its, func(a, b store.Item) int { return int(a.ID - b.ID) })
		v := func(category, detail string) store.Violation {
			return store.Violation{RunJudgeID: judge, Category: category, Detail: detail}
		}
		verdicts := [][]store.Violation{
			{v("under_min", "80 words"), v("format", "not JSON"), v("format", "no header")},
			{v("format", "bad CSV")},
			nil,
			{v("missing_field", "no \x00title")},
		}
		var batch []*store.Completion
		for i := range 3 {
			batch = append(batch, store.JudgingCompletion(&its[i], store.Verdict{Overall: 5, Last: true, Violations: verdicts[i],
				Scores: []store.Score{{RunJudgeID: &judge, Source: "judge:1", Metric: "score", Score: 5, Reasoning: "r"}}}))
		}
		st.CompleteAll(ctx, batch, nil)
		for _, c := range batch {
			if c.Err != nil {
				t.Fatal(c.Err)
			}
		}
		note := "the judge's violations were not a list; none were kept"
		if _, err := st.CompleteJudging(ctx, &its[3], store.Verdict{Overall: 5, Last: true, Violations: verdicts[3],
			Scores: []store.Score{{RunJudgeID: &judge, Source: "judge:1", Metric: "score", Score: 5, Reasoning: "r", Note: note}}}, nil); err != nil {
			t.Fatal(err)
		}

		// The expected counts, from the verdicts written.
		type key struct {
			target   int64
			category string
		}
		want := map[key]store.ViolationCount{}
		for i, vs := range verdicts {
			counted := map[string]bool{}
			for _, x := range vs {
				k := key{its[i].RunTargetID, x.Category}
				c := want[k]
				c.RunTargetID, c.Category = k.target, k.category
				c.Violations++
				if !counted[x.Category] {
					counted[x.Category] = true
					c.Items++
				}
				want[k] = c
			}
		}
		got, err := st.RunViolationCounts(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("counts = %+v; want %+v", got, want)
		}
		for _, g := range got {
			if w := want[key{g.RunTargetID, g.Category}]; w != g {
				t.Errorf("count %+v; want %+v", g, w)
			}
		}

		listed, err := st.ItemViolations(ctx, its[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var details []string
		for _, x := range listed {
			details = append(details, x.Category+": "+x.Detail)
		}
		if want := []string{"under_min: 80 words", "format: not JSON", "format: no header"}; !slices.Equal(details, want) {
			t.Errorf("item violations = %q; want %q", details, want)
		}
		if listed, _ := st.ItemViolations(ctx, its[3].ID); len(listed) != 1 || listed[0].Detail != "no \uFFFDtitle" {
			t.Errorf("a NUL in a detail is stored as U+FFFD: %+v", listed)
		}
		rows, err := st.ItemScoreRows(ctx, its[3].ID)
		if err != nil || len(rows) != 1 || rows[0].Note != note {
			t.Errorf("the verdict's note: %+v %v", rows, err)
		}

		page, err := st.RunItems(ctx, run.ID, store.ItemFilter{Violation: "format"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if want := []int64{its[0].ID, its[1].ID}; !slices.Equal(ids, want) || page.Total != 2 {
			t.Errorf("items with a format violation = %v (total %d); want %v", ids, page.Total, want)
		}

		// Judging afresh forgets the verdicts' violations with their scores.
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunFinished, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		if _, err := st.RejudgeRun(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := st.RunViolationCounts(ctx, run.ID); err != nil || len(got) != 0 {
			t.Errorf("after rejudging: %+v %v", got, err)
		}
	})
}
