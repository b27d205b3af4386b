package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RunFigures are the figures of a run that come from its items alone:
// the run's summary, the breakdown's groups and the targets'
// measures, read together.
type RunFigures struct {
	Summary  *RunSummary
	Groups   []GroupStats
	Measures []TargetMeasures
}

// RunFigures reads the run's summary (per task for at most taskLimit
// tasks), its (target, use case, category) groups and its targets' measures
// with one grouped scan of its items: the summary's overall and per-model
// figures, the groups and the measures' sums are folded from the same
// groups. Only the medians and the per-task rows take queries of their own.
func (s *Store) RunFigures(ctx context.Context, runID int64, taskLimit int) (*RunFigures, error) {
	pass, err := s.passThreshold(ctx, runID)
	if err != nil {
		return nil, err
	}
	groups, err := s.itemGroups(ctx, runID, pass)
	if err != nil {
		return nil, err
	}
	sum, err := s.summaryOf(ctx, runID, taskLimit, pass, groups)
	if err != nil {
		return nil, err
	}
	measures := measuresOf(groups)
	if err := s.medians(ctx, runID, measures); err != nil {
		return nil, err
	}
	return &RunFigures{Summary: sum, Groups: groupStatsOf(groups), Measures: measures}, nil
}

func (s *Store) passThreshold(ctx context.Context, runID int64) (float64, error) {
	judges, err := s.RunJudges(ctx, runID)
	if err != nil {
		return 0, err
	}
	return PassThreshold(judges), nil
}

// itemGroup holds the aggregates of one (target, use case, category) of a
// run's items, kept as sums and counts so that groups add up into the
// figures of a target and of the run.
type itemGroup struct {
	target                    int64
	useCase, category         string
	items, completed, failed  int64
	scored, passed            int64
	scoreSum                  float64
	tps                       moments // only N and Sum are read
	costN                     int64
	costSum, judgeCostSum     float64
	costSources, judgeSources [2]sql.NullString // MIN and MAX
	measures                  [3]moments        // as measureColumns
}

// moments are Moments without the median, which does not add up.
type moments struct {
	n                  int64
	sum, sumSq, lo, hi float64
}

func (m *moments) add(o moments) {
	if o.n == 0 {
		return
	}
	if m.n == 0 || o.lo < m.lo {
		m.lo = o.lo
	}
	if m.n == 0 || o.hi > m.hi {
		m.hi = o.hi
	}
	m.n += o.n
	m.sum += o.sum
	m.sumSq += o.sumSq
}

// itemGroupsSelect is the one grouped scan. Its one placeholder is the pass
// threshold; the order is the breakdown's.
func itemGroupsSelect() string {
	sel := `SELECT i.run_target_id, rt.usecase, rt.category, COUNT(*),
		SUM(CASE WHEN i.status = 'COMPLETED' THEN 1 ELSE 0 END),
		SUM(CASE WHEN i.status = 'FAILED' THEN 1 ELSE 0 END),
		COUNT(i.score), SUM(CASE WHEN i.score >= ? THEN 1 ELSE 0 END), COALESCE(SUM(i.score), 0),
		COUNT(i.tokens_per_s), COALESCE(SUM(i.tokens_per_s), 0),
		COUNT(i.cost_usd), COALESCE(SUM(i.cost_usd), 0), COALESCE(SUM(i.judge_cost_usd), 0),
		MIN(CASE WHEN i.cost_usd IS NOT NULL THEN i.cost_source END), MAX(CASE WHEN i.cost_usd IS NOT NULL THEN i.cost_source END),
		MIN(NULLIF(i.judge_cost_source, '')), MAX(NULLIF(i.judge_cost_source, ''))`
	for _, col := range measureColumns {
		// Squares in floating point: a sum of squared integers could overflow.
		sel += fmt.Sprintf(`, COUNT(i.%[1]s), COALESCE(SUM(i.%[1]s), 0), COALESCE(SUM(CAST(i.%[1]s AS DOUBLE PRECISION) * i.%[1]s), 0),
			COALESCE(MIN(i.%[1]s), 0), COALESCE(MAX(i.%[1]s), 0)`, col)
	}
	return sel + ` FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id WHERE i.run_id = ?
		GROUP BY i.run_target_id, rt.usecase, rt.category
		ORDER BY rt.usecase, rt.category, i.run_target_id`
}

