package store

import (
	"context"
	"fmt"
)

// ItemsScores lists the scores of the given items, keyed by item id, each in
// id order: a batch of items costs one query, however many scores it has.
func (s *Store) ItemsScores(ctx context.Context, itemIDs []int64) (map[int64][]ScoreView, error) {
	out := make(map[int64][]ScoreView, len(itemIDs))
	err := byItemIDs("sc.item_id", itemIDs, func(where string, args []any, keep func(int64) bool) error {
		var rows []ScoreView
		err := s.conn(ctx).Table("scores sc").
			Select("sc.id, sc.item_id, COALESCE(j.name, sc.source) AS judge, sc.metric, sc.score, sc.reasoning").
			Joins("LEFT JOIN run_judges j ON j.id = sc.run_judge_id").
			Where(where, args...).Order("sc.item_id, sc.id").Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("store: items scores: %w", err)
		}
		for _, r := range rows {
			if keep(r.ItemID) {
				out[r.ItemID] = append(out[r.ItemID], r)
			}
		}
		return nil
	})
	return out, err
}

// ItemsGrades returns the human grades of the given items that have one.
func (s *Store) ItemsGrades(ctx context.Context, itemIDs []int64) (map[int64]Grade, error) {
	out := map[int64]Grade{}
	err := byItemIDs("item_id", itemIDs, func(where string, args []any, keep func(int64) bool) error {
		var rows []Grade
		if err := s.conn(ctx).Where(where, args...).Find(&rows).Error; err != nil {
			return fmt.Errorf("store: items grades: %w", err)
		}
		for _, g := range rows {
			if keep(g.ItemID) {
				out[g.ItemID] = g
			}
		}
		return nil
	})
	return out, err
}

// EachRunTask streams a run's frozen tasks in order, a batch at a time, so
// an export's memory does not grow with the run's tasks.
func (s *Store) EachRunTask(ctx context.Context, runID int64, fn func(*RunTask) error) error {
	const batch = 1000
	var after int64
	for {
		var rows []RunTask
		if err := s.conn(ctx).Where("run_id = ? AND id > ?", runID, after).Order("id").Limit(batch).Find(&rows).Error; err != nil {
			return fmt.Errorf("store: run tasks: %w", err)
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		if len(rows) < batch {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}

// RunTaskList lists a run's frozen tasks in order.
func (s *Store) RunTaskList(ctx context.Context, runID int64) ([]RunTask, error) {
	out := []RunTask{}
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: run tasks: %w", err)
	}
	return out, nil
}
