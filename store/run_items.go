package store

import (
	"context"
	"fmt"
)

// createItems makes a run's items in one statement generated in the
// database (SQLite; see createRun), in the order the claim and the pages
// read items by id: repeat by repeat, each target (by position) through the
// tasks (by id).
func (s *Store) createItems(ctx context.Context, fill itemFill) error {
	res := s.conn(ctx).Exec(`WITH RECURSIVE reps(r) AS (SELECT 1 UNION ALL SELECT r + 1 FROM reps WHERE r < ?)
		INSERT INTO items (run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
		SELECT ?, rt.id, tg.id, reps.r, 'NEW', '{}', ?
		FROM reps CROSS JOIN run_targets tg CROSS JOIN run_tasks rt
		WHERE rt.run_id = ? AND tg.run_id = ? ORDER BY reps.r, tg.position, rt.id`, fill.repeats, fill.runID, fill.now, fill.runID, fill.runID)
	if res.Error != nil {
		return fmt.Errorf("store: create items: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return invalid("collection_ids", "the chosen collections hold no tasks; add tasks first")
	}
	return nil
}

// insertItemRange inserts the items at offsets [lo, hi) of a hidden run's
// reserved ids on PostgreSQL (see fillItems). Each offset names its item:
// the repeat, the target by position and the task by id, so the rows come
// out of generate_series in id order, with no sort.
//
// The three foreign-key checks per row were over half of a million-item
// run's creation, and they cannot fail here: each item's run, task and
// target are rows the creation committed, hidden (see createRun), and the
// only deletes of a hidden run's rows, the purge's, wait for the run-start
// lock the creation holds.
func (s *Store) insertItemRange(ctx context.Context, fill itemFill, lo, hi int64) error {
	return s.withoutKeyChecks(ctx, func() error {
		err := s.conn(ctx).Exec(`INSERT INTO items (id, run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
			SELECT @first + g, @run, (a.tasks)[g % @tasks + 1], (a.targets)[(g / @tasks) % @targets + 1], g / @per_repeat + 1,
				'NEW', '{}', @now
			FROM (SELECT ARRAY(SELECT id FROM run_tasks WHERE run_id = @run ORDER BY id) AS tasks,
				ARRAY(SELECT id FROM run_targets WHERE run_id = @run ORDER BY position) AS targets) a,
				generate_series(CAST(@lo AS bigint), CAST(@hi AS bigint) - 1) g`,
			map[string]any{"first": fill.first, "run": fill.runID, "tasks": fill.tasks, "targets": fill.targets, "per_repeat": fill.tasks * fill.targets,
				"now": fill.now, "lo": lo, "hi": hi}).Error
		if err != nil {
			return fmt.Errorf("store: insert items %d–%d: %w", fill.first+lo, fill.first+hi-1, err)
		}
		return nil
	})
}
