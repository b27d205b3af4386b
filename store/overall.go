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

// TaskOveralls computes every (target, task) overall of a run from its
// score rows and the weights given; scores of (source, metric) pairs not in
// weights are left out. Items without any such score have no overall, and
// so have items not COMPLETED: one waiting for its judge (or for the rest of
// a panel) has only part of its scores, e.g. a check's alone.
func (s *Store) TaskOveralls(ctx context.Context, runID int64, weights []SourceWeight) ([]TaskOverall, error) {
	out := []TaskOverall{}
	if len(weights) == 0 {
		return out, nil
	}
	cte, args, err := itemOveralls(runID, 0, weights)
	if err != nil {
		return nil, fmt.Errorf("store: task overalls: %w", err)
	}
	args = append(args, ItemCompleted)
	q := cte + `
		SELECT i.run_target_id, i.run_task_id, AVG(p.overall) AS overall, COUNT(*) AS items
		FROM per_item p JOIN items i ON i.id = p.item_id
		WHERE i.status = ?
		GROUP BY i.run_target_id, i.run_task_id
		ORDER BY i.run_target_id, i.run_task_id`
	rows, err := s.conn(ctx).Raw(q, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: task overalls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t TaskOverall
		if err := rows.Scan(&t.RunTargetID, &t.RunTaskID, &t.Overall, &t.Items); err != nil {
			return nil, fmt.Errorf("store: task overalls: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: task overalls: %w", err)
	}
	return out, nil
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
// whose per_item (item_id, overall) holds every item of the run (or the one
// item, when itemID is not 0) that has a weighted score. The weights travel
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
			SELECT item_id, SUM(weight * (score - lo) / (hi - lo)) / SUM(weight) AS overall
			FROM matched WHERE weight > 0
			GROUP BY item_id)`, args, nil
}
