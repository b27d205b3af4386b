package store

import (
	"context"
	"fmt"
)

// TaskExport picks the tasks an export writes: every task, or those of a
// collection, a category and/or a use case (all the given filters apply).
type TaskExport struct {
	CollectionID int64
	Category     string
	UseCase      string
}

// exportBatch is how many tasks EachTask reads at a time.
const exportBatch = 500

// EachTask calls fn with every task f picks, by task_id, reading them in
// batches (keyed on task_key, so no batch is skipped or read twice) so that
// an export of many tasks streams instead of being held in memory. An
// unknown collection is a NotFoundError before fn is called.
func (s *Store) EachTask(ctx context.Context, f TaskExport, fn func(*Task) error) error {
	if f.CollectionID != 0 {
		var n int64
		if err := s.conn(ctx).Model(&Collection{}).Where("id = ?", f.CollectionID).Count(&n).Error; err != nil {
			return fmt.Errorf("store: export tasks: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("store: export tasks: %w", &NotFoundError{What: "collection", ID: f.CollectionID})
		}
	}
	last := ""
	for {
		q := s.conn(ctx).Model(&Task{}).Where("task_key > ?", last)
		if f.CollectionID != 0 {
			q = q.Where("id IN (SELECT task_id FROM collection_tasks WHERE collection_id = ?)", f.CollectionID)
		}
		if f.Category != "" {
			q = q.Where("category = ?", f.Category)
		}
		if f.UseCase != "" {
			q = q.Where("usecase = ?", f.UseCase)
		}
		var batch []Task
		if err := q.Order("task_key").Limit(exportBatch).Find(&batch).Error; err != nil {
			return fmt.Errorf("store: export tasks: %w", err)
		}
		for i := range batch {
			if err := fn(&batch[i]); err != nil {
				return err
			}
		}
		if len(batch) < exportBatch {
			return nil
		}
		last = batch[len(batch)-1].TaskKey
	}
}
