package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ExportItem is one item as the exports write it: the row the items pages
// show, with every score, the violations and the human grade's notes.
type ExportItem struct {
	ItemView
	// Scores are the item's scores in id order, each Judge being the
	// judge's name or, for a check, its source.
	Scores []ScoreView
	// Violations are what the judges said the answer violated, by judge
	// and in the order each listed them.
	Violations []ViolationView
	// GradeNotes accompany the human grade (ItemView.Grade).
	GradeNotes string
}

// itemExportBatch is how many items one round of EachExportItem reads.
const itemExportBatch = 2000

// exportItemSelect reads a batch of items alone: joining each to its task
// costs PostgreSQL an index probe per item, ten times the item's own read,
// where the batch's tasks (consecutive items mostly have consecutive
// tasks) come in one range read, and the run's few targets once.
const exportItemSelect = `SELECT id, run_task_id, run_target_id, status, repeat_index, score,
	response, error, time_ms, prompt_tokens, completion_tokens, tokens_per_s, cost_usd,
	cost_source, judge_cost_source, answer_attempts, judge_attempts, failed_phase, updated_at,
	tool_calls, turns, reasoning
	FROM items WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`

// EachRunItem streams every item of a run in id order, as RunItems shows
// them; see EachExportItem.
func (s *Store) EachRunItem(ctx context.Context, runID int64, fn func(*ItemView) error) error {
	return s.EachExportItem(ctx, runID, func(it *ExportItem) error { return fn(&it.ItemView) })
}

// EachExportItem streams every item of a run in id order with its scores,
// violations and grade, a batch at a time so memory stays flat however
// large the run: one keyset read of the items, then one read each of the
// batch's tasks, scores, grades and violations, scanned without
// reflection. The next batch is read while fn writes this one, so the
// database, the reading and the writing overlap. The item passed to fn,
// and its slices, are valid only during the call.
func (s *Store) EachExportItem(ctx context.Context, runID int64, fn func(*ExportItem) error) error {
	first, err := s.newItemBatch(ctx, runID)
	if err != nil {
		return err
	}
	return s.withExportReader(ctx, func(r exportReader) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		free := make(chan *itemBatch, 2)
		free <- first
		free <- first.sibling()
		ready := make(chan *itemBatch)
		var readErr error
		go func() { // the only user of r until ready closes
			defer close(ready)
			readErr = readBatches(ctx, r, free, ready)
		}()
		var fnErr error
		for b := range ready {
			for i := range b.items {
				if fnErr == nil {
					fnErr = fn(&b.items[i])
				}
			}
			if fnErr != nil {
				cancel() // and drain ready until the reader stops
			}
			free <- b
		}
		if fnErr != nil {
			return fnErr
		}
		return readErr
	})
}

