package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"gorm.io/gorm"
)

// runStartLock is the PostgreSQL advisory lock that serialises run starts
// across processes, so the active-run limit holds, and that keeps the
// purge of deleted runs away from a run whose items are being filled.
const runStartLock = 7271001

// itemFill is the run whose items a creation makes: one per (task, target,
// repeat), numbered from first in the order the claim and the pages read
// them by id (repeat by repeat, each target by position through the tasks
// by id).
type itemFill struct {
	runID int64
	// repeats is 0 when build made the items itself (an imported run).
	repeats int
	now     time.Time
	// tasks and targets are the run's counts, first the first reserved id
	// (PostgreSQL).
	tasks, targets int64
	first          int64
}

func (f itemFill) pending() bool { return f.repeats > 0 }

func (f itemFill) size() int64 { return f.tasks * f.targets * int64(f.repeats) }

// parallelFillItems is the size from which a run's items are filled in
// parallel on PostgreSQL; a smaller run's items take one statement in its
// creation's transaction, quicker than hiding, filling and showing it.
const parallelFillItems = 50_000

// itemFillParts is how many statements fill a run's items at once on
// PostgreSQL: one backend is CPU-bound writing the rows and their seven
// index entries, so more parts use more of the server's cores.
const itemFillParts = 4

// createRun runs build, which writes a new run's rows and sets fill to the
// items to make (leaving repeats 0 when it made them), then makes them, and
// returns the run's id.
//
// On SQLite, and within a caller's transaction (an imported run, which
// makes its items itself), everything is one transaction. On PostgreSQL a
// million items take one backend many seconds, so a run of
// parallelFillItems or more commits hidden and several connections fill
// its items at once (createThenFill).
func (s *Store) createRun(ctx context.Context, fill *itemFill, build func(tx *Store) error) (int64, error) {
	if s.dialect == Postgres && !s.inTransaction() {
		err := s.createThenFill(ctx, fill, build)
		return fill.runID, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		if err := build(tx); err != nil || !fill.pending() {
			return err
		}
		if err := tx.createItems(ctx, *fill); err != nil {
			return err
		}
		return tx.fillPartDone(0)
	})
	return fill.runID, err
}

// createThenFill makes a run of fewer than parallelFillFrom items in one
// transaction, as createRun does elsewhere. A bigger one it commits hidden
// (deleted_at set: no list, lookup or claim sees it), fills its items from
// several connections at once, each part its own block of reserved ids,
// then shows the run in one statement. The run-start lock is held throughout, on one connection: run
// starts wait as they did for the one transaction, and the purge of deleted
// runs waits too, so a creation that fails or dies midway (its connection,
// and the lock, gone) leaves a hidden run the purge then removes.
func (s *Store) createThenFill(ctx context.Context, fill *itemFill, build func(tx *Store) error) error {
	return s.conn(ctx).Connection(func(c *gorm.DB) error {
		pinned := s.on(c)
		if err := c.Exec("SELECT pg_advisory_lock(?)", runStartLock).Error; err != nil {
			return fmt.Errorf("store: lock run starts: %w", err)
		}
		defer pinned.unlockRunStarts(ctx)
		inline := false // a small run's items are made in its own transaction
		err := pinned.Transact(ctx, func(tx *Store) error {
			if err := build(tx); err != nil || !fill.pending() {
				return err
			}
			if err := tx.reserveItemIDs(ctx, fill); err != nil {
				return err
			}
			if inline = fill.size() < s.parallelFillFrom; inline {
				if err := tx.insertItemRange(ctx, *fill, 0, fill.size()); err != nil {
					return err
				}
				return tx.fillPartDone(0)
			}
			return tx.hide(ctx, fill)
		})
		if err != nil || !fill.pending() || inline {
			return err
		}
		if err := s.fillItems(ctx, *fill, pinned); err != nil {
			return err
		}
		return pinned.showFilled(ctx, fill.runID)
	})
}

// unlockRunStarts releases the run-start lock even when ctx has ended, so
// the connection goes back to the pool without it. The unlock fails only
// when the connection is broken, and then its session, with its locks, has
// ended.
func (s *Store) unlockRunStarts(ctx context.Context) {
	_ = s.conn(context.WithoutCancel(ctx)).Exec("SELECT pg_advisory_unlock(?)", runStartLock).Error
}

