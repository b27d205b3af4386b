package store

// A schedule's firings: each occurrence it fired or tried to, each "run
// now", webhook call and event, and how their runs ended.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Firing statuses: how far a schedule's occurrence (or "run now") got.
const (
	FiringStarting = "STARTING" // claimed; the run is being created
	FiringStarted  = "STARTED"  // the run exists (RunID)
	FiringWaiting  = "WAITING"  // the active-run limit holds it; retried until the next occurrence
	FiringSkipped  = "SKIPPED"  // never started: still waiting when the next occurrence came, or an event found no free run slot
	FiringError    = "ERROR"    // the run could not be created (the template is invalid)
)

// Outcomes of a fired run, counted once toward the schedule's consecutive failures.
const (
	OutcomeSucceeded = "SUCCEEDED"
	OutcomeFailed    = "FAILED"
	OutcomeCancelled = "CANCELLED"
)

// ScheduleFiring is one occurrence a schedule fired or tried to, or one "run now".
type ScheduleFiring struct {
	ID           int64      `json:"id"`
	ScheduleID   int64      `json:"schedule_id"`
	ScheduledFor *time.Time `json:"scheduled_for"`
	TriggeredBy  string     `json:"triggered_by"`
	Status       string     `json:"status"`
	RunID        *int64     `json:"run_id"`
	Outcome      string     `json:"outcome"`
	Missed       int        `json:"missed"`
	Attempts     int        `json:"attempts"`
	Message      string     `json:"message"`
	WorkerID     string     `json:"-"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	// RunName and RunStatus come from the run, when it still exists.
	RunName   string    `json:"run_name,omitempty" gorm:"->;-:migration"`
	RunStatus RunStatus `json:"run_status,omitempty" gorm:"->;-:migration"`
}

// TableName maps ScheduleFiring to schedule_firings.
func (ScheduleFiring) TableName() string { return "schedule_firings" }

// OccurrenceClaim asks to fire one occurrence of a schedule.
type OccurrenceClaim struct {
	ScheduleID int64
	// Revision is the schedule's revision as read; the claim fails if it changed.
	Revision int64
	// Occurrence is the cron time being fired.
	Occurrence time.Time
	// Next is the occurrence after now, the schedule's new next_run_at.
	Next *time.Time
	// Missed counts occurrences that fell due while no scheduler ran.
	Missed   int
	Message  string
	WorkerID string
}

// ClaimOccurrence moves a due schedule on to its next occurrence and records
// the firing as STARTING, in one transaction. The update is conditional on
// the revision read, so among processes racing for the same occurrence
// exactly one gets it; the others get nil.
func (s *Store) ClaimOccurrence(ctx context.Context, c OccurrenceClaim, now time.Time) (*ScheduleFiring, error) {
	now = now.UTC()
	occ := c.Occurrence.UTC()
	var firing *ScheduleFiring
	err := s.Transact(ctx, func(tx *Store) error {
		res := tx.conn(ctx).Model(&Schedule{}).Where("id = ? AND revision = ? AND enabled", c.ScheduleID, c.Revision).
			Updates(map[string]any{"next_run_at": c.Next, "pending_since": nil, "last_run_at": now,
				"revision": gorm.Expr("revision + 1"), "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("store: claim schedule: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return nil
		}
		f := ScheduleFiring{ScheduleID: c.ScheduleID, ScheduledFor: &occ, TriggeredBy: "SCHEDULED", Status: FiringStarting,
			Missed: c.Missed, Attempts: 1, Message: c.Message, WorkerID: c.WorkerID, CreatedAt: now, UpdatedAt: now}
		// A waiting occurrence is tried again under the same row.
		err := tx.conn(ctx).Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "schedule_id"}, {Name: "scheduled_for"}},
			DoUpdates: clause.Assignments(map[string]any{"status": FiringStarting, "attempts": gorm.Expr("schedule_firings.attempts + 1"),
				"worker_id": c.WorkerID, "updated_at": now}),
		}).Omit("RunName", "RunStatus").Create(&f).Error
		if err != nil {
			return fmt.Errorf("store: record firing: %w", err)
		}
		if err := tx.conn(ctx).Where("schedule_id = ? AND scheduled_for = ?", c.ScheduleID, occ).Take(&f).Error; err != nil {
			return fmt.Errorf("store: read firing: %w", err)
		}
		firing = &f
		return nil
	})
	return firing, err
}

// StartedFiring records the run a firing created.
func (s *Store) StartedFiring(ctx context.Context, firingID, runID int64, message string, now time.Time) error {
	return s.Transact(ctx, func(tx *Store) error {
		var f ScheduleFiring
		if err := tx.conn(ctx).Take(&f, firingID).Error; err != nil {
			return fmt.Errorf("store: started firing: %w", notFound(err, "firing", firingID))
		}
		if err := tx.conn(ctx).Model(&ScheduleFiring{}).Where("id = ?", firingID).Updates(map[string]any{
			"status": FiringStarted, "run_id": runID, "message": message, "updated_at": now.UTC()}).Error; err != nil {
			return fmt.Errorf("store: started firing: %w", err)
		}
		if err := tx.conn(ctx).Model(&Schedule{}).Where("id = ?", f.ScheduleID).
			Updates(map[string]any{"last_run_id": runID, "last_run_at": now.UTC()}).Error; err != nil {
			return fmt.Errorf("store: started firing: %w", err)
		}
		return nil
	})
}

// WaitFiring puts a claimed occurrence back to wait for a free run slot: the
// schedule is looked at again at retryAt. claimedRevision is the revision
// the claim left; if the schedule was edited since, the occurrence is
// skipped instead (the edit planned anew) and WaitFiring reports false.
func (s *Store) WaitFiring(ctx context.Context, f *ScheduleFiring, claimedRevision int64, retryAt time.Time, message string, now time.Time) (bool, error) {
	waiting := false
	err := s.Transact(ctx, func(tx *Store) error {
		res := tx.conn(ctx).Model(&Schedule{}).Where("id = ? AND revision = ? AND enabled", f.ScheduleID, claimedRevision).
			Updates(map[string]any{"pending_since": f.ScheduledFor, "next_run_at": retryAt.UTC(),
				"revision": gorm.Expr("revision + 1"), "updated_at": now.UTC()})
		if res.Error != nil {
			return fmt.Errorf("store: wait firing: %w", res.Error)
		}
		status := FiringWaiting
		if res.RowsAffected == 0 {
			status, message = FiringSkipped, message+"; the schedule changed meanwhile, so this occurrence is dropped"
		}
		waiting = status == FiringWaiting
		if err := tx.conn(ctx).Model(&ScheduleFiring{}).Where("id = ?", f.ID).
			Updates(map[string]any{"status": status, "message": message, "updated_at": now.UTC()}).Error; err != nil {
			return fmt.Errorf("store: wait firing: %w", err)
		}
		return nil
	})
	return waiting, err
}

// EndFiring marks a firing SKIPPED or ERROR with the reason.
func (s *Store) EndFiring(ctx context.Context, firingID int64, status, message string, now time.Time) error {
	err := s.conn(ctx).Model(&ScheduleFiring{}).Where("id = ?", firingID).
		Updates(map[string]any{"status": status, "message": message, "updated_at": now.UTC()}).Error
	if err != nil {
		return fmt.Errorf("store: end firing: %w", err)
	}
	return nil
}

// RecordRunNow records a "run now" of a schedule: the run it started, or
// the error that stopped it.
func (s *Store) RecordRunNow(ctx context.Context, scheduleID int64, triggeredBy string, runID *int64, message string, now time.Time) (*ScheduleFiring, error) {
	now = now.UTC()
	f := ScheduleFiring{ScheduleID: scheduleID, TriggeredBy: triggeredBy, Status: FiringStarted, RunID: runID,
		Attempts: 1, Message: message, CreatedAt: now, UpdatedAt: now}
	if runID == nil {
		f.Status = FiringError
	}
	err := s.Transact(ctx, func(tx *Store) error {
		if err := tx.conn(ctx).Omit("RunName", "RunStatus").Create(&f).Error; err != nil {
			return fmt.Errorf("store: record run now: %w", err)
		}
		if runID != nil {
			if err := tx.conn(ctx).Model(&Schedule{}).Where("id = ?", scheduleID).
				Updates(map[string]any{"last_run_id": *runID, "last_run_at": now}).Error; err != nil {
				return fmt.Errorf("store: record run now: %w", err)
			}
		}
		return nil
	})
	return &f, err
}

// StaleFirings lists firings left STARTING since before the cutoff: the
// process firing them stopped between claiming and creating the run.
func (s *Store) StaleFirings(ctx context.Context, before time.Time) ([]ScheduleFiring, error) {
	var out []ScheduleFiring
	if err := s.conn(ctx).Where("status = ? AND updated_at < ?", FiringStarting, before.UTC()).Order("id").Limit(100).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: stale firings: %w", err)
	}
	return out, nil
}

// Recovery is what RecoverFiring did with an interrupted firing.
type Recovery struct {
	// RunID is the run found for it (the run was created after all), or 0.
	RunID int64
	// Status is the firing's new status: STARTED (run found), WAITING (to
	// be fired again at once) or ERROR (the next occurrence has come).
	Status string
}

// RecoverFiring settles a firing left STARTING by a process that stopped
// between claiming an occurrence and recording its run. If a scheduled run
// of the schedule was created after the claim and belongs to no firing, it
// is linked. Otherwise, while the schedule's next occurrence has not come,
// the occurrence waits to be fired again at once; else it ends in ERROR.
func (s *Store) RecoverFiring(ctx context.Context, f ScheduleFiring, message string, now time.Time) (Recovery, error) {
	now = now.UTC()
	var out Recovery
	err := s.Transact(ctx, func(tx *Store) error {
		var runs []Run
		err := tx.conn(ctx).Where(`schedule_id = ? AND triggered_by = 'SCHEDULED' AND created_at >= ?
			AND id NOT IN (SELECT run_id FROM schedule_firings WHERE run_id IS NOT NULL)`, f.ScheduleID, f.UpdatedAt.Add(-time.Second)).
			Order("id").Limit(1).Find(&runs).Error
		if err != nil {
			return fmt.Errorf("store: recover firing: %w", err)
		}
		updates := map[string]any{"status": FiringError, "message": message, "updated_at": now}
		out.Status = FiringError
		switch {
		case len(runs) == 1:
			out.RunID, out.Status = runs[0].ID, FiringStarted
			updates = map[string]any{"status": FiringStarted, "run_id": out.RunID, "updated_at": now}
		case f.ScheduledFor != nil:
			res := tx.conn(ctx).Model(&Schedule{}).
				Where("id = ? AND enabled AND pending_since IS NULL AND (next_run_at IS NULL OR next_run_at > ?)", f.ScheduleID, now).
				Updates(map[string]any{"pending_since": *f.ScheduledFor, "next_run_at": now, "revision": gorm.Expr("revision + 1"), "updated_at": now})
			if res.Error != nil {
				return fmt.Errorf("store: recover firing: %w", res.Error)
			}
			if res.RowsAffected == 1 {
				out.Status = FiringWaiting
				updates["status"], updates["message"] = FiringWaiting, message+"; firing it again"
			}
		}
		res := tx.conn(ctx).Model(&ScheduleFiring{}).Where("id = ? AND status = ?", f.ID, FiringStarting).Updates(updates)
		if res.Error != nil {
			return fmt.Errorf("store: recover firing: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return errRecovered
		}
		return nil
	})
	if errors.Is(err, errRecovered) {
		return Recovery{}, nil
	}
	return out, err
}

// errRecovered rolls back a recovery another process made first.
var errRecovered = errors.New("store: firing already recovered")

// SkipWaitingFiring ends an occurrence that was still waiting for a free
// run slot when a newer occurrence came; it reports whether it did.
func (s *Store) SkipWaitingFiring(ctx context.Context, scheduleID int64, occurrence time.Time, message string, now time.Time) (bool, error) {
	res := s.conn(ctx).Model(&ScheduleFiring{}).Where("schedule_id = ? AND scheduled_for = ? AND status = ?", scheduleID, occurrence.UTC(), FiringWaiting).
		Updates(map[string]any{"status": FiringSkipped, "message": message, "updated_at": now.UTC()})
	if res.Error != nil {
		return false, fmt.Errorf("store: skip waiting firing: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// DisableSchedule turns a schedule off with the reason (e.g. its
// expression no longer parses).
func (s *Store) DisableSchedule(ctx context.Context, id int64, reason string, now time.Time) error {
	err := s.conn(ctx).Model(&Schedule{}).Where("id = ?", id).Updates(map[string]any{"enabled": false, "next_run_at": nil,
		"pending_since": nil, "disabled_reason": clipMessage(reason, 1000), "revision": gorm.Expr("revision + 1"), "updated_at": now.UTC()}).Error
	if err != nil {
		return fmt.Errorf("store: disable schedule: %w", err)
	}
	return nil
}

// ScheduleFirings lists a schedule's firings, newest first, with their runs' names and statuses.
func (s *Store) ScheduleFirings(ctx context.Context, scheduleID int64, limit int) ([]ScheduleFiring, error) {
	out := []ScheduleFiring{}
	err := s.conn(ctx).Table("schedule_firings f").
		Select("f.*, COALESCE(r.name, '') AS run_name, COALESCE(r.status, '') AS run_status").
		Joins("LEFT JOIN runs r ON r.id = f.run_id AND r.deleted_at IS NULL").
		Where("f.schedule_id = ?", scheduleID).Order("f.id DESC").Limit(max(limit, 1)).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: schedule firings: %w", err)
	}
	return out, nil
}

// SetFiringOutcome records how a fired run ended, once: it returns the
// firing when this call set the outcome, nil when the run was not fired
// by a schedule or its outcome was already recorded.
func (s *Store) SetFiringOutcome(ctx context.Context, runID int64, outcome string, now time.Time) (*ScheduleFiring, error) {
	res := s.conn(ctx).Model(&ScheduleFiring{}).Where("run_id = ? AND outcome = ''", runID).
		Updates(map[string]any{"outcome": outcome, "updated_at": now.UTC()})
	if res.Error != nil {
		return nil, fmt.Errorf("store: firing outcome: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, nil
	}
	var f ScheduleFiring
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("id DESC").Take(&f).Error; err != nil {
		return nil, fmt.Errorf("store: firing outcome: %w", err)
	}
	return &f, nil
}

// ScheduleOutcome is what RecordScheduleOutcome did.
type ScheduleOutcome struct {
	ConsecutiveFailures int
	// Disabled is true when this failure reached the maximum and auto-disable is on.
	Disabled bool
}

// RecordScheduleOutcome counts a success (resetting the consecutive
// failures) or a failure of a schedule's run (seed 002 §8.4). A failure
// that reaches max_consecutive_failures disables the schedule when
// auto_disable_on_failure is on, keeping the reason.
func (s *Store) RecordScheduleOutcome(ctx context.Context, scheduleID int64, success bool, reason string, now time.Time) (ScheduleOutcome, error) {
	var out ScheduleOutcome
	err := s.Transact(ctx, func(tx *Store) error {
		var sc Schedule
		if err := tx.conn(ctx).Clauses(lockForUpdate(s.dialect)...).Take(&sc, scheduleID).Error; err != nil {
			return fmt.Errorf("store: schedule outcome: %w", notFound(err, "schedule", scheduleID))
		}
		updates := map[string]any{"consecutive_failures": 0, "updated_at": now.UTC()}
		if !success {
			out.ConsecutiveFailures = sc.ConsecutiveFailures + 1
			updates["consecutive_failures"] = out.ConsecutiveFailures
			if sc.Enabled && sc.AutoDisableOnFailure && out.ConsecutiveFailures >= sc.MaxConsecutiveFailures {
				out.Disabled = true
				updates["enabled"], updates["next_run_at"], updates["pending_since"] = false, nil, nil
				updates["revision"] = gorm.Expr("revision + 1")
				updates["disabled_reason"] = clipMessage(fmt.Sprintf("disabled after %d consecutive failures; the last: %s", out.ConsecutiveFailures, reason), 1000)
			}
		}
		if err := tx.conn(ctx).Model(&Schedule{}).Where("id = ?", scheduleID).Updates(updates).Error; err != nil {
			return fmt.Errorf("store: schedule outcome: %w", err)
		}
		return nil
	})
	return out, err
}

func clipMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
