package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"gorm.io/gorm"
)

// Task selection modes of the query picker (seed 001): every task of the
// run's collections, or N of them from the top or bottom (in task_id order)
// or at random with a seed, so the same seed picks the same tasks.
const (
	SelectAll    = "all"
	SelectTop    = "top"
	SelectBottom = "bottom"
	SelectRandom = "random"
)

// SelectionModes lists the modes in display order.
var SelectionModes = []string{SelectAll, SelectTop, SelectBottom, SelectRandom}

// TaskSelection picks which of the run's collection tasks it runs (among
// the hand-picked task_ids, when the run has them).
type TaskSelection struct {
	Mode string `json:"mode"`
	N    int    `json:"n,omitempty"`
	// Seed makes a random pick repeatable; the same seed and tasks pick the same subset.
	Seed int64 `json:"seed,omitempty"`
}

// maxRunTasks bounds hand-picked lists; bigger runs pick whole collections.
const maxRunTasks = 100_000

// CategoryRef names a category within its use case ("" for tasks without one).
type CategoryRef struct {
	UseCase  string `json:"usecase"`
	Category string `json:"category"`
}

// maxTaskGroups bounds the use cases and categories a run names.
const maxTaskGroups = 1000

// hasPool reports whether the run names somewhere to draw its tasks from.
func (in *RunInput) hasPool() bool {
	return len(in.CollectionIDs) > 0 || len(in.UseCases) > 0 || len(in.Categories) > 0
}