func (s *Store) itemGroups(ctx context.Context, runID int64, pass float64) ([]itemGroup, error) {
	rows, err := s.conn(ctx).Raw(itemGroupsSelect(), pass, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: run %d item groups: %w", runID, err)
	}
	defer rows.Close()
	var out []itemGroup
	for rows.Next() {
		var g itemGroup
		dest := []any{&g.target, &g.useCase, &g.category, &g.items, &g.completed, &g.failed,
			&g.scored, &g.passed, &g.scoreSum, &g.tps.n, &g.tps.sum, &g.costN, &g.costSum, &g.judgeCostSum,
			&g.costSources[0], &g.costSources[1], &g.judgeSources[0], &g.judgeSources[1]}
		for j := range g.measures {
			m := &g.measures[j]
			dest = append(dest, &m.n, &m.sum, &m.sumSq, &m.lo, &m.hi)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: run %d item groups: %w", runID, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run %d item groups: %w", runID, err)
	}
	return out, nil
}

// statsTally adds groups up into Stats.
type statsTally struct {
	itemGroup
	costSet, judgeSet map[string]bool // the distinct sources
}

func (t *statsTally) add(g itemGroup) {
	t.items += g.items
	t.completed += g.completed
	t.failed += g.failed
	t.scored += g.scored
	t.passed += g.passed
	t.scoreSum += g.scoreSum
	t.tps.add(moments{n: g.tps.n, sum: g.tps.sum})
	t.measures[0].add(g.measures[0])
	t.measures[1].add(g.measures[1])
	t.costN += g.costN
	t.costSum += g.costSum
	t.judgeCostSum += g.judgeCostSum
	t.costSet = addSources(t.costSet, g.costSources)
	t.judgeSet = addSources(t.judgeSet, g.judgeSources)
}

func addSources(set map[string]bool, minMax [2]sql.NullString) map[string]bool {
	for _, v := range minMax {
		if v.Valid {
			if set == nil {
				set = map[string]bool{}
			}
			set[v.String] = true
		}
	}
	return set
}

// stats are the tally's Stats, as statsSelect defines them.
func (t *statsTally) stats() Stats {
	st := Stats{Items: t.items, Completed: t.completed, Failed: t.failed, Scored: t.scored, Passed: t.passed,
		AvgScore:        mean(t.scoreSum, t.scored),
		AvgTimeMs:       mean(t.measures[0].sum, t.measures[0].n),
		AvgTPS:          mean(t.tps.sum, t.tps.n),
		AvgTokens:       mean(t.measures[1].sum, t.measures[1].n),
		CostSource:      oneSource(t.costSet),
		JudgeCostSource: oneSource(t.judgeSet)}
	if t.costN > 0 {
		st.CostUSD = &t.costSum
	}
	if t.items > 0 {
		st.JudgeCostUSD = &t.judgeCostSum
	}
	st.finish()
	return st
}

func mean(sum float64, n int64) *float64 {
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}

// oneSource is sourceOf over a set of sources: none, the one, or mixed.
func oneSource(set map[string]bool) CostSource {
	switch len(set) {
	case 0:
		return ""
	case 1:
		for v := range set {
			return CostSource(v)
		}
	}
	return CostMixed
}

// summaryOf folds the groups into the run's overall and per-model figures,
// and reads the task count and the first taskLimit tasks' figures.
func (s *Store) summaryOf(ctx context.Context, runID int64, taskLimit int, pass float64, groups []itemGroup) (*RunSummary, error) {
	out := &RunSummary{PerModel: []ModelStats{}, PerTask: []TaskStats{}, PassThreshold: pass}
	var all statsTally
	byTarget := map[int64]*statsTally{}
	for _, g := range groups {
		all.add(g)
		t := byTarget[g.target]
		if t == nil {
			t = &statsTally{}
			byTarget[g.target] = t
		}
		t.add(g)
	}
	out.Overall = all.stats()
	targets, err := s.RunTargets(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		tally := cmp.Or(byTarget[t.ID], &statsTally{})
		out.PerModel = append(out.PerModel, ModelStats{TargetID: t.ID, Provider: t.ProviderName, Model: t.Model, Label: t.Label(), Stats: tally.stats()})
	}
	if err := s.conn(ctx).Model(&RunTask{}).Where("run_id = ?", runID).Count(&out.Tasks).Error; err != nil {
		return nil, fmt.Errorf("store: run summary tasks: %w", err)
	}
	if taskLimit > 0 {
		err := s.conn(ctx).Table("items i").Where("i.run_id = ?", runID).Select("rt.task_key, rt.category, "+statsSelect, pass).
			Joins("JOIN (SELECT id, task_key, category FROM run_tasks WHERE run_id = ? ORDER BY id LIMIT ?) rt ON rt.id = i.run_task_id", runID, taskLimit).
			Group("rt.id, rt.task_key, rt.category").Order("rt.id").Scan(&out.PerTask).Error
		if err != nil {
			return nil, fmt.Errorf("store: run summary per task: %w", err)
		}
		for i := range out.PerTask {
			out.PerTask[i].finish()
		}
	}
	return out, nil
}

