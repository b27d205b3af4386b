package store

import (
	"context"
	"fmt"
	"time"
)

// createItems makes one item per (task, target, repeat) of a run in one
// statement generated in the database, in the order the claim and the pages
// read items by id: repeat by repeat, each target (by position) through the
// tasks (by id).
func (s *Store) createItems(ctx context.Context, runID int64, repeats int, now time.Time) error {
	var rows int64
	err := s.withoutItemKeyChecks(ctx, func() error {
		res := s.conn(ctx).Exec(`WITH RECURSIVE reps(r) AS (SELECT 1 UNION ALL SELECT r + 1 FROM reps WHERE r < ?)
			INSERT INTO items (run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
			SELECT ?, rt.id, tg.id, reps.r, 'NEW', '{}', ?
			FROM reps CROSS JOIN run_targets tg CROSS JOIN run_tasks rt
			WHERE rt.run_id = ? AND tg.run_id = ? ORDER BY reps.r, tg.position, rt.id`, repeats, runID, now, runID, runID)
		rows = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return fmt.Errorf("store: create items: %w", err)
	}
	if rows == 0 {
		return invalid("collection_ids", "the chosen collections hold no tasks; add tasks first")
	}
	return nil
}

// withoutItemKeyChecks runs fn, which inserts a new run's items, without
// PostgreSQL's three foreign-key checks per item row, when the role may
// turn them off (session_replication_role, a superuser's); else, and on
// SQLite, with them. The checks were over half of a million-item run's
// creation, and they cannot fail there: fn takes each item's run, task and
// target from rows this transaction has just created, which no other
// transaction can see, let alone delete, before it commits. The constraints
// stay, with their cascades, for every other write.
func (s *Store) withoutItemKeyChecks(ctx context.Context, fn func() error) error {
	if s.dialect != Postgres {
		return fn()
	}
	var super bool
	if err := s.conn(ctx).Raw(`SELECT current_setting('is_superuser') = 'on'`).Scan(&super).Error; err != nil {
		return fmt.Errorf("read role: %w", err)
	}
	if !super {
		return fn()
	}
	if err := s.conn(ctx).Exec(`SET LOCAL session_replication_role = replica`).Error; err != nil {
		return fmt.Errorf("turn key checks off: %w", err)
	}
	if err := fn(); err != nil {
		return err
	}
	if err := s.conn(ctx).Exec(`SET LOCAL session_replication_role = origin`).Error; err != nil {
		return fmt.Errorf("turn key checks on: %w", err)
	}
	return nil
}