// taskPool is the condition on the tasks table that holds for the tasks a
// run draws on: those of its collections, its use cases and its categories.
// Every query that counts, freezes or estimates a run's tasks uses it.
func (in *RunInput) taskPool() (string, []any) {
	var conds []string
	var args []any
	if len(in.CollectionIDs) > 0 {
		conds = append(conds, "id IN (SELECT task_id FROM collection_tasks WHERE collection_id IN ?)")
		args = append(args, in.CollectionIDs)
	}
	if len(in.UseCases) > 0 {
		conds = append(conds, "usecase IN ?")
		args = append(args, in.UseCases)
	}
	for _, c := range in.Categories {
		conds = append(conds, "(usecase = ? AND category = ?)")
		args = append(args, c.UseCase, c.Category)
	}
	if len(conds) == 0 {
		return "1 = 0", nil
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

// normalizeGroups trims and dedupes the run's use cases and categories.
func (in *RunInput) normalizeGroups() error {
	if len(in.UseCases)+len(in.Categories) > maxTaskGroups {
		return invalid("usecases", "at most %d use cases and categories", maxTaskGroups)
	}
	seen := map[string]bool{}
	ucs := in.UseCases[:0:0]
	for _, u := range in.UseCases {
		if u = strings.TrimSpace(u); !seen[u] {
			seen[u] = true
			ucs = append(ucs, u)
		}
	}
	in.UseCases = ucs
	seenCat := map[CategoryRef]bool{}
	cats := in.Categories[:0:0]
	for i, c := range in.Categories {
		c = CategoryRef{UseCase: strings.TrimSpace(c.UseCase), Category: strings.TrimSpace(c.Category)}
		if c.Category == "" {
			return invalid(fmt.Sprintf("categories[%d].category", i), "is required")
		}
		// A category of a picked use case is in the pool already.
		if !seenCat[c] && !seen[c.UseCase] {
			seenCat[c] = true
			cats = append(cats, c)
		}
	}
	in.Categories = cats
	return nil
}

// checkTaskGroups refuses a use case or category that no task has, as a
// collection id that does not exist is refused.
func (s *Store) checkTaskGroups(ctx context.Context, in RunInput) error {
	if len(in.UseCases)+len(in.Categories) == 0 {
		return nil
	}
	ucs, err := s.UseCases(ctx)
	if err != nil {
		return err
	}
	known := map[CategoryRef]bool{}
	for _, u := range ucs {
		known[CategoryRef{UseCase: u.Name}] = true
		for _, c := range u.Categories {
			known[CategoryRef{UseCase: u.Name, Category: c.Name}] = true
		}
	}
	for i, u := range in.UseCases {
		if !known[CategoryRef{UseCase: u}] {
			return invalid(fmt.Sprintf("usecases[%d]", i), "no task has use case %q", u)
		}
	}
	for i, c := range in.Categories {
		if !known[c] {
			return invalid(fmt.Sprintf("categories[%d]", i), "no task has category %q in use case %q", c.Category, c.UseCase)
		}
	}
	return nil
}

// normalizeSelection checks the run's tags, its targets' tags, the task
// selection and the hand-picked task ids.
func (in *RunInput) normalizeSelection() error {
	if err := in.normalizeGroups(); err != nil {
		return err
	}
	tags, err := normTags("tags", in.Tags)
	if err != nil {
		return err
	}
	in.Tags = tags
	for i := range in.Targets {
		tt, err := normTags(fmt.Sprintf("targets[%d].tags", i), in.Targets[i].Tags)
		if err != nil {
			return err
		}
		in.Targets[i].Tags = tt
	}
	if sel := in.TaskSelection; sel != nil {
		sel.Mode = strings.ToLower(strings.TrimSpace(sel.Mode))
		switch sel.Mode {
		case "", SelectAll:
			sel.Mode = SelectAll
		case SelectTop, SelectBottom, SelectRandom:
			if sel.N < 1 {
				return invalid("task_selection.n", "pick at least 1 task (mode %s)", sel.Mode)
			}
		default:
			return invalid("task_selection.mode", "must be all, top, bottom or random")
		}
	}
	if len(in.TaskIDs) > maxRunTasks {
		return invalid("task_ids", "at most %d hand-picked tasks", maxRunTasks)
	}
	return nil
}

// picksAll reports whether the run takes every task of its pool.
func (in *RunInput) picksAll() bool {
	return len(in.TaskIDs) == 0 && (in.TaskSelection == nil || in.TaskSelection.Mode == SelectAll)
}

// runTaskCount is how many tasks freezeTasks will freeze for in: the
// pool's tasks, at most the hand-picked ones, at most the selection's n.
func (s *Store) runTaskCount(ctx context.Context, in RunInput) (int64, error) {
	var n int64
	pool, args := in.taskPool()
	if err := s.conn(ctx).Model(&Task{}).Where(pool, args...).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count run tasks: %w", err)
	}
	if len(in.TaskIDs) > 0 {
		n = min(n, int64(len(in.TaskIDs)))
	}
	if sel := in.TaskSelection; sel != nil && sel.Mode != SelectAll {
		n = min(n, int64(sel.N))
	}
	return n, nil
}

// freezeTasks copies the run's tasks into run_tasks, in task_id order: every
// task of the pool once (even when it sits in several collections or
// groups), or the ones the task selection or the hand-picked ids choose among them.
func (s *Store) freezeTasks(ctx context.Context, runID int64, in RunInput) error {
	if err := s.withoutKeyChecks(ctx, func() error { return s.copyTasks(ctx, runID, in) }); err != nil {
		return err
	}
	return s.freezeUseCases(ctx, runID)
}

// copyTasks inserts the run's copies of its tasks. On PostgreSQL each
// statement locks the tasks it copies, as the key check of task_id would
// row by row (see withoutKeyChecks): a task deleted meanwhile is not
// copied, and one deleted later waits for the run, then unlinks its copy.
// The run is this transaction's own row.
func (s *Store) copyTasks(ctx context.Context, runID int64, in RunInput) error {
	insert := `INSERT INTO run_tasks (run_id, task_id, ` + runTaskColumns + `)
			SELECT ?, t.id, ` + runTaskColumnsOfT + `
			FROM tasks t WHERE `
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR KEY SHARE OF t"
	}
	if in.picksAll() {
		pool, args := in.taskPool()
		err := s.conn(ctx).Exec(insert+`t.id IN (SELECT id FROM tasks WHERE `+pool+`)
			ORDER BY t.task_key`+lock, append([]any{runID}, args...)...).Error
		if err != nil {
			return fmt.Errorf("store: freeze run tasks: %w", err)
		}
		return nil
	}
	picked, err := s.pickTasks(ctx, in)
	if err != nil {
		return err
	}
	return inChunks(picked, func(part []int64) error {
		if err := s.conn(ctx).Exec(insert+`t.id IN ? ORDER BY t.task_key`+lock, runID, part).Error; err != nil {
			return fmt.Errorf("store: freeze run tasks: %w", err)
		}
		return nil
	})
}

// freezeUseCases copies what each saved use case of the run's tasks adds to
// their prompts into the run's tasks: one statement per use case.
func (s *Store) freezeUseCases(ctx context.Context, runID int64) error {
	var saved []useCaseRow
	err := s.conn(ctx).Where("name IN (SELECT DISTINCT usecase FROM run_tasks WHERE run_id = ?)", runID).Find(&saved).Error
	if err != nil {
		return fmt.Errorf("store: freeze use cases: %w", err)
	}
	for _, uc := range saved {
		fields, err := json.Marshal(uc.PromptUseCase())
		if err != nil {
			return fmt.Errorf("store: freeze use case %q: %w", uc.Name, err)
		}
		if err := s.conn(ctx).Model(&RunTask{}).Where("run_id = ? AND usecase = ?", runID, uc.Name).
			Update("usecase_fields", string(fields)).Error; err != nil {
			return fmt.Errorf("store: freeze use case %q: %w", uc.Name, err)
		}
	}
	return nil
}

