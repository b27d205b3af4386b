package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// itemExportBatch is how many items one read of EachRunItem brings.
const itemExportBatch = 1000

// exportItemSelect is itemViewSelect without its per-row subqueries: at a
// million rows those (four per item) cost more than the rows themselves, so
// EachRunItem reads the verdicts and grades a batch at a time instead.
const exportItemSelect = `SELECT i.id, rt.task_key, rt.category, rt.subcategory, rt.question, rt.reference,
	tg.provider_name, tg.model, i.status, i.repeat_index, i.score,
	i.response, i.error, i.time_ms, i.prompt_tokens, i.completion_tokens, i.tokens_per_s, i.cost_usd,
	i.cost_source, i.judge_cost_source,
	i.answer_attempts, i.judge_attempts, i.failed_phase, i.updated_at, i.run_target_id,
	CASE WHEN tg.agent IS NULL THEN 0 ELSE 1 END, tg.agent_name, tg.agent_version,
	i.tool_calls, i.turns, i.reasoning
	FROM items i JOIN run_tasks rt ON rt.id = i.run_task_id JOIN run_targets tg ON tg.id = i.run_target_id
	WHERE i.run_id = ? AND i.id > ? ORDER BY i.id LIMIT ?`

// EachRunItem streams every item of a run in id order, as RunItems shows
// them, a batch at a time so memory stays flat however large the run: one
// keyset read of the items with their task and target, scanned without
// reflection, then one range read of the batch's verdicts and one of its
// grades.
func (s *Store) EachRunItem(ctx context.Context, runID int64, fn func(*ItemView) error) error {
	judges, err := s.runJudgeNames(ctx, runID)
	if err != nil {
		return err
	}
	rows := make([]ItemView, 0, itemExportBatch)
	var after int64
	for {
		if rows, err = s.exportItems(ctx, runID, after, rows[:0]); err != nil {
			return err
		}
		if err := s.addVerdicts(ctx, rows, judges); err != nil {
			return err
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		if len(rows) < itemExportBatch {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
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

// exportItems appends to out the run's next batch of items after id after.
func (s *Store) exportItems(ctx context.Context, runID, after int64, out []ItemView) ([]ItemView, error) {
	rows, err := s.conn(ctx).Raw(exportItemSelect, runID, after, itemExportBatch).Rows()
	if err != nil {
		return out, fmt.Errorf("store: export run items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v ItemView
		err := rows.Scan(&v.ID, &v.TaskID, &v.Category, &v.Subcategory, &v.Question, &v.Reference,
			&v.Provider, &v.Model, &v.Status, &v.RepeatIndex, &v.Score,
			&v.Response, &v.Error, &v.TimeMs, &v.PromptTokens, &v.CompletionTokens, &v.TokensPerS, &v.CostUSD,
			&v.CostSource, &v.JudgeCostSource,
			&v.AnswerAttempts, &v.JudgeAttempts, &v.FailedPhase, &v.UpdatedAt, &v.RunTargetID,
			&v.AgentTarget, &v.AgentName, &v.AgentVersion,
			&v.ToolCalls, &v.AgentTurns, &v.AgentReasoning)
		if err != nil {
			return out, fmt.Errorf("store: export run items: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("store: export run items: %w", err)
	}
	return out, nil
}

// addVerdicts fills in the judge, reasoning and grade of a batch of items
// (in id order) as itemViewSelect defines them: the first judge's verdict
// (its overall score row), else the checks that scored the item, named in
// id order. The batch's ids span a range holding no other item of the run,
// so one range scan reads its scores; other runs' rows in it are skipped.
func (s *Store) addVerdicts(ctx context.Context, items []ItemView, judges map[int64]string) error {
	if len(items) == 0 {
		return nil
	}
	at := make(map[int64]*ItemView, len(items))
	for i := range items {
		at[items[i].ID] = &items[i]
	}
	lo, hi := items[0].ID, items[len(items)-1].ID
	rows, err := s.conn(ctx).Raw(`SELECT item_id, run_judge_id, source, metric, reasoning FROM scores
		WHERE item_id BETWEEN ? AND ? ORDER BY item_id, id`, lo, hi).Rows()
	if err != nil {
		return fmt.Errorf("store: export verdicts: %w", err)
	}
	defer rows.Close()
	judged := make(map[int64]bool, len(items))
	checks := map[int64][]string{}
	for rows.Next() {
		var id int64
		var judge *int64
		var source, metric, reasoning string
		if err := rows.Scan(&id, &judge, &source, &metric, &reasoning); err != nil {
			return fmt.Errorf("store: export verdicts: %w", err)
		}
		v, ok := at[id]
		switch {
		case !ok:
		case metric == "score" && !judged[id]:
			judged[id], v.Judge, v.Reasoning = true, source, reasoning
			if name, ok := judges[derefOr(judge, 0)]; ok {
				v.Judge = name // COALESCE(j.name, sc.source)
			}
		case strings.HasPrefix(source, "check:"):
			checks[id] = append(checks[id], source)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: export verdicts: %w", err)
	}
	for id, sources := range checks {
		if !judged[id] {
			at[id].Judge = strings.Join(sources, " ")
		}
	}
	return s.addGrades(ctx, lo, hi, at)
}

// derefOr is *p, or def when p is nil.
func derefOr(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// byItemIDs runs fn over item ids as a WHERE clause on column: a range
// (BETWEEN) when the ids are dense, as an export's batch is, which
// PostgreSQL reads in one index scan where an IN list of a thousand ids
// costs a probe each and a slow plan; else IN lists of at most 1,000. A
// range may bring rows of items not asked for: fn keeps only those keep
// accepts.
func byItemIDs(column string, ids []int64, fn func(where string, args []any, keep func(int64) bool) error) error {
	if len(ids) >= 100 {
		lo, hi := slices.Min(ids), slices.Max(ids)
		if hi-lo < 2*int64(len(ids)) {
			want := make(map[int64]bool, len(ids))
			for _, id := range ids {
				want[id] = true
			}
			return fn(column+" BETWEEN ? AND ?", []any{lo, hi}, func(id int64) bool { return want[id] })
		}
	}
	return inChunks(ids, func(part []int64) error {
		return fn(column+" IN ?", []any{part}, func(int64) bool { return true })
	})
}

// addGrades sets the grade of each item of at (ids lo to hi) that has one.
func (s *Store) addGrades(ctx context.Context, lo, hi int64, at map[int64]*ItemView) error {
	rows, err := s.conn(ctx).Raw(`SELECT item_id, grade FROM grades WHERE item_id BETWEEN ? AND ?`, lo, hi).Rows()
	if err != nil {
		return fmt.Errorf("store: export grades: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var grade string
		if err := rows.Scan(&id, &grade); err != nil {
			return fmt.Errorf("store: export grades: %w", err)
		}
		if v, ok := at[id]; ok {
			v.Grade = &grade
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: export grades: %w", err)
	}
	return nil
}
