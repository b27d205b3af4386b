package store

import (
	"context"
	"fmt"
	"strings"
)

// Scope picks the tasks of one use case, or of one category (any use
// case), as a recommendation reads them: by what a run froze of each task
// (run_tasks), so an edited or deleted task keeps its runs' figures.
type Scope struct {
	UseCase  string
	Category string
}

// column and value of the scope's filter on a run_tasks (or tasks) alias.
func (sc Scope) where(alias string) (string, any) {
	if sc.UseCase != "" {
		return alias + ".usecase = ?", sc.UseCase
	}
	return alias + ".category = ?", sc.Category
}

// Describe names the scope for people: `use case "support"`.
func (sc Scope) Describe() string {
	if sc.UseCase != "" {
		return fmt.Sprintf("use case %q", sc.UseCase)
	}
	return fmt.Sprintf("category %q", sc.Category)
}

// ScopeKnown reports whether anything names the scope: a saved use case,
// a task, or a task a run froze.
func (s *Store) ScopeKnown(ctx context.Context, sc Scope) (bool, error) {
	cond, arg := sc.where("t")
	rcond, _ := sc.where("rt")
	q := `SELECT CASE WHEN EXISTS (SELECT 1 FROM tasks t WHERE ` + cond + `)
		OR EXISTS (SELECT 1 FROM run_tasks rt WHERE ` + rcond + `)`
	args := []any{arg, arg}
	if sc.UseCase != "" {
		q += ` OR EXISTS (SELECT 1 FROM usecases u WHERE u.name = ?)`
		args = append(args, sc.UseCase)
	}
	var known int
	if err := s.conn(ctx).Raw(q+` THEN 1 ELSE 0 END`, args...).Scan(&known).Error; err != nil {
		return false, fmt.Errorf("store: scope known: %w", err)
	}
	return known == 1, nil
}

// ScopeRuns lists the finished benchmark runs (Tribunal asked the models
// itself; imported answers carry someone else's costs and times) that hold
// at least one task of the scope, oldest first.
func (s *Store) ScopeRuns(ctx context.Context, sc Scope) ([]int64, error) {
	cond, arg := sc.where("rt")
	var ids []int64
	err := s.conn(ctx).Raw(`SELECT r.id FROM runs r WHERE r.status = ? AND r.kind = ? AND r.deleted_at IS NULL
		AND EXISTS (SELECT 1 FROM run_tasks rt WHERE rt.run_id = r.id AND `+cond+`)
		ORDER BY r.id`, RunFinished, RunBenchmark, arg).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: scope runs: %w", err)
	}
	return ids, nil
}

// ScopedOverall is one target's overall on one task of the scope: the mean
// over the task's scored items (repeats) of each item's overall, as
// TaskOveralls computes it, keyed by the task's key so that the same task
// in several runs can be told apart from different tasks.
type ScopedOverall struct {
	RunTargetID int64
	TaskKey     string
	Overall     float64
	Items       int64
}

// ScopeOveralls is TaskOveralls restricted to the run's tasks in the scope.
func (s *Store) ScopeOveralls(ctx context.Context, runID int64, weights []SourceWeight, sc Scope) ([]ScopedOverall, error) {
	out := []ScopedOverall{}
	if len(weights) == 0 {
		return out, nil
	}
	cte, args, err := itemOveralls(runID, 0, weights)
	if err != nil {
		return nil, fmt.Errorf("store: scope overalls: %w", err)
	}
	cond, arg := sc.where("rt")
	args = append(args, ItemCompleted, arg)
	q := cte + `
		SELECT i.run_target_id, rt.task_key, AVG(p.overall) AS overall, COUNT(*) AS items
		FROM per_item p JOIN items i ON i.id = p.item_id JOIN run_tasks rt ON rt.id = i.run_task_id
		WHERE i.status = ? AND ` + cond + `
		GROUP BY i.run_target_id, rt.task_key
		ORDER BY i.run_target_id, rt.task_key`
	if err := s.conn(ctx).Raw(q, args...).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("store: scope overalls: %w", err)
	}
	return out, nil
}

// ScopeMeasure is what one target's answers to the scope's tasks took and
// cost: answered items (with a time), the cost of those with a price, and
// their tokens per second.
type ScopeMeasure struct {
	RunTargetID int64
	Answered    int64
	CostN       int64
	CostSum     float64
	TpsN        int64
	TpsSum      float64
}

// ScopeMeasures sums, per target of the runs, its answers to the scope's
// tasks: one grouped scan, no item held in memory.
func (s *Store) ScopeMeasures(ctx context.Context, runIDs []int64, sc Scope) ([]ScopeMeasure, error) {
	out := []ScopeMeasure{}
	if len(runIDs) == 0 {
		return out, nil
	}
	cond, arg := sc.where("rt")
	err := s.conn(ctx).Raw(`SELECT i.run_target_id, COUNT(i.time_ms) AS answered,
			COUNT(i.cost_usd) AS cost_n, COALESCE(SUM(i.cost_usd), 0) AS cost_sum,
			COUNT(i.tokens_per_s) AS tps_n, COALESCE(SUM(i.tokens_per_s), 0) AS tps_sum
		FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id
		WHERE i.run_id IN ? AND i.time_ms IS NOT NULL AND `+cond+`
		GROUP BY i.run_target_id ORDER BY i.run_target_id`, runIDs, arg).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: scope measures: %w", err)
	}
	return out, nil
}

// ScopeMedianTime is the median answer time (ms) of the targets' answers
// to the scope's tasks, n of them (ScopeMeasures' Answered, summed): the
// middle one or two by a bounded sort, as RunFigures takes its medians on SQLite.
func (s *Store) ScopeMedianTime(ctx context.Context, targetIDs []int64, sc Scope, n int64) (float64, error) {
	if n == 0 || len(targetIDs) == 0 {
		return 0, nil
	}
	cond, arg := sc.where("rt")
	var median float64
	err := s.conn(ctx).Raw(`SELECT AVG(x) FROM (SELECT i.time_ms AS x FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id
		WHERE i.run_target_id IN ? AND i.time_ms IS NOT NULL AND `+cond+`
		ORDER BY i.time_ms LIMIT ? OFFSET ?) m`, targetIDs, arg, 2-n%2, (n-1)/2).Row().Scan(&median)
	if err != nil {
		return 0, fmt.Errorf("store: scope median time: %w", err)
	}
	return median, nil
}

// ScopePromptChars is the mean length in characters of what the scope's
// tasks send (question, input, system prompt, constraints, examples), and
// how many tasks it has: the basis of a cost estimate for a model with no
// runs yet.
func (s *Store) ScopePromptChars(ctx context.Context, sc Scope) (mean float64, n int64, err error) {
	cond, arg := sc.where("t")
	fields := []string{"question", "input", "system_prompt", "constraints", "examples"}
	for i, f := range fields {
		fields[i] = "LENGTH(COALESCE(t." + f + ", ''))"
	}
	row := s.conn(ctx).Raw(`SELECT COALESCE(AVG(`+strings.Join(fields, " + ")+`), 0), COUNT(*) FROM tasks t WHERE `+cond, arg).Row()
	if err := row.Scan(&mean, &n); err != nil {
		return 0, 0, fmt.Errorf("store: scope prompt length: %w", err)
	}
	return mean, n, nil
}