// pickTasks lists the ids of the tasks a run that does not take all of its
// collections' tasks picks (hand-picked, then the selection), in task_id order.
func (s *Store) pickTasks(ctx context.Context, in RunInput) ([]int64, error) {
	type cand struct {
		ID      int64
		TaskKey string
	}
	var cands []cand
	pool, args := in.taskPool()
	err := s.conn(ctx).Model(&Task{}).Select("id, task_key").Where(pool, args...).
		Order("task_key").Scan(&cands).Error
	if err != nil {
		return nil, fmt.Errorf("store: run task candidates: %w", err)
	}
	if len(in.TaskIDs) > 0 {
		// Hand-picked: the pool is these tasks, which must be in the collections.
		ids, err := s.ResolveTaskRefs(ctx, "task_ids", in.TaskIDs)
		if err != nil {
			return nil, err
		}
		picked := make(map[int64]bool, len(ids))
		for _, id := range ids {
			picked[id] = true
		}
		pool := cands[:0:0]
		for _, c := range cands {
			if picked[c.ID] {
				pool = append(pool, c)
				delete(picked, c.ID)
			}
		}
		if len(picked) > 0 {
			var ids []int64
			for id := range picked {
				ids = append(ids, id)
			}
			var outside []string
			if err := s.conn(ctx).Model(&Task{}).Where("id IN ?", ids[:min(len(ids), 50)]).Order("task_key").
				Pluck("task_key", &outside).Error; err != nil {
				return nil, fmt.Errorf("store: run task candidates: %w", err)
			}
			if len(ids) > 50 {
				outside = append(outside, fmt.Sprintf("and %d more", len(ids)-50))
			}
			return nil, invalid("task_ids", "not in the chosen collections, use cases or categories: %s", strings.Join(outside, ", "))
		}
		cands = pool
	}
	chosen := map[int64]bool{}
	switch sel := in.TaskSelection; {
	case sel == nil || sel.Mode == SelectAll:
		for _, c := range cands {
			chosen[c.ID] = true
		}
	case sel.Mode == SelectTop:
		for _, c := range cands[:min(sel.N, len(cands))] {
			chosen[c.ID] = true
		}
	case sel.Mode == SelectBottom:
		for _, c := range cands[len(cands)-min(sel.N, len(cands)):] {
			chosen[c.ID] = true
		}
	case sel.Mode == SelectRandom:
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		r := rand.New(rand.NewPCG(uint64(sel.Seed), 0x7472696275_6e616c))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order[:min(sel.N, len(order))] {
			chosen[cands[i].ID] = true
		}
	}
	var picked []int64 // in task_id order, so run_tasks ids follow it across chunks
	for _, c := range cands {
		if chosen[c.ID] {
			picked = append(picked, c.ID)
		}
	}
	return picked, nil
}

// runTaskColumnsOfT is runTaskColumns read from the tasks table aliased t.
var runTaskColumnsOfT = prefixed("t.", runTaskColumns)

// TaskBrief names a task for pickers.
type TaskBrief struct {
	ID       int64  `json:"id"`
	TaskKey  string `json:"task_id"`
	Category string `json:"category"`
	Question string `json:"question"`
}

// PoolTasks lists the tasks a run of in draws on (its collections', use
// cases' and categories') in task_id order, at most limit, with how many
// there are in all: the query picker's list.
func (s *Store) PoolTasks(ctx context.Context, in RunInput, limit int) ([]TaskBrief, int64, error) {
	out := []TaskBrief{}
	if err := in.normalizeGroups(); err != nil {
		return nil, 0, err
	}
	if !in.hasPool() {
		return out, 0, nil
	}
	pool, args := in.taskPool()
	q := func() *gorm.DB {
		return s.conn(ctx).Model(&Task{}).Where(pool, args...)
	}
	var total int64
	if err := q().Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("store: collection tasks: %w", err)
	}
	if err := q().Select("id, task_key, category, question").Order("task_key").Limit(limit).Scan(&out).Error; err != nil {
		return nil, 0, fmt.Errorf("store: collection tasks: %w", err)
	}
	return out, total, nil
}
