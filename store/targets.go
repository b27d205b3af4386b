// Run targets as the engine works through them: each group's warm-up, the
// next target with work, and the frozen tasks and targets its claims need.
package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FailTargetItems fails every NEW item of a target, e.g. after its warm-up failed.
func (s *Store) FailTargetItems(ctx context.Context, targetID int64, reason string) (int64, error) {
	res := s.conn(ctx).Model(&Item{}).Where("run_target_id = ? AND status = ?", targetID, ItemNew).
		Updates(map[string]any{"status": ItemFailed, "failed_phase": PhaseBenchmarking, "error": reason, "updated_at": s.now()})
	if res.Error != nil {
		return 0, fmt.Errorf("store: fail target items: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// ClaimWarmup gives one worker the right to warm a target up: true when this
// worker holds it (a lease, so a dead worker's warm-up is taken over).
func (s *Store) ClaimWarmup(ctx context.Context, targetID int64, workerID string, lease time.Duration) (bool, error) {
	now := s.now()
	res := s.conn(ctx).Model(&RunTarget{}).
		Where("id = ? AND warmup_status = ? AND (warmup_worker = '' OR warmup_until < ?)", targetID, WarmupPending, now).
		Updates(map[string]any{"warmup_worker": workerID, "warmup_until": now.Add(lease)})
	if res.Error != nil {
		return false, fmt.Errorf("store: claim warm-up: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// RenewWarmup extends this worker's warm-up lease while the warm-up call runs.
func (s *Store) RenewWarmup(ctx context.Context, targetID int64, workerID string, lease time.Duration) error {
	err := s.conn(ctx).Model(&RunTarget{}).Where("id = ? AND warmup_worker = ? AND warmup_status = ?", targetID, workerID, WarmupPending).
		Update("warmup_until", s.now().Add(lease)).Error
	if err != nil {
		return fmt.Errorf("store: renew warm-up: %w", err)
	}
	return nil
}

// SetWarmup records the outcome of a target's warm-up call.
func (s *Store) SetWarmup(ctx context.Context, targetID int64, status, reason string) error {
	err := s.conn(ctx).Model(&RunTarget{}).Where("id = ?", targetID).
		Updates(map[string]any{"warmup_status": status, "warmup_error": reason, "warmup_worker": "", "warmup_until": nil}).Error
	if err != nil {
		return fmt.Errorf("store: set warm-up: %w", err)
	}
	return nil
}

// WorkItem is a claimed item with what the engine needs to run it.
type WorkItem struct {
	Item
	Task   RunTask
	Target RunTarget
}

// RunTasksFrom lists up to limit of a run's frozen tasks from id fromID on,
// in id order: the engine loads the tasks its claims need a window at a time.
func (s *Store) RunTasksFrom(ctx context.Context, runID, fromID int64, limit int) ([]RunTask, error) {
	var tasks []RunTask
	if err := s.conn(ctx).Where("run_id = ? AND id >= ?", runID, fromID).Order("id").Limit(limit).Find(&tasks).Error; err != nil {
		return nil, fmt.Errorf("store: run tasks from %d: %w", fromID, err)
	}
	return tasks, nil
}

// RunTargets lists a run's targets in order.
func (s *Store) RunTargets(ctx context.Context, runID int64) ([]RunTarget, error) {
	var ts []RunTarget
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("position").Find(&ts).Error; err != nil {
		return nil, fmt.Errorf("store: run targets: %w", err)
	}
	return ts, nil
}

// PendingTargets lists, in the user's order, a run's targets whose items
// are not all benchmarked (NEW or IN_PROGRESS remain); none means
// benchmarking is done. The engine runs the first of each lane (see Lane).
func (s *Store) PendingTargets(ctx context.Context, runID int64) ([]RunTarget, error) {
	var ts []RunTarget
	err := s.conn(ctx).Where("run_id = ? AND EXISTS (SELECT 1 FROM items i WHERE i.run_target_id = run_targets.id AND i.status IN ?)",
		runID, []ItemStatus{ItemNew, ItemInProgress}).
		Order("position").Find(&ts).Error
	if err != nil {
		return nil, fmt.Errorf("store: pending targets: %w", err)
	}
	return ts, nil
}

// LaneHeads keeps the first target of each lane, in order: the groups that
// run now when targets holds a run's pending targets.
func LaneHeads(targets []RunTarget) []RunTarget {
	seen := map[string]bool{}
	var heads []RunTarget
	for _, t := range targets {
		if lane := t.Lane(); !seen[lane] {
			seen[lane] = true
			heads = append(heads, t)
		}
	}
	return heads
}

// TargetCount is how far one target's group has come.
type TargetCount struct {
	RunTargetID int64
	// Answered counts items past benchmarking, Judged those COMPLETED or FAILED.
	Answered, Judged, Total int64
}

// TargetCounts counts each target's items of a run, by target id.
func (s *Store) TargetCounts(ctx context.Context, runID int64) (map[int64]TargetCount, error) {
	var rows []TargetCount
	err := s.conn(ctx).Model(&Item{}).
		Select("run_target_id, COUNT(*) AS total, "+
			"COUNT(CASE WHEN status NOT IN (?, ?) THEN 1 END) AS answered, "+
			"COUNT(CASE WHEN status IN (?, ?) THEN 1 END) AS judged",
			ItemNew, ItemInProgress, ItemCompleted, ItemFailed).
		Where("run_id = ?", runID).Group("run_target_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: target counts: %w", err)
	}
	out := make(map[int64]TargetCount, len(rows))
	for _, r := range rows {
		out[r.RunTargetID] = r
	}
	return out, nil
}

// ReportTargetVersion records the model id a provider reported as a
// target's version, where the target has none yet (the user's own, or
// another process's report, stands).
func (s *Store) ReportTargetVersion(ctx context.Context, targetID int64, model string) error {
	model = strings.TrimSpace(model)
	if len(model) > 255 {
		model = strings.ToValidUTF8(model[:255], "")
	}
	if model == "" {
		return nil
	}
	err := s.conn(ctx).Model(&RunTarget{}).Where("id = ? AND version = ''", targetID).
		Updates(map[string]any{"version": model, "version_reported": true}).Error
	if err != nil {
		return fmt.Errorf("store: report target version: %w", err)
	}
	return nil
}
