package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// figuresItem is one item as the reference below reads it.
type figuresItem struct {
	target                                 int64
	useCase, category, status              string
	score, tps, cost                       sql.NullFloat64
	judgeCost                              float64
	timeMs, completionTokens, promptTokens sql.NullInt64
	costSource, judgeSource                string
}

// RunFigures folds one grouped scan into the overall, per-model, per-group
// and per-measure figures: on a varied run (three models, two repeats,
// failures, unscored items, use cases and categories, mixed and single cost
// sources, even and odd counts) every figure equals the one computed here
// from the items themselves, on both databases.
func TestRunFiguresMatchTheItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 9, 3)
		first := run.Targets[0].ID
		storetest.Exec(t, st, `INSERT INTO items (run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
			SELECT run_id, run_task_id, run_target_id, 2, status, request, updated_at FROM items WHERE run_id = ? AND run_target_id <> ?`, run.ID, first)
		storetest.Exec(t, st, `UPDATE run_tasks SET category = CASE WHEN id % 3 = 0 THEN 'a' WHEN id % 3 = 1 THEN 'b' ELSE 'c' END,
			usecase = CASE WHEN id % 2 = 0 THEN 'u' ELSE '' END WHERE run_id = ?`, run.ID)
		storetest.Exec(t, st, `UPDATE items SET
			status = CASE WHEN id % 7 = 0 THEN 'FAILED' ELSE 'COMPLETED' END,
			score = CASE WHEN id % 7 = 0 OR id % 5 = 0 THEN NULL ELSE (id * 37 % 100) / 10.0 END,
			time_ms = CASE WHEN id % 7 = 0 THEN NULL ELSE id * 53 % 1000 END,
			completion_tokens = CASE WHEN id % 7 = 0 THEN NULL ELSE id * 13 % 50 END,
			prompt_tokens = CASE WHEN id % 7 = 0 THEN NULL ELSE 7 + id % 2 END,
			tokens_per_s = CASE WHEN id % 7 = 0 OR id % 4 = 0 THEN NULL ELSE (id * 17 % 300) / 7.0 END,
			cost_usd = CASE WHEN id % 3 = 0 THEN NULL ELSE (id % 11) * 0.0013 END,
			cost_source = CASE WHEN run_target_id = ? THEN 'provider' WHEN id % 4 = 0 THEN 'provider' ELSE 'price_table' END,
			judge_cost_usd = (id % 5) * 0.0007,
			judge_cost_source = CASE WHEN run_target_id = ? THEN '' WHEN id % 4 = 1 THEN 'provider' ELSE 'price_table' END
			WHERE run_id = ?`, first, first, run.ID)

		items := readFiguresItems(t, st, run.ID)
		got, err := st.RunFigures(ctx, run.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		pass := got.Summary.PassThreshold
		checkStats(t, "overall", got.Summary.Overall, refStats(items, pass))
		for _, pm := range got.Summary.PerModel {
			checkStats(t, pm.Label, pm.Stats, refStats(filter(items, func(it figuresItem) bool { return it.target == pm.TargetID }), pass))
		}
		for _, g := range got.Groups {
			in := filter(items, func(it figuresItem) bool {
				return it.target == g.RunTargetID && it.useCase == g.UseCase && it.category == g.Category
			})
			want := refStats(in, pass)
			if g.Items != want.Items || g.Scored != want.Scored || g.Passed != want.Passed || !nearPtr(g.AvgScore, want.AvgScore) ||
				!nearPtr(g.CostUSD, want.CostUSD) || !near(g.JudgeCostUSD, *want.JudgeCostUSD) {
				t.Errorf("group %+v, want %+v", g, want)
			}
		}
		if n := len(got.Groups); n < 10 {
			t.Errorf("%d groups, want a run varied enough for at least 10", n)
		}
		for _, m := range got.Measures {
			in := filter(items, func(it figuresItem) bool { return it.target == m.RunTargetID })
			for name, c := range map[string]struct {
				got store.Moments
				val func(figuresItem) sql.NullInt64
			}{
				"time":       {m.TimeMs, func(it figuresItem) sql.NullInt64 { return it.timeMs }},
				"completion": {m.CompletionTokens, func(it figuresItem) sql.NullInt64 { return it.completionTokens }},
				"prompt":     {m.PromptTokens, func(it figuresItem) sql.NullInt64 { return it.promptTokens }},
			} {
				if want := refMoments(in, c.val); c.got != want {
					t.Errorf("target %d %s: %+v, want %+v", m.RunTargetID, name, c.got, want)
				}
			}
		}
	})
}