// reserveItemIDs counts the new run's tasks and targets and reserves a
// block of item ids for their items. setval after nextval is not atomic:
// it is safe because every insert of items takes its ids under the
// run-start lock, held here (run creation, re-runs, imported runs).
func (s *Store) reserveItemIDs(ctx context.Context, fill *itemFill) error {
	err := s.conn(ctx).Raw(`SELECT (SELECT count(*) FROM run_tasks WHERE run_id = ?), (SELECT count(*) FROM run_targets WHERE run_id = ?)`,
		fill.runID, fill.runID).Row().Scan(&fill.tasks, &fill.targets)
	if err != nil {
		return fmt.Errorf("store: count run %d's tasks: %w", fill.runID, err)
	}
	if fill.size() == 0 {
		return invalid("collection_ids", "the chosen collections hold no tasks; add tasks first")
	}
	var last int64
	if err := s.conn(ctx).Raw(`SELECT setval('items_id_seq', nextval('items_id_seq') + ? - 1)`, fill.size()).Row().Scan(&last); err != nil {
		return fmt.Errorf("store: reserve item ids: %w", err)
	}
	fill.first = last - fill.size() + 1
	return nil
}

// hide marks the new run deleted until its items are in.
func (s *Store) hide(ctx context.Context, fill *itemFill) error {
	if err := s.conn(ctx).Exec(`UPDATE runs SET deleted_at = ? WHERE id = ?`, fill.now, fill.runID).Error; err != nil {
		return fmt.Errorf("store: hide run %d: %w", fill.runID, err)
	}
	return nil
}

// showFilled makes the filled run visible: to lists, lookups and claims.
func (s *Store) showFilled(ctx context.Context, runID int64) error {
	res := s.conn(ctx).Exec(`UPDATE runs SET deleted_at = NULL WHERE id = ?`, runID)
	if res.Error != nil {
		return fmt.Errorf("store: show run %d: %w", runID, res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("store: show run %d: the hidden run is gone", runID)
	}
	return nil
}

// fillItems inserts a hidden run's items on PostgreSQL in itemFillParts
// parts over contiguous blocks of the reserved ids, each part in its own
// transaction. The pinned connection, which holds the run-start lock, works
// through the parts, and spare connections of the pool help at once; it
// takes none from the pool, whose connections callers waiting for that lock
// may all hold. A failed part does not stop the others: the run stays
// hidden, and the purge removes what the parts wrote.
func (s *Store) fillItems(ctx context.Context, fill itemFill, pinned *Store) error {
	parts := make(chan [3]int64, itemFillParts) // part, lo, hi
	n := fill.size()
	for p := range int64(itemFillParts) {
		if lo, hi := n*p/itemFillParts, n*(p+1)/itemFillParts; lo < hi {
			parts <- [3]int64{p, lo, hi}
		}
	}
	close(parts)
	work := func(st *Store) error {
		var errs []error
		for part := range parts {
			errs = append(errs, st.Transact(ctx, func(tx *Store) error {
				if err := tx.insertItemRange(ctx, fill, part[1], part[2]); err != nil {
					return err
				}
				return tx.fillPartDone(int(part[0]))
			}))
		}
		return errors.Join(errs...)
	}
	var helpers errgroup.Group
	for range itemFillParts - 1 {
		helpers.Go(func() error { return s.helpFill(ctx, work) })
	}
	err := errors.Join(work(pinned), helpers.Wait())
	if err != nil {
		return fmt.Errorf("store: fill run %d's items: %w", fill.runID, err)
	}
	return nil
}

// spareConnWait is how long a fill waits for a spare connection to help.
const spareConnWait = 20 * time.Millisecond

// helpFill runs work on a connection of the pool if one is spare now, and
// does nothing otherwise.
func (s *Store) helpFill(ctx context.Context, work func(*Store) error) error {
	wait, cancel := context.WithTimeout(ctx, spareConnWait)
	defer cancel()
	got := false
	err := s.conn(wait).Connection(func(c *gorm.DB) error {
		got = true
		return work(s.on(c))
	})
	if !got && ctx.Err() == nil {
		return nil // no spare connection: the others do the parts
	}
	return err
}

// fillPartDone runs the tests' fillPartDoneFunc, if any.
func (s *Store) fillPartDone(part int) error {
	if s.fillPartDoneFunc == nil {
		return nil
	}
	return s.fillPartDoneFunc(part)
}

// inTransaction reports whether s works within a transaction (Transact's).
func (s *Store) inTransaction() bool {
	_, ok := s.db.Statement.ConnPool.(gorm.TxCommitter)
	return ok
}
