package store

import (
	"context"
	"fmt"
	"time"
)

// GradingEntry is one item of a run's grading queue.
type GradingEntry struct {
	ItemID int64
	// Spread is how far the judges' overall scores of the item lie apart, as
	// a fraction of their scales (0: they agree, or one judge scored it).
	Spread float64
	// GradedAt is when a person last graded the item; nil while ungraded.
	GradedAt *time.Time
}

// GradingQueue lists the items of a run that match f's status and model (f's
// paging is ignored) in id order, each with its judges' disagreement and its
// grade time, for the grading page to order and count.
func (s *Store) GradingQueue(ctx context.Context, runID int64, f ItemFilter) ([]GradingEntry, error) {
	q, err := s.itemFilterQuery(ctx, runID, f)
	if err != nil {
		return nil, err
	}
	// Scores are brought to 0…1 on each judge's own scale, so a panel that
	// mixes a 0–5 and a 1–10 style compares like with like.
	const spread = `LEFT JOIN (SELECT sc.item_id,
			MAX((sc.score - j.scale_min) / (j.scale_max - j.scale_min)) - MIN((sc.score - j.scale_min) / (j.scale_max - j.scale_min)) AS spread
		FROM scores sc JOIN run_judges j ON j.id = sc.run_judge_id
		WHERE sc.run_id = ? AND sc.metric = 'score' AND j.scale_max > j.scale_min
		GROUP BY sc.item_id) d ON d.item_id = i.id`
	out := []GradingEntry{}
	err = q.Select("i.id AS item_id, COALESCE(d.spread, 0) AS spread, g.updated_at AS graded_at").
		Joins(spread, runID).
		Joins("LEFT JOIN grades g ON g.item_id = i.id").
		Order("i.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: grading queue: %w", err)
	}
	return out, nil
}

// GradingItem returns an item of a run with its task and target, as a
// person grading it sees them.
func (s *Store) GradingItem(ctx context.Context, runID, itemID int64) (*WorkItem, error) {
	var it Item
	if err := s.conn(ctx).Where("run_id = ?", runID).Take(&it, itemID).Error; err != nil {
		return nil, fmt.Errorf("store: grading item: %w", notFound(err, "item", itemID))
	}
	w := WorkItem{Item: it}
	if err := s.conn(ctx).Take(&w.Task, it.RunTaskID).Error; err != nil {
		return nil, fmt.Errorf("store: grading item task: %w", err)
	}
	if err := s.conn(ctx).Take(&w.Target, it.RunTargetID).Error; err != nil {
		return nil, fmt.Errorf("store: grading item target: %w", err)
	}
	return &w, nil
}
