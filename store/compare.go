package store

import (
	"context"
	"database/sql"
	"fmt"
)

// TaskResult is one target's result on one task of a run, averaged over repeats.
type TaskResult struct {
	RunTargetID int64    `json:"target_id"`
	TaskKey     string   `json:"task_id" gorm:"column:task_key"`
	Category    string   `json:"category"`
	UseCase     string   `json:"usecase" gorm:"column:usecase"`
	Items       int64    `json:"items"`
	Scored      int64    `json:"scored"`
	Passed      int64    `json:"passed"`
	Score       *float64 `json:"score"` // mean over the repeats that were scored
	MinScore    *float64 `json:"min_score"`
	MaxScore    *float64 `json:"max_score"`
	TimeMs      *float64 `json:"time_ms"`
	TPS         *float64 `json:"tps"`
	CostUSD     *float64 `json:"cost_usd" gorm:"column:cost_usd"`
}

// TaskResults lists every (target, task) result of a run, for statistics
// over tasks: confidence intervals, paired tests and repeat consistency.
func (s *Store) TaskResults(ctx context.Context, runID int64) ([]TaskResult, error) {
	var out []TaskResult
	err := s.EachTaskResult(ctx, runID, func(r TaskResult) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// EachTaskResult calls fn with every (target, task) result of a run, by
// target and then task id, without holding them: a million-item run has
// half a million. An error from fn ends the scan and is returned.
func (s *Store) EachTaskResult(ctx context.Context, runID int64, fn func(TaskResult) error) error {
	judges, err := s.RunJudges(ctx, runID)
	if err != nil {
		return err
	}
	// Group the items alone (walking the target/task index), then name the
	// tasks. The rows are scanned by hand: GORM's reflective scan allocated
	// several times their size.
	rows, err := s.conn(ctx).Raw(`SELECT g.run_target_id, rt.task_key, rt.category, rt.usecase, g.items, g.scored, g.passed,
			g.score, g.min_score, g.max_score, g.time_ms, g.tps, g.cost_usd FROM (
			SELECT i.run_target_id, i.run_task_id, COUNT(*) AS items, COUNT(i.score) AS scored,
				SUM(CASE WHEN i.score >= ? THEN 1 ELSE 0 END) AS passed, AVG(i.score) AS score, MIN(i.score) AS min_score,
				MAX(i.score) AS max_score, AVG(i.time_ms) AS time_ms, AVG(i.tokens_per_s) AS tps, SUM(i.cost_usd) AS cost_usd
			FROM items i WHERE i.run_id = ? GROUP BY i.run_target_id, i.run_task_id) g
		JOIN run_tasks rt ON rt.id = g.run_task_id
		ORDER BY g.run_target_id, rt.task_key`, PassThreshold(judges), runID).Rows()
	if err != nil {
		return fmt.Errorf("store: task results: %w", err)
	}
	defer rows.Close()
	// Every target repeats each task's id, category and use case: one copy
	// of each is kept.
	names := map[string]string{}
	intern := func(b sql.RawBytes) string {
		if s, ok := names[string(b)]; ok {
			return s
		}
		s := string(b)
		names[s] = s
		return s
	}
	// The scan's destinations are made once, not per row; a row's numbers
	// share one allocation.
	var scanned TaskResult
	var key, category, usecase sql.RawBytes
	var nums [6]sql.NullFloat64
	dest := []any{&scanned.RunTargetID, &key, &category, &usecase, &scanned.Items, &scanned.Scored, &scanned.Passed,
		&nums[0], &nums[1], &nums[2], &nums[3], &nums[4], &nums[5]}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("store: task results: %w", err)
		}
		r := scanned
		r.TaskKey, r.Category, r.UseCase = intern(key), intern(category), intern(usecase)
		vals := new([6]float64)
		for i, p := range [...]**float64{&r.Score, &r.MinScore, &r.MaxScore, &r.TimeMs, &r.TPS, &r.CostUSD} {
			if nums[i].Valid {
				vals[i] = nums[i].Float64
				*p = &vals[i]
			}
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: task results: %w", err)
	}
	return nil
}

// Answer is a target's answer to a task (its first repeat).
type Answer struct {
	ItemID      int64      `json:"item_id"`
	RunID       int64      `json:"run_id"`
	RunTargetID int64      `json:"target_id"`
	TaskKey     string     `json:"task_id" gorm:"column:task_key"`
	Question    string     `json:"question"`
	Response    *string    `json:"response"`
	Score       *float64   `json:"score"`
	Status      ItemStatus `json:"status"`
}

// Answers returns the first-repeat answers of a run to the given tasks.
func (s *Store) Answers(ctx context.Context, runID int64, taskKeys []string) ([]Answer, error) {
	var out []Answer
	if len(taskKeys) == 0 {
		return out, nil
	}
	err := s.conn(ctx).Table("items i").
		Select("i.id AS item_id, i.run_id, i.run_target_id, rt.task_key, rt.question, i.response, i.score, i.status").
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Where("i.run_id = ? AND i.repeat_index = 1 AND rt.task_key IN ?", runID, taskKeys).
		Order("i.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: answers: %w", err)
	}
	return out, nil
}