// groupStatsOf is the breakdown's groups.
func groupStatsOf(groups []itemGroup) []GroupStats {
	out := make([]GroupStats, 0, len(groups))
	for _, g := range groups {
		gs := GroupStats{RunTargetID: g.target, UseCase: g.useCase, Category: g.category, Items: g.items,
			Scored: g.scored, Passed: g.passed, AvgScore: mean(g.scoreSum, g.scored), JudgeCostUSD: g.judgeCostSum}
		if g.costN > 0 {
			gs.CostUSD = &g.costSum
		}
		out = append(out, gs)
	}
	return out
}

// measuresOf adds the groups' measures up per target, in target order;
// their medians are still to be read.
func measuresOf(groups []itemGroup) []TargetMeasures {
	byTarget := map[int64]*[3]moments{}
	for _, g := range groups {
		t := byTarget[g.target]
		if t == nil {
			t = &[3]moments{}
			byTarget[g.target] = t
		}
		for j := range t {
			t[j].add(g.measures[j])
		}
	}
	out := make([]TargetMeasures, 0, len(byTarget))
	for _, id := range slices.Sorted(maps.Keys(byTarget)) {
		m := TargetMeasures{RunTargetID: id}
		for j, x := range m.moments() {
			t := byTarget[id][j]
			*x = Moments{N: t.n, Sum: t.sum, SumSq: t.sumSq, Min: t.lo, Max: t.hi}
		}
		out = append(out, m)
	}
	return out
}

// medians reads each target's median of each measure: the middle value,
// or the mean of the middle two when n is even. On PostgreSQL one
// statement counts each target's distinct values of each measure, in
// order, and the medians are picked from the counts as they stream by (the
// counts are what is sorted: a few thousand rows where the items are a
// million). SQLite sorts its rows more slowly than it walks an index, so
// there the middle one or two values come by ORDER BY … LIMIT … OFFSET n/2
// per target and measure, each a bounded sort of one target's items. The
// measures are integers, so the mean of the middle two is exact.
func (s *Store) medians(ctx context.Context, runID int64, out []TargetMeasures) error {
	if s.dialect == SQLite {
		return s.boundedMedians(ctx, out)
	}
	arms := make([]string, len(measureColumns))
	args := make([]any, len(measureColumns))
	for j, col := range measureColumns {
		arms[j] = fmt.Sprintf(`SELECT %[1]d AS measure, i.run_target_id, i.%[2]s AS x, COUNT(*) AS n FROM items i
			WHERE i.run_id = ? AND i.%[2]s IS NOT NULL GROUP BY i.run_target_id, i.%[2]s`, j, col)
		args[j] = runID
	}
	rows, err := s.conn(ctx).Raw(strings.Join(arms, " UNION ALL ")+" ORDER BY 1, 2, 3", args...).Rows()
	if err != nil {
		return fmt.Errorf("store: run %d medians: %w", runID, err)
	}
	defer rows.Close()
	at := map[int64]*TargetMeasures{}
	for i := range out {
		at[out[i].RunTargetID] = &out[i]
	}
	var walk medianWalk
	for rows.Next() {
		var measure int
		var target, x, n int64
		if err := rows.Scan(&measure, &target, &x, &n); err != nil {
			return fmt.Errorf("store: run %d medians: %w", runID, err)
		}
		if m := at[target]; m != nil {
			walk.step(m.moments()[measure], x, n)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: run %d medians: %w", runID, err)
	}
	return nil
}

// medianWalk finds a median in a measure's counted values, given in
// increasing order: the values at positions (N−1)/2 and N/2.
type medianWalk struct {
	of   *Moments
	seen int64 // values passed so far
	low  int64 // the value at (N−1)/2
}

func (w *medianWalk) step(m *Moments, x, n int64) {
	if w.of != m {
		*w = medianWalk{of: m}
	}
	lowAt, highAt := (m.N-1)/2, m.N/2
	if lowAt >= w.seen && lowAt < w.seen+n {
		w.low = x
	}
	if highAt >= w.seen && highAt < w.seen+n {
		m.Median = float64(w.low+x) / 2
	}
	w.seen += n
}

func (s *Store) boundedMedians(ctx context.Context, out []TargetMeasures) error {
	for i := range out {
		for j, x := range out[i].moments() {
			if x.N == 0 {
				continue
			}
			// items.run_target_id belongs to one run: its index finds the target's items.
			q := fmt.Sprintf(`SELECT AVG(x) FROM (SELECT i.%[1]s AS x FROM items i WHERE i.run_target_id = ? AND i.%[1]s IS NOT NULL
				ORDER BY i.%[1]s LIMIT ? OFFSET ?) m`, measureColumns[j])
			if err := s.conn(ctx).Raw(q, out[i].RunTargetID, 2-x.N%2, (x.N-1)/2).Row().Scan(&x.Median); err != nil {
				return fmt.Errorf("store: run measures: median of %s: %w", measureColumns[j], err)
			}
		}
	}
	return nil
}
