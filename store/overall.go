package store

import (
	"context"
	"fmt"
	"strings"
)

// SourceWeight says how one (source, metric) of a run's scores enters an
// item's overall: normalised by (score − Lo) / (Hi − Lo), then weighed. The
// use-case layer (package runs) decides the weights and scales; the store
// only applies them. Source AnyCheck stands for every check without a
// weight of its own.
type SourceWeight struct {
	Source string
	Metric string
	Lo, Hi float64
	Weight float64
}

// AnyCheck is the SourceWeight source that matches every "check:<type>".
const AnyCheck = "check:*"

// TaskOverall is one target's overall on one task: the mean over the task's
// scored items (repeats) of each item's weighted mean of normalised scores.
type TaskOverall struct {
	RunTargetID int64   `json:"target_id"`
	RunTaskID   int64   `json:"run_task_id"`
	Overall     float64 `json:"overall"`
	Items       int64   `json:"items"`
}

// taskOverallsSelect is the (target, task) overalls of a run's COMPLETED
// items with an overall, in (target, task) order: the one definition of a
// task's overall that TaskOveralls lists and TargetOveralls sums. Its
// placeholders are the run and, when targets is true, the target ids.
func taskOverallsSelect(targets bool) string {
	where := ""
	if targets {
		where = " AND run_target_id IN ?"
	}
	return `SELECT run_target_id, run_task_id, AVG(overall_sum / overall_weight) AS overall, COUNT(*) AS items
		FROM items WHERE run_id = ? AND status = '` + string(ItemCompleted) + `' AND overall_weight > 0` + where + `
		GROUP BY run_target_id, run_task_id
		ORDER BY run_target_id, run_task_id`
}

