package store

import (
	"context"
	"fmt"
)

// DeleteRun marks a run deleted: from then on it is in no list, lookup,
// claim, trend or baseline, and PurgeDeletedRuns removes its rows in
// batches. Deleting them here, in one statement, took 98 s for a run of 400k
// items, and SQLite's one connection served no request meanwhile.
func (s *Store) DeleteRun(ctx context.Context, id int64) error {
	return s.Transact(ctx, func(tx *Store) error {
		res := tx.conn(ctx).Delete(&Run{}, id) // soft: sets deleted_at
		if res.Error != nil {
			return fmt.Errorf("store: delete run: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("store: delete run: %w", &NotFoundError{What: "run", ID: id})
		}
		// The few rows KPIs, alerts and trends read go at once, so none of
		// their queries needs to know about deleted runs.
		for _, table := range append([]string{"run_metrics", "kpi_values", "run_evaluations"}, snapshotTables...) {
			if err := tx.conn(ctx).Exec("DELETE FROM "+table+" WHERE run_id = ?", id).Error; err != nil {
				return fmt.Errorf("store: delete run %s: %w", table, err)
			}
		}
		return nil
	})
}

// purgeBatch is how many rows one purge transaction deletes: small enough
// that a request waiting for SQLite's connection waits a fraction of a
// second (an item takes its scores and grade with it).
const purgeBatch = 1000

// PurgeDeletedRuns deletes one batch of the rows of a run marked deleted
// and reports whether any such run may be left; the caller repeats it,
// pausing between batches so other requests get the connection. On
// PostgreSQL it waits while a run is being created (a run whose items are
// being filled is hidden like a deleted one, see createRun): it then
// deletes nothing and reports that runs may be left.
func (s *Store) PurgeDeletedRuns(ctx context.Context) (bool, error) {
	if s.dialect != Postgres {
		return s.purgeNext(ctx)
	}
	var more bool
	err := s.Transact(ctx, func(tx *Store) error {
		var free bool
		if err := tx.conn(ctx).Raw("SELECT pg_try_advisory_xact_lock(?)", runStartLock).Scan(&free).Error; err != nil {
			return fmt.Errorf("store: lock run starts: %w", err)
		}
		if !free {
			more = true // after the pause, it tries again
			return nil
		}
		var err error
		more, err = tx.purgeNext(ctx)
		return err
	})
	return more, err
}

// purgeNext deletes one batch of a deleted run's rows.
func (s *Store) purgeNext(ctx context.Context) (bool, error) {
	var ids []int64
	if err := s.conn(ctx).Unscoped().Model(&Run{}).Where("deleted_at IS NOT NULL").Order("id").Limit(1).Pluck("id", &ids).Error; err != nil {
		return false, fmt.Errorf("store: deleted runs: %w", err)
	}
	if len(ids) == 0 {
		return false, nil
	}
	id := ids[0]
	// Children before parents: comparisons cite items, items cite run_tasks.
	for _, table := range []string{"comparisons", "items", "run_logs", "run_tasks"} {
		res := s.conn(ctx).Exec("DELETE FROM "+table+" WHERE id IN (SELECT id FROM "+table+" WHERE run_id = ? LIMIT ?)", id, purgeBatch)
		if res.Error != nil {
			return false, fmt.Errorf("store: purge run %d %s: %w", id, table, res.Error)
		}
		if res.RowsAffected > 0 {
			return true, nil
		}
	}
	// What is left (targets, judges, collections) is small: the run row takes it along.
	if err := s.conn(ctx).Unscoped().Delete(&Run{}, id).Error; err != nil {
		return false, fmt.Errorf("store: purge run %d: %w", id, err)
	}
	return true, nil
}
