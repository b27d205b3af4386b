package store

import (
	"context"
	"fmt"
)

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