// TaskOveralls computes the (target, task) overalls of a run's targets
// given (every target's if none is), computing first the items' overalls
// not known yet from the scores and the weights given (see
// FillItemOveralls); scores of (source, metric) pairs not in weights are
// left out. Items without any such score have no overall, and so have items
// not COMPLETED: one waiting for its judge (or for the rest of a panel) has
// only part of its scores, e.g. a check's alone.
func (s *Store) TaskOveralls(ctx context.Context, runID int64, weights []SourceWeight, targets ...int64) ([]TaskOverall, error) {
	out := []TaskOverall{}
	if len(weights) == 0 {
		return out, nil
	}
	if err := s.FillItemOveralls(ctx, runID, weights); err != nil {
		return nil, err
	}
	args := []any{runID}
	if len(targets) > 0 {
		args = append(args, targets)
	}
	err := s.streamedRead(ctx, func(tx *Store) error {
		rows, err := tx.conn(ctx).Raw(taskOverallsSelect(len(targets) > 0), args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t TaskOverall
			if err := rows.Scan(&t.RunTargetID, &t.RunTaskID, &t.Overall, &t.Items); err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: task overalls: %w", err)
	}
	return out, nil
}

// TargetOverallSums are one target's task overalls (see TaskOveralls) in sums.
type TargetOverallSums struct {
	RunTargetID int64
	Tasks       int64   // tasks with an overall
	Sum, SumSq  float64 // of their overalls, and of their squares
	Items       int64   // the items they average
}

// TargetOveralls sums each target's task overalls in the database, in
// target order (a target with none is left out): a million-item run has
// half a million of them, and an interval over that many tasks needs only
// their count, sum and sum of squares.
func (s *Store) TargetOveralls(ctx context.Context, runID int64, weights []SourceWeight) ([]TargetOverallSums, error) {
	out := []TargetOverallSums{}
	if len(weights) == 0 {
		return out, nil
	}
	if err := s.FillItemOveralls(ctx, runID, weights); err != nil {
		return nil, err
	}
	err := s.streamedRead(ctx, func(tx *Store) error {
		return tx.conn(ctx).Raw(`SELECT run_target_id, COUNT(*) AS tasks, SUM(overall) AS sum, SUM(overall * overall) AS sum_sq, CAST(SUM(items) AS BIGINT) AS items
			FROM (`+taskOverallsSelect(false)+`) t GROUP BY run_target_id ORDER BY run_target_id`, runID).Scan(&out).Error
	})
	if err != nil {
		return nil, fmt.Errorf("store: target overalls: %w", err)
	}
	return out, nil
}

// FillItemOveralls computes, from their scores and the weights given, the
// overall of the run's COMPLETED items whose overall is not known: items
// of runs older than the column, bulk-filled or rejudged ones. The engine
// keeps the rest as it writes their scores (Weigh), so this is a read of an
// index that finds none, except once per such run.
func (s *Store) FillItemOveralls(ctx context.Context, runID int64, weights []SourceWeight) error {
	if len(weights) == 0 {
		return nil // nothing weighs: no overall to compute, as TaskOveralls reads none
	}
	var unknown []int64
	err := s.conn(ctx).Raw(`SELECT id FROM items WHERE run_id = ? AND status = ? AND overall_weight IS NULL LIMIT 1`,
		runID, ItemCompleted).Scan(&unknown).Error
	if err != nil {
		return fmt.Errorf("store: fill item overalls: %w", err)
	}
	if len(unknown) == 0 {
		return nil
	}
	cte, args, err := itemOveralls(runID, 0, weights)
	if err != nil {
		return fmt.Errorf("store: fill item overalls: %w", err)
	}
	// One statement, so one snapshot: an item that completes while it runs
	// is not taken for one without a weighted score (its scores unseen).
	err = s.conn(ctx).Exec(cte+` UPDATE items SET overall_sum = q.overall_sum, overall_weight = q.overall_weight
		FROM (SELECT i.id, COALESCE(p.overall_sum, 0) AS overall_sum, COALESCE(p.overall_weight, 0) AS overall_weight
			FROM items i LEFT JOIN per_item p ON p.item_id = i.id
			WHERE i.run_id = ? AND i.status = ? AND i.overall_weight IS NULL) q
		WHERE items.id = q.id AND items.status = ? AND items.overall_weight IS NULL`,
		append(args, runID, ItemCompleted, ItemCompleted)...).Error
	if err != nil {
		return fmt.Errorf("store: fill item overalls: %w", err)
	}
	return nil
}

// Weigh is an item's scores' part of its overall, as itemOveralls defines
// it: the sum of weight × normalised score over the scores that weigh, and
// the sum of their weights. The engine adds it to the item's overall as it
// writes the scores; with weights nil (not known), both are nil, and the
// item's overall is computed from its scores when read.
func Weigh(weights []SourceWeight, scores []Score) (sum, weight *float64) {
	if weights == nil {
		return nil, nil
	}
	var s, w float64
	for _, sc := range scores {
		if sw, ok := WeightFor(weights, sc.Source, sc.Metric); ok && sw.Weight > 0 {
			s += sw.Weight * (sc.Score - sw.Lo) / (sw.Hi - sw.Lo)
			w += sw.Weight
		}
	}
	return &s, &w
}

// WeightFor is the weight row a score of (source, metric) matches: its
// own, else, for a check, AnyCheck's; false when the score does not count.
func WeightFor(weights []SourceWeight, source, metric string) (SourceWeight, bool) {
	for _, w := range weights {
		if w.Source == source && w.Metric == metric {
			return w, true
		}
	}
	if strings.HasPrefix(source, "check:") {
		for _, w := range weights {
			if w.Source == AnyCheck {
				return w, true
			}
		}
	}
	return SourceWeight{}, false
}

// ItemOverall is one item's weighted mean of normalised scores, 0–1, as
// TaskOveralls averages them; nil when the item has no weighted score.
// (Whether an unfinished item's overall counts is the caller's to say.)
func (s *Store) ItemOverall(ctx context.Context, runID, itemID int64, weights []SourceWeight) (*float64, error) {
	if len(weights) == 0 {
		return nil, nil
	}
	cte, args, err := itemOveralls(runID, itemID, weights)
	if err != nil {
		return nil, fmt.Errorf("store: item overall: %w", err)
	}
	var out []float64
	if err := s.conn(ctx).Raw(cte+` SELECT overall FROM per_item`, args...).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("store: item overall: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &out[0], nil
}

// itemOveralls is the one definition of an item's overall: a WITH clause
// whose per_item (item_id, overall_sum, overall_weight, overall) holds every
// item of the run (or the one item, when itemID is not 0) that has a
// weighted score; Weigh is its Go twin, for the scores the engine writes. The weights travel
// as a VALUES list, so one statement does the work whatever the run's
// metrics are.
func itemOveralls(runID, itemID int64, weights []SourceWeight) (string, []any, error) {
	var values strings.Builder
	args := make([]any, 0, len(weights)*5+2)
	for i, w := range weights {
		if w.Hi <= w.Lo || w.Weight < 0 || w.Weight != w.Weight {
			return "", nil, fmt.Errorf("bad weight for %s/%s", w.Source, w.Metric)
		}
		if i > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS DOUBLE PRECISION), CAST(? AS DOUBLE PRECISION), CAST(? AS DOUBLE PRECISION))")
		args = append(args, w.Source, w.Metric, w.Lo, w.Hi, w.Weight)
	}
	args = append(args, runID, itemID, itemID)
	return `WITH w (source, metric, lo, hi, weight) AS (VALUES ` + values.String() + `),
		matched AS (
			SELECT sc.item_id, sc.score, COALESCE(w.lo, wc.lo) AS lo, COALESCE(w.hi, wc.hi) AS hi, COALESCE(w.weight, wc.weight) AS weight
			FROM scores sc
			LEFT JOIN w ON w.source = sc.source AND w.metric = sc.metric
			LEFT JOIN w wc ON wc.source = '` + AnyCheck + `' AND sc.source LIKE 'check:%'
			WHERE sc.run_id = ? AND (? = 0 OR sc.item_id = ?)),
		per_item AS (
			SELECT item_id, SUM(weight * (score - lo) / (hi - lo)) AS overall_sum, SUM(weight) AS overall_weight,
				SUM(weight * (score - lo) / (hi - lo)) / SUM(weight) AS overall
			FROM matched WHERE weight > 0
			GROUP BY item_id)`, args, nil
}