// readBatches fills the batches that come back on free with the run's
// items in id order and sends each on ready, until the last (short) batch.
func readBatches(ctx context.Context, r exportReader, free <-chan *itemBatch, ready chan<- *itemBatch) error {
	var after int64
	for {
		var b *itemBatch
		select {
		case b = <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := b.read(ctx, r, after); err != nil {
			return err
		}
		select {
		case ready <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		if len(b.items) < itemExportBatch {
			return nil
		}
		after = b.items[len(b.items)-1].ID
	}
}

// itemBatch holds one batch of EachExportItem; its buffers are reused
// from batch to batch.
type itemBatch struct {
	runID   int64
	judges  map[int64]string
	targets map[int64]exportTarget

	items      []ExportItem
	taskIDs    []int64 // each item's run task
	at         map[int64]int
	tasks      map[int64]exportTask
	scores     []ScoreView
	violations []ViolationView
}

// exportTarget is what an item shows of its target.
type exportTarget struct {
	provider, model string
	agent           bool
	agentName       string
	agentVersion    int
}

// exportTask is what an item shows of its task.
type exportTask struct {
	key, category, subcategory, question, reference string
}

// newItemBatch reads a run's judges' names and its targets, which every
// batch shares.
func (s *Store) newItemBatch(ctx context.Context, runID int64) (*itemBatch, error) {
	judges, err := s.runJudgeNames(ctx, runID)
	if err != nil {
		return nil, err
	}
	b := (&itemBatch{runID: runID, judges: judges, targets: map[int64]exportTarget{}}).sibling()
	rows, err := s.conn(ctx).Raw(`SELECT id, provider_name, model, agent IS NOT NULL, agent_name, agent_version
		FROM run_targets WHERE run_id = ?`, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: export targets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var t exportTarget
		if err := rows.Scan(&id, &t.provider, &t.model, &t.agent, &t.agentName, &t.agentVersion); err != nil {
			return nil, fmt.Errorf("store: export targets: %w", err)
		}
		b.targets[id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: export targets: %w", err)
	}
	return b, nil
}

// sibling is an empty batch of the same run, with buffers of its own.
func (b *itemBatch) sibling() *itemBatch {
	return &itemBatch{runID: b.runID, judges: b.judges, targets: b.targets,
		items: make([]ExportItem, 0, itemExportBatch), at: make(map[int64]int, itemExportBatch),
		tasks: make(map[int64]exportTask, itemExportBatch)}
}

// runJudgeNames maps a run's judges' ids to their names.
func (s *Store) runJudgeNames(ctx context.Context, runID int64) (map[int64]string, error) {
	var judges []RunJudge
	if err := s.conn(ctx).Select("id, name").Where("run_id = ?", runID).Find(&judges).Error; err != nil {
		return nil, fmt.Errorf("store: run judges: %w", err)
	}
	names := make(map[int64]string, len(judges))
	for _, j := range judges {
		names[j.ID] = j.Name
	}
	return names, nil
}

// read replaces the batch with the run's next items after id after, in full.
func (b *itemBatch) read(ctx context.Context, r exportReader, after int64) error {
	if err := b.readItems(ctx, r, after); err != nil {
		return err
	}
	if len(b.items) == 0 {
		return nil
	}
	ids := make([]int64, len(b.items))
	for i := range b.items {
		ids[i] = b.items[i].ID
	}
	if err := b.readTasks(ctx, r); err != nil {
		return err
	}
	if err := b.readScores(ctx, r, ids); err != nil {
		return err
	}
	if err := b.readGrades(ctx, r, ids); err != nil {
		return err
	}
	return b.readViolations(ctx, r, ids)
}

// readItems reads the items of the batch with their targets' names.
func (b *itemBatch) readItems(ctx context.Context, r exportReader, after int64) error {
	b.items, b.taskIDs = b.items[:0], b.taskIDs[:0]
	clear(b.at)
	err := r.each(ctx, exportItemSelect, []any{b.runID, after, itemExportBatch}, func(row rowScanner) error {
		var v ExportItem
		var task int64
		var status, cost, judgeCost string // scanned as plain strings: pgx converts named types by reflection
		err := row.Scan(&v.ID, &task, &v.RunTargetID, &status, &v.RepeatIndex, &v.Score,
			&v.Response, &v.Error, &v.TimeMs, &v.PromptTokens, &v.CompletionTokens, &v.TokensPerS, &v.CostUSD,
			&cost, &judgeCost, &v.AnswerAttempts, &v.JudgeAttempts, &v.FailedPhase, &v.UpdatedAt,
			&v.ToolCalls, &v.AgentTurns, &v.AgentReasoning)
		if err != nil {
			return err
		}
		v.Status, v.CostSource, v.JudgeCostSource = ItemStatus(status), CostSource(cost), CostSource(judgeCost)
		t := b.targets[v.RunTargetID]
		v.Provider, v.Model, v.AgentTarget, v.AgentName, v.AgentVersion = t.provider, t.model, t.agent, t.agentName, t.agentVersion
		b.at[v.ID] = len(b.items)
		b.items = append(b.items, v)
		b.taskIDs = append(b.taskIDs, task)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: export run items: %w", err)
	}
	return nil
}

// readTasks reads the batch's tasks and sets each item's.
func (b *itemBatch) readTasks(ctx context.Context, r exportReader) error {
	clear(b.tasks)
	ids := slices.Clone(b.taskIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	err := r.byIDs("id", ids, func(where string, args []any, _ func(int64) bool) error {
		return r.each(ctx, `SELECT id, task_key, category, subcategory, question, reference FROM run_tasks
			WHERE run_id = ? AND `+where, append([]any{b.runID}, args...), func(row rowScanner) error {
			var id int64
			var t exportTask
			if err := row.Scan(&id, &t.key, &t.category, &t.subcategory, &t.question, &t.reference); err != nil {
				return err
			}
			b.tasks[id] = t
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export tasks: %w", err)
	}
	for i := range b.items {
		t := b.tasks[b.taskIDs[i]]
		v := &b.items[i]
		v.TaskID, v.Category, v.Subcategory, v.Question, v.Reference = t.key, t.category, t.subcategory, t.question, t.reference
	}
	return nil
}

// readScores reads the batch's scores and sets each item's, with its judge
// and reasoning as itemViewSelect defines them: the first judge's verdict
// (its overall score row), else the checks that scored the item, named in
// id order.
func (b *itemBatch) readScores(ctx context.Context, r exportReader, ids []int64) error {
	b.scores = b.scores[:0]
	judged := map[int64]bool{}
	var checks map[int64][]string
	err := r.byIDs("item_id", ids, func(where string, args []any, keep func(int64) bool) error {
		return r.each(ctx, `SELECT item_id, COALESCE(run_judge_id, 0), source, metric, score, reasoning FROM scores
			WHERE `+where+` ORDER BY item_id, id`, args, func(row rowScanner) error {
			var sc ScoreView
			var judge int64
			var source string
			if err := row.Scan(&sc.ItemID, &judge, &source, &sc.Metric, &sc.Score, &sc.Reasoning); err != nil {
				return err
			}
			if !keep(sc.ItemID) {
				return nil
			}
			sc.Judge = source
			if name, ok := b.judges[judge]; ok {
				sc.Judge = name // COALESCE(j.name, sc.source)
			}
			v := &b.items[b.at[sc.ItemID]]
			switch {
			case sc.Metric == "score" && !judged[sc.ItemID]:
				judged[sc.ItemID], v.Judge, v.Reasoning = true, sc.Judge, sc.Reasoning
			case strings.HasPrefix(source, "check:"):
				if checks == nil {
					checks = map[int64][]string{}
				}
				checks[sc.ItemID] = append(checks[sc.ItemID], source)
			}
			b.scores = append(b.scores, sc)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export scores: %w", err)
	}
	for id, sources := range checks {
		if !judged[id] {
			b.items[b.at[id]].Judge = strings.Join(sources, " ")
		}
	}
	forEachRun(b.scores, func(sc ScoreView) int64 { return sc.ItemID }, func(id int64, run []ScoreView) {
		b.items[b.at[id]].Scores = run
	})
	return nil
}

// readGrades sets the grade and its notes of each item of the batch that has one.
func (b *itemBatch) readGrades(ctx context.Context, r exportReader, ids []int64) error {
	err := r.byIDs("item_id", ids, func(where string, args []any, keep func(int64) bool) error {
		return r.each(ctx, `SELECT item_id, grade, notes FROM grades WHERE `+where, args, func(row rowScanner) error {
			var id int64
			var grade, notes string
			if err := row.Scan(&id, &grade, &notes); err != nil {
				return err
			}
			if keep(id) {
				v := &b.items[b.at[id]]
				v.Grade, v.GradeNotes = &grade, notes
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export grades: %w", err)
	}
	return nil
}

// readViolations reads the batch's violations and sets each item's.
func (b *itemBatch) readViolations(ctx context.Context, r exportReader, ids []int64) error {
	b.violations = b.violations[:0]
	err := r.byIDs("item_id", ids, func(where string, args []any, keep func(int64) bool) error {
		return r.each(ctx, `SELECT item_id, run_judge_id, category, detail FROM violations
			WHERE `+where+` ORDER BY item_id, run_judge_id, id`, args, func(row rowScanner) error {
			var v ViolationView
			var judge int64
			if err := row.Scan(&v.ItemID, &judge, &v.Category, &v.Detail); err != nil {
				return err
			}
			name, ok := b.judges[judge]
			if ok && keep(v.ItemID) {
				v.Judge = name
				b.violations = append(b.violations, v)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export violations: %w", err)
	}
	forEachRun(b.violations, func(v ViolationView) int64 { return v.ItemID }, func(id int64, run []ViolationView) {
		b.items[b.at[id]].Violations = run
	})
	return nil
}

// forEachRun calls fn on each run of consecutive elements of s that share
// a key, with a full slice expression so that no run can grow into the next.
func forEachRun[T any](s []T, key func(T) int64, fn func(int64, []T)) {
	for start := 0; start < len(s); {
		k, end := key(s[start]), start+1
		for end < len(s) && key(s[end]) == k {
			end++
		}
		fn(k, s[start:end:end])
		start = end
	}
}
