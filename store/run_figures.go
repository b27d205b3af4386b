package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
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
// tasks), its (target, use case, category) groups and its targets' measures.
// Three reads, side by side on PostgreSQL (SQLite's one connection takes
// them in turn): one grouped scan of the items, whose groups fold into the
// summary's overall and per-model figures and the breakdown's groups; the
// measures' counted values (targetMeasures); and the targets and tasks.
func (s *Store) RunFigures(ctx context.Context, runID int64, taskLimit int) (*RunFigures, error) {
	pass, err := s.passThreshold(ctx, runID)
	if err != nil {
		return nil, err
	}
	var groups []itemGroup
	var measured map[int64]*[3]Moments
	sum := &RunSummary{PerModel: []ModelStats{}, PerTask: []TaskStats{}, PassThreshold: pass}
	var targets []RunTarget
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		groups, err = s.itemGroups(gctx, runID, pass)
		return err
	})
	g.Go(func() (err error) {
		measured, err = s.targetMeasures(gctx, runID)
		return err
	})
	g.Go(func() (err error) {
		targets, err = s.RunTargets(gctx, runID)
		if err != nil {
			return err
		}
		return s.summaryTasks(gctx, runID, taskLimit, sum)
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	measures := measuresOf(groups, measured)
	sum.Overall, sum.PerModel = foldSummary(groups, measures, targets)
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
	tpsN                      int64
	tpsSum                    float64
	costN                     int64
	costSum, judgeCostSum     float64
	costSources, judgeSources [2]sql.NullString // MIN and MAX
}

// itemGroupsSelect is the one grouped scan. Its one placeholder is the pass
// threshold; the order is the breakdown's. The measures are left to
// targetMeasures.
const itemGroupsSelect = `SELECT i.run_target_id, rt.usecase, rt.category, COUNT(*),
		SUM(CASE WHEN i.status = 'COMPLETED' THEN 1 ELSE 0 END),
		SUM(CASE WHEN i.status = 'FAILED' THEN 1 ELSE 0 END),
		COUNT(i.score), SUM(CASE WHEN i.score >= ? THEN 1 ELSE 0 END), COALESCE(SUM(i.score), 0),
		COUNT(i.tokens_per_s), COALESCE(SUM(i.tokens_per_s), 0),
		COUNT(i.cost_usd), COALESCE(SUM(i.cost_usd), 0), COALESCE(SUM(i.judge_cost_usd), 0),
		MIN(CASE WHEN i.cost_usd IS NOT NULL THEN i.cost_source END), MAX(CASE WHEN i.cost_usd IS NOT NULL THEN i.cost_source END),
		MIN(NULLIF(i.judge_cost_source, '')), MAX(NULLIF(i.judge_cost_source, ''))
	FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id WHERE i.run_id = ?
	GROUP BY i.run_target_id, rt.usecase, rt.category
	ORDER BY rt.usecase, rt.category, i.run_target_id`

func (s *Store) itemGroups(ctx context.Context, runID int64, pass float64) ([]itemGroup, error) {
	rows, err := s.conn(ctx).Raw(itemGroupsSelect, pass, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: run %d item groups: %w", runID, err)
	}
	defer rows.Close()
	var out []itemGroup
	for rows.Next() {
		var g itemGroup
		if err := rows.Scan(&g.target, &g.useCase, &g.category, &g.items, &g.completed, &g.failed,
			&g.scored, &g.passed, &g.scoreSum, &g.tpsN, &g.tpsSum, &g.costN, &g.costSum, &g.judgeCostSum,
			&g.costSources[0], &g.costSources[1], &g.judgeSources[0], &g.judgeSources[1]); err != nil {
			return nil, fmt.Errorf("store: run %d item groups: %w", runID, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run %d item groups: %w", runID, err)
	}
	return out, nil
}

// statsTally adds groups, and their targets' measures, up into Stats.
type statsTally struct {
	itemGroup
	timeMs, tokens    Moments         // only N and Sum are read
	costSet, judgeSet map[string]bool // the distinct sources
}

func (t *statsTally) add(g itemGroup) {
	t.items += g.items
	t.completed += g.completed
	t.failed += g.failed
	t.scored += g.scored
	t.passed += g.passed
	t.scoreSum += g.scoreSum
	t.tpsN += g.tpsN
	t.tpsSum += g.tpsSum
	t.costN += g.costN
	t.costSum += g.costSum
	t.judgeCostSum += g.judgeCostSum
	t.costSet = addSources(t.costSet, g.costSources)
	t.judgeSet = addSources(t.judgeSet, g.judgeSources)
}

// addMeasures adds a target's answer times and completion tokens.
func (t *statsTally) addMeasures(m TargetMeasures) {
	t.timeMs.N += m.TimeMs.N
	t.timeMs.Sum += m.TimeMs.Sum
	t.tokens.N += m.CompletionTokens.N
	t.tokens.Sum += m.CompletionTokens.Sum
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
		AvgTimeMs:       mean(t.timeMs.Sum, t.timeMs.N),
		AvgTPS:          mean(t.tpsSum, t.tpsN),
		AvgTokens:       mean(t.tokens.Sum, t.tokens.N),
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

// foldSummary folds the groups and the measures into the run's overall
// figures and each target's, in the targets' order.
func foldSummary(groups []itemGroup, measures []TargetMeasures, targets []RunTarget) (Stats, []ModelStats) {
	var all statsTally
	byTarget := map[int64]*statsTally{}
	tally := func(target int64) *statsTally {
		t := byTarget[target]
		if t == nil {
			t = &statsTally{}
			byTarget[target] = t
		}
		return t
	}
	for _, g := range groups {
		all.add(g)
		tally(g.target).add(g)
	}
	for _, m := range measures {
		all.addMeasures(m)
		tally(m.RunTargetID).addMeasures(m)
	}
	perModel := make([]ModelStats, 0, len(targets))
	for _, t := range targets {
		perModel = append(perModel, ModelStats{TargetID: t.ID, Provider: t.ProviderName, Model: t.Model, Label: t.Label(), Stats: tally(t.ID).stats()})
	}
	return all.stats(), perModel
}

// summaryTasks reads the run's task count and its first taskLimit tasks'
// figures into sum.
func (s *Store) summaryTasks(ctx context.Context, runID int64, taskLimit int, sum *RunSummary) error {
	if err := s.conn(ctx).Model(&RunTask{}).Where("run_id = ?", runID).Count(&sum.Tasks).Error; err != nil {
		return fmt.Errorf("store: run summary tasks: %w", err)
	}
	if taskLimit <= 0 {
		return nil
	}
	err := s.conn(ctx).Table("items i").Where("i.run_id = ?", runID).Select("rt.task_key, rt.category, "+statsSelect, sum.PassThreshold).
		Joins("JOIN (SELECT id, task_key, category FROM run_tasks WHERE run_id = ? ORDER BY id LIMIT ?) rt ON rt.id = i.run_task_id", runID, taskLimit).
		Group("rt.id, rt.task_key, rt.category").Order("rt.id").Scan(&sum.PerTask).Error
	if err != nil {
		return fmt.Errorf("store: run summary per task: %w", err)
	}
	for i := range sum.PerTask {
		sum.PerTask[i].finish()
	}
	return nil
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

// measuresOf lists the measures of each target with items, in target
// order: zero where none of its items has a value.
func measuresOf(groups []itemGroup, measured map[int64]*[3]Moments) []TargetMeasures {
	var ids []int64
	for _, g := range groups {
		ids = append(ids, g.target)
	}
	slices.Sort(ids)
	out := make([]TargetMeasures, 0, len(ids))
	for _, id := range slices.Compact(ids) {
		m := TargetMeasures{RunTargetID: id}
		if ms := measured[id]; ms != nil {
			m.TimeMs, m.CompletionTokens, m.PromptTokens = ms[0], ms[1], ms[2]
		}
		out = append(out, m)
	}
	return out
}
