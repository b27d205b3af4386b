package store_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// RunFigures' measures aggregate each target's answered items only, and its median
// ranks values, not insertion order, on both databases.
func TestRunFiguresMeasures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 5, 2)
		page, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		p := func(v int64) *int64 { return &v }
		// Per target, in item order; nil: not answered (a failure, say).
		times := map[string][]*int64{"m0": {p(300), p(100), nil, p(400), p(200)}, "m1": {p(5), nil, p(1), nil, p(3)}}
		seen := map[string]int{}
		for _, it := range page.Items {
			k := seen[it.Model]
			seen[it.Model]++
			tm := times[it.Model][k]
			var completion, prompt *int64
			if tm != nil {
				completion, prompt = p(*tm/10), p(7)
			}
			if err := st.SetItemMeasures(ctx, it.ID, tm, completion, prompt); err != nil {
				t.Fatal(err)
			}
		}
		figures, err := st.RunFigures(ctx, run.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := figures.Measures
		sq := func(xs ...float64) (s float64) {
			for _, x := range xs {
				s += x * x
			}
			return s
		}
		want := []store.TargetMeasures{
			{RunTargetID: run.Targets[0].ID,
				TimeMs:           store.Moments{N: 4, Sum: 1000, SumSq: sq(100, 200, 300, 400), Min: 100, Max: 400, Median: 250},
				CompletionTokens: store.Moments{N: 4, Sum: 100, SumSq: sq(10, 20, 30, 40), Min: 10, Max: 40, Median: 25},
				PromptTokens:     store.Moments{N: 4, Sum: 28, SumSq: 4 * 49, Min: 7, Max: 7, Median: 7}},
			{RunTargetID: run.Targets[1].ID,
				TimeMs:           store.Moments{N: 3, Sum: 9, SumSq: sq(5, 1, 3), Min: 1, Max: 5, Median: 3},
				CompletionTokens: store.Moments{N: 3, Sum: 0, SumSq: 0, Min: 0, Max: 0, Median: 0},
				PromptTokens:     store.Moments{N: 3, Sum: 21, SumSq: 3 * 49, Min: 7, Max: 7, Median: 7}},
		}
		if len(got) != len(want) {
			t.Fatalf("measures %+v, want %+v", got, want)
		}
		near := func(a, b store.Moments) bool {
			x, y := []float64{a.Sum, a.SumSq, a.Min, a.Max, a.Median}, []float64{b.Sum, b.SumSq, b.Min, b.Max, b.Median}
			for i := range x {
				if math.Abs(x[i]-y[i]) > 1e-9 {
					return false
				}
			}
			return a.N == b.N
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.RunTargetID != w.RunTargetID || !near(g.TimeMs, w.TimeMs) || !near(g.CompletionTokens, w.CompletionTokens) || !near(g.PromptTokens, w.PromptTokens) {
				t.Errorf("measures of target %d:\n got %+v\nwant %+v", w.RunTargetID, g, w)
			}
		}
	})
}

// RunGrades counts each target's grades, the last write of each item's counting.
func TestRunGrades(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 4, 2)
		page, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		var first []int64 // the first target's items
		for _, it := range page.Items {
			if it.Model == run.Targets[0].Model {
				first = append(first, it.ID)
			}
		}
		for i, g := range []string{store.GradeWrong, store.GradeCorrect, store.GradePartial, store.GradeCorrect} {
			if _, err := st.SetGrade(ctx, first[i], store.GradeInput{Grade: g}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.SetGrade(ctx, first[0], store.GradeInput{Grade: store.GradeCorrect}); err != nil { // changes its mind
			t.Fatal(err)
		}
		got, err := st.RunGrades(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.TargetGrades{{RunTargetID: run.Targets[0].ID, Correct: 3, Partial: 1}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("grades %+v, want %+v", got, want)
		}
	})
}