// JudgeProbe is what a judge's reliability card needs from one run: each
// overall score with the length of the answer it judged, and the spread of
// its scores on answers it judged more than once (identical text).
type JudgeProbe struct {
	Lengths []JudgeLength
	Repeats []JudgeRepeat
}

// JudgeLength is one overall score and the judged answer's length in characters.
type JudgeLength struct {
	RunJudgeID int64
	Score      float64
	Length     int64
}

// JudgeRepeat is a judge's scores of one identical answer judged n times.
type JudgeRepeat struct {
	RunJudgeID int64
	N          int64
	MinScore   float64
	MaxScore   float64
}

// JudgeProbes reads a run's judge scores for the reliability card.
func (s *Store) JudgeProbes(ctx context.Context, runID int64) (*JudgeProbe, error) {
	out := &JudgeProbe{}
	// A row per verdict: scanned by hand, as GORM's reflective scan of a
	// million rows allocated several times their size.
	rows, err := s.conn(ctx).Raw(`SELECT sc.run_judge_id, sc.score, LENGTH(COALESCE(i.response, '')) AS length
		FROM scores sc JOIN items i ON i.id = sc.item_id
		WHERE sc.run_id = ? AND sc.metric = 'score' AND sc.run_judge_id IS NOT NULL
		ORDER BY sc.id`, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: judge lengths: %w", err)
	}
	defer rows.Close()
	var l JudgeLength
	dest := []any{&l.RunJudgeID, &l.Score, &l.Length}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: judge lengths: %w", err)
		}
		out.Lengths = append(out.Lengths, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: judge lengths: %w", err)
	}
	rows.Close()
	err = s.conn(ctx).Table("scores sc").
		Select("sc.run_judge_id, COUNT(*) AS n, MIN(sc.score) AS min_score, MAX(sc.score) AS max_score").
		Joins("JOIN items i ON i.id = sc.item_id").
		Where("sc.run_id = ? AND sc.metric = 'score' AND sc.run_judge_id IS NOT NULL AND i.response IS NOT NULL", runID).
		Group("sc.run_judge_id, i.run_task_id, i.response").
		Having("COUNT(*) > 1").Scan(&out.Repeats).Error
	if err != nil {
		return nil, fmt.Errorf("store: judge repeats: %w", err)
	}
	return out, nil
}

// ItemAnswer returns one item's answer with its task id.
func (s *Store) ItemAnswer(ctx context.Context, itemID int64) (*Answer, error) {
	var out []Answer
	err := s.conn(ctx).Table("items i").
		Select("i.id AS item_id, i.run_id, i.run_target_id, rt.task_key, rt.question, i.response, i.score, i.status").
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Where("i.id = ?", itemID).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: item answer: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("store: item answer: %w", &NotFoundError{What: "item", ID: itemID})
	}
	return &out[0], nil
}
