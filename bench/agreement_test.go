package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"tribunal/analysis"
	"tribunal/bench"
	"tribunal/runs"
	"tribunal/stats"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestAgreementMatchesItemByItem checks the run's agreement card, whose
// judge pairs are counted in SQL, against its definition item by item (as
// it was computed before): every judge's overall score of every item, a
// kappa per judge against the human grades and per pair of judges.
func TestAgreementMatchesItemByItem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		runID, page := filledPanelRun(t, st)
		grades := []string{store.GradeCorrect, store.GradePartial, store.GradeWrong}
		for i, it := range page.Items[:30] {
			if _, err := st.SetGrade(ctx, it.ID, store.GradeInput{Grade: grades[i%3]}); err != nil {
				t.Fatal(err)
			}
		}
		run, err := st.Run(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runs.New(st, nil).Agreement(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		want := itemByItemAgreement(t, st, run, page.Items)
		if len(want.Pairs) != 1 || want.Pairs[0].Score == nil || want.Pairs[0].Score.N < 30 || want.Judges[0].Human == nil {
			t.Fatalf("the fixture gives too little to compare: %+v", want)
		}
		if w, g := asJSON(t, want), asJSON(t, got); w != g {
			t.Errorf("agreement\n got %s\nwant %s (item by item)", g, w)
		}
	})
}

// itemByItemAgreement is the agreement card from each item's scores and grade.
func itemByItemAgreement(t *testing.T, st *store.Store, run *store.Run, items []store.ItemView) analysis.Report {
	t.Helper()
	ctx := context.Background()
	level := func(score float64, j store.RunJudge) int {
		switch f := (score - float64(j.ScaleMin)) / float64(j.ScaleMax-j.ScaleMin); {
		case f < 1.0/3:
			return 0
		case f < 2.0/3:
			return 1
		}
		return 2
	}
	gradeLevel := map[string]int{store.GradeWrong: 0, store.GradePartial: 1, store.GradeCorrect: 2}
	overall := map[int64]map[string]float64{} // item → judge name → its overall score
	humanJudge, humanGrade := map[string][]int{}, map[string][]int{}
	for _, it := range items {
		rows, err := st.ItemScores(ctx, it.ID)
		if err != nil {
			t.Fatal(err)
		}
		g, err := st.ItemGrade(ctx, it.ID)
		if err != nil {
			t.Fatal(err)
		}
		overall[it.ID] = map[string]float64{}
		for _, r := range rows {
			if r.Metric != "score" {
				continue
			}
			overall[it.ID][r.Judge] = r.Score
			for _, j := range run.Judges {
				if j.Name == r.Judge && g != nil {
					humanJudge[j.Name] = append(humanJudge[j.Name], level(r.Score, j))
					humanGrade[j.Name] = append(humanGrade[j.Name], gradeLevel[g.Grade])
				}
			}
		}
	}
	toAgreement := func(r stats.KappaResult) *analysis.Agreement {
		if r.N == 0 {
			return nil
		}
		a := &analysis.Agreement{Kappa: r.Kappa, Lo: r.Lo, Hi: r.Hi, N: r.N, Exact: r.Agreement}
		for _, f := range []*float64{&a.Kappa, &a.Lo, &a.Hi} {
			if math.IsNaN(*f) {
				*f = 0
			}
		}
		return a
	}
	rep := analysis.Report{Judges: []analysis.JudgeAgreement{}, Pairs: []analysis.PairAgreement{}}
	for _, j := range run.Judges {
		rep.Judges = append(rep.Judges, analysis.JudgeAgreement{RunJudgeID: j.ID, Judge: j.Name,
			Human: toAgreement(stats.Kappa(humanJudge[j.Name], humanGrade[j.Name], 3, stats.Linear))})
	}
	a, b := run.Judges[0], run.Judges[1]
	var sa, sb []int
	for _, byJudge := range overall {
		va, okA := byJudge[a.Name]
		vb, okB := byJudge[b.Name]
		if okA && okB {
			sa = append(sa, int(math.Round(va))-a.ScaleMin)
			sb = append(sb, int(math.Round(vb))-b.ScaleMin)
		}
	}
	rep.Pairs = append(rep.Pairs, analysis.PairAgreement{JudgeA: a.Name, JudgeB: b.Name,
		Score: toAgreement(stats.Kappa(sa, sb, a.ScaleMax-a.ScaleMin+1, stats.Quadratic))})
	return rep
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTaskResultsMatchItems checks each (model, task) row of TaskResults,
// scanned by hand, against the run's items: counts, score mean and range,
// time, tokens per second and cost.
func TestTaskResultsMatchItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		runID, page := filledPanelRun(t, st)
		type sums struct {
			items, scored, passed          int64
			score, time, tps, cost         float64
			lo, hi                         float64
			timed, rated, priced, anyScore bool
		}
		want := map[string]*sums{}
		for _, it := range page.Items {
			key := fmt.Sprint(it.RunTargetID, "/", it.TaskID)
			s := want[key]
			if s == nil {
				s = &sums{lo: math.Inf(1), hi: math.Inf(-1)}
				want[key] = s
			}
			s.items++
			if it.Score != nil {
				s.scored, s.score, s.anyScore = s.scored+1, s.score+*it.Score, true
				s.lo, s.hi = min(s.lo, *it.Score), max(s.hi, *it.Score)
				if *it.Score >= 50 { // the middle of both judges' 0–100 scale
					s.passed++
				}
			}
			if it.TimeMs != nil {
				s.time, s.timed = s.time+float64(*it.TimeMs), true
			}
			if it.TokensPerS != nil {
				s.tps, s.rated = s.tps+*it.TokensPerS, true
			}
			if it.CostUSD != nil {
				s.cost, s.priced = s.cost+*it.CostUSD, true
			}
		}
		got, err := st.TaskResults(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d task results, want %d", len(got), len(want))
		}
		near := func(p *float64, v float64, ok bool) bool {
			return (p != nil) == ok && (p == nil || math.Abs(*p-v) < 1e-9)
		}
		for _, r := range got {
			s := want[fmt.Sprint(r.RunTargetID, "/", r.TaskKey)]
			switch {
			case s == nil:
				t.Errorf("task result %+v: no such items", r)
			case r.Items != s.items || r.Scored != s.scored || r.Passed != s.passed || r.Category == "",
				!near(r.Score, s.score/float64(max(s.scored, 1)), s.anyScore),
				!near(r.MinScore, s.lo, s.anyScore), !near(r.MaxScore, s.hi, s.anyScore),
				!near(r.CostUSD, s.cost, s.priced):
				t.Errorf("task result %s of target %d: %+v, want %+v", r.TaskKey, r.RunTargetID, r, *s)
			}
			if r.TimeMs == nil || r.TPS == nil {
				t.Errorf("task result %s of target %d: no time or tokens per second", r.TaskKey, r.RunTargetID)
			}
		}
	})
}

// filledPanelRun is a panel run of 40 tasks completed by the bulk fill,
// and its first page of items.
func filledPanelRun(t *testing.T, st *store.Store) (int64, store.Page[store.ItemView]) {
	t.Helper()
	ctx := context.Background()
	runID := panelRun(t, st, 40)
	if _, err := bench.FillCompleted(ctx, st, runID); err != nil {
		t.Fatal(err)
	}
	page, err := st.RunItems(ctx, runID, store.ItemFilter{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	return runID, page
}
