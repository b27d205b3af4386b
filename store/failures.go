package store

import (
	"context"
	"fmt"
)

// FailureGroup is how many of a run's items failed in one phase for one reason.
type FailureGroup struct {
	Phase  Phase  `json:"phase"`
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// MaxFailureGroups is how many groups RunFailures returns at most: past a
// few, more reasons tell a user nothing the failed items do not.
const MaxFailureGroups = 20

// RunFailures groups a run's FAILED items by the phase they failed in and
// the first line of their error (a judge's raw output follows on the next
// lines, and would make every reason unique), most frequent first.
func (s *Store) RunFailures(ctx context.Context, runID int64) ([]FailureGroup, error) {
	reason := s.failureReason("error")
	out := []FailureGroup{}
	err := s.conn(ctx).Model(&Item{}).Select("failed_phase AS phase, "+reason+" AS reason, COUNT(*) AS count").
		Where("run_id = ? AND status = 'FAILED'", runID). // literal: the partial index idx_items_failures
		Group("failed_phase, " + reason).Order("count DESC, phase, reason").Limit(MaxFailureGroups).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: run failures: %w", err)
	}
	return out, nil
}

// failureReason is the SQL of a failure's reason, the first line of the
// error column col: what RunFailures groups by and ItemFilter.Reason matches.
func (s *Store) failureReason(col string) string {
	if s.dialect == Postgres {
		return "split_part(" + col + ", chr(10), 1)"
	}
	return "CASE WHEN instr(" + col + ", char(10)) > 0 THEN substr(" + col + ", 1, instr(" + col + ", char(10)) - 1) ELSE " + col + " END"
}

// RetryFailed sends every FAILED item of an ended run back to the phase it
// failed in: a benchmark failure to NEW, with its target warming up afresh
// (the failure may have been the model not loading), a judge failure to the
// judge it failed with. Each gets its attempts again; the counts of calls
// made go on. The run is RUNNING again, in the first phase with work. It
// reports how many items it re-queued; ErrConflict while the run is active
// (its retries are still under way) or when it was cancelled.
func (s *Store) RetryFailed(ctx context.Context, runID int64) (int64, error) {
	var n int64
	err := s.Transact(ctx, func(tx *Store) error {
		run, err := tx.Run(ctx, runID)
		if err != nil {
			return err
		}
		if run.Active() {
			return conflict("run %d is %s; retry its failed items once it has ended", runID, run.Status)
		}
		if run.Status == RunCancelled {
			return conflict("run %d was cancelled", runID)
		}
		var bench int64
		err = tx.conn(ctx).Model(&Item{}).Where("run_id = ? AND status = ? AND failed_phase <> ?", runID, ItemFailed, PhaseJudging).Count(&bench).Error
		if err != nil {
			return fmt.Errorf("store: retry failed items: %w", err)
		}
		if bench > 0 {
			res := tx.conn(ctx).Model(&RunTarget{}).
				Where("id IN (SELECT run_target_id FROM items WHERE run_id = ? AND status = ? AND failed_phase <> ?)", runID, ItemFailed, PhaseJudging).
				Updates(map[string]any{"warmup_status": WarmupPending, "warmup_error": "", "warmup_worker": "", "warmup_until": nil})
			if res.Error != nil {
				return fmt.Errorf("store: retry failed items: warm up again: %w", res.Error)
			}
		}
		now := s.now()
		res := tx.conn(ctx).Exec(`UPDATE items SET
				status = CASE failed_phase WHEN ? THEN ? ELSE ? END,
				failed_phase = '', failures = 0, next_retry_at = NULL, updated_at = ?
			WHERE run_id = ? AND status = ?`, PhaseJudging, ItemWaitingForJudge, ItemNew, now, runID, ItemFailed)
		if res.Error != nil {
			return fmt.Errorf("store: retry failed items: %w", res.Error)
		}
		if n = res.RowsAffected; n == 0 {
			return nil
		}
		if err := tx.checkActiveLimit(ctx, runID); err != nil {
			return err
		}
		phase := PhaseJudging
		if bench > 0 {
			phase = PhaseBenchmarking
		}
		// Guarded by the status read above, so a change that lands meanwhile wins.
		res = tx.conn(ctx).Model(&Run{}).Where("id = ? AND status = ?", runID, run.Status).Updates(map[string]any{
			"status": RunRunning, "phase": phase, "finished_at": nil, "error": "", "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("store: retry failed items: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return conflict("run %d changed meanwhile; try again", runID)
		}
		return nil
	})
	return n, err
}