func readFiguresItems(t *testing.T, st *store.Store, runID int64) []figuresItem {
	t.Helper()
	rows, err := storetest.DB(t, st).Query(`SELECT i.run_target_id, rt.usecase, rt.category, i.status, i.score, i.tokens_per_s, i.cost_usd,
		i.judge_cost_usd, i.time_ms, i.completion_tokens, i.prompt_tokens, i.cost_source, i.judge_cost_source
		FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id WHERE i.run_id = `+placeholder(st, 1), runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []figuresItem
	for rows.Next() {
		var it figuresItem
		if err := rows.Scan(&it.target, &it.useCase, &it.category, &it.status, &it.score, &it.tps, &it.cost, &it.judgeCost,
			&it.timeMs, &it.completionTokens, &it.promptTokens, &it.costSource, &it.judgeSource); err != nil {
			t.Fatal(err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func placeholder(st *store.Store, n int) string {
	if st.Dialect() == store.Postgres {
		return "$" + string(rune('0'+n))
	}
	return "?"
}

func filter(items []figuresItem, keep func(figuresItem) bool) []figuresItem {
	var out []figuresItem
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}

// refStats is statsSelect's definition, item by item.
func refStats(items []figuresItem, pass float64) store.Stats {
	var st store.Stats
	var score, time, tps, tokens, cost, judge float64
	var nTime, nTPS, nTokens, nCost int64
	sources, judgeSources := map[string]bool{}, map[string]bool{}
	for _, it := range items {
		st.Items++
		switch it.status {
		case "COMPLETED":
			st.Completed++
		case "FAILED":
			st.Failed++
		}
		if it.score.Valid {
			st.Scored++
			score += it.score.Float64
			if it.score.Float64 >= pass {
				st.Passed++
			}
		}
		if it.timeMs.Valid {
			nTime++
			time += float64(it.timeMs.Int64)
		}
		if it.tps.Valid {
			nTPS++
			tps += it.tps.Float64
		}
		if it.completionTokens.Valid {
			nTokens++
			tokens += float64(it.completionTokens.Int64)
		}
		if it.cost.Valid {
			nCost++
			cost += it.cost.Float64
			sources[it.costSource] = true
		}
		judge += it.judgeCost
		if it.judgeSource != "" {
			judgeSources[it.judgeSource] = true
		}
	}
	avg := func(sum float64, n int64) *float64 {
		if n == 0 {
			return nil
		}
		v := sum / float64(n)
		return &v
	}
	st.AvgScore, st.AvgTimeMs, st.AvgTPS, st.AvgTokens = avg(score, st.Scored), avg(time, nTime), avg(tps, nTPS), avg(tokens, nTokens)
	if nCost > 0 {
		st.CostUSD = &cost
	}
	if st.Items > 0 {
		st.JudgeCostUSD = &judge
	}
	if st.Scored > 0 {
		r := float64(st.Passed) / float64(st.Scored)
		st.PassRate = &r
	}
	one := func(set map[string]bool) store.CostSource {
		switch len(set) {
		case 0:
			return ""
		case 1:
			for s := range set {
				return store.CostSource(s)
			}
		}
		return store.CostMixed
	}
	st.CostSource, st.JudgeCostSource = one(sources), one(judgeSources)
	return st
}

func refMoments(items []figuresItem, val func(figuresItem) sql.NullInt64) store.Moments {
	var xs []int64
	var m store.Moments
	for _, it := range items {
		if v := val(it); v.Valid {
			xs = append(xs, v.Int64)
			m.Sum += float64(v.Int64)
			m.SumSq += float64(v.Int64) * float64(v.Int64)
		}
	}
	if len(xs) == 0 {
		return m
	}
	slices.Sort(xs)
	m.N, m.Min, m.Max = int64(len(xs)), float64(xs[0]), float64(xs[len(xs)-1])
	m.Median = float64(xs[(len(xs)-1)/2]+xs[len(xs)/2]) / 2
	return m
}

func checkStats(t *testing.T, what string, got, want store.Stats) {
	t.Helper()
	ints := [][2]int64{{got.Items, want.Items}, {got.Completed, want.Completed}, {got.Failed, want.Failed},
		{got.Scored, want.Scored}, {got.Passed, want.Passed}}
	floats := [][2]*float64{{got.PassRate, want.PassRate}, {got.AvgScore, want.AvgScore}, {got.AvgTimeMs, want.AvgTimeMs},
		{got.AvgTPS, want.AvgTPS}, {got.AvgTokens, want.AvgTokens}, {got.CostUSD, want.CostUSD}, {got.JudgeCostUSD, want.JudgeCostUSD}}
	ok := got.CostSource == want.CostSource && got.JudgeCostSource == want.JudgeCostSource
	for _, p := range ints {
		ok = ok && p[0] == p[1]
	}
	for _, p := range floats {
		ok = ok && nearPtr(p[0], p[1])
	}
	if !ok {
		t.Errorf("%s: %s, want %s", what, statsString(got), statsString(want))
	}
}

func statsString(s store.Stats) string {
	f := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return fmt.Sprint([]any{s.Items, s.Completed, s.Failed, s.Scored, s.Passed, f(s.PassRate), f(s.AvgScore), f(s.AvgTimeMs), f(s.AvgTPS),
		f(s.AvgTokens), f(s.CostUSD), f(s.JudgeCostUSD), s.CostSource, s.JudgeCostSource})
}

// near allows for the order in which a database adds floating-point values.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func nearPtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return near(*a, *b)
}

// A target none of whose items has a measured value keeps its place in the
// measures, with zero moments, and no mean time or tokens in its figures:
// its counted values are none at all.
func TestRunFiguresTargetWithoutMeasures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 2)
		measured, bare := run.Targets[0].ID, run.Targets[1].ID
		storetest.Exec(t, st, `UPDATE items SET time_ms = 10 * id, completion_tokens = id, prompt_tokens = 7 WHERE run_target_id = ?`, measured)
		got, err := st.RunFigures(ctx, run.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Measures) != 2 || got.Measures[0].RunTargetID != measured || got.Measures[1].RunTargetID != bare {
			t.Fatalf("measures %+v, want both targets in order", got.Measures)
		}
		if m := got.Measures[0]; m.TimeMs.N != 3 || m.PromptTokens.Median != 7 {
			t.Errorf("measured target %+v, want 3 times and a prompt median of 7", m)
		}
		if m := got.Measures[1]; m != (store.TargetMeasures{RunTargetID: bare}) {
			t.Errorf("bare target %+v, want zero moments", m)
		}
		for _, pm := range got.Summary.PerModel {
			if hasTime := pm.AvgTimeMs != nil; hasTime != (pm.TargetID == measured) || (pm.AvgTokens != nil) != hasTime {
				t.Errorf("%s: mean time %v, tokens %v; want them for the measured target alone", pm.Label, pm.AvgTimeMs, pm.AvgTokens)
			}
		}
	})
}
