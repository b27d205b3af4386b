package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"tribunal/schedule"
)

// Schedule is a saved run template that a cron expression, a call to its
// webhook or an event fires (seed 002 §3.4, §8).
type Schedule struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Trigger is CRON, WEBHOOK or EVENT (see schedule_triggers.go).
	Trigger string `json:"trigger" gorm:"column:trigger_type"`
	// Cron is empty unless Trigger is CRON.
	Cron string `json:"cron"`
	// Event is what an EVENT schedule listens for; EventSourceID narrows
	// import.finished to one trace source.
	Event         string `json:"event"`
	EventSourceID *int64 `json:"event_source_id"`
	// TokenHash is the hex SHA-256 of a WEBHOOK schedule's token.
	TokenHash string `json:"-"`
	// Token is the webhook token in clear, set only in the reply that
	// created it (creation, rotation, a switch to WEBHOOK): never stored.
	Token    string   `json:"token,omitempty" gorm:"-"`
	Timezone string   `json:"timezone"`
	Enabled  bool     `json:"enabled"`
	Template RunInput `json:"template" gorm:"serializer:json"`
	// NextRunAt is the next occurrence, or the next retry while an occurrence
	// waits for a free run slot (then WaitingSince is that occurrence); nil when disabled.
	NextRunAt              *time.Time `json:"next_run_at"`
	WaitingSince           *time.Time `json:"waiting_since" gorm:"column:pending_since"`
	LastRunAt              *time.Time `json:"last_run_at"`
	LastRunID              *int64     `json:"last_run_id"`
	ConsecutiveFailures    int        `json:"consecutive_failures"`
	MaxConsecutiveFailures int        `json:"max_consecutive_failures"`
	AutoDisableOnFailure   bool       `json:"auto_disable_on_failure"`
	// DisabledReason says why the schedule disabled itself.
	DisabledReason string    `json:"disabled_reason"`
	Revision       int64     `json:"-"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// ScheduleInput is what a user sends to create or replace a schedule.
type ScheduleInput struct {
	Name                   string
	Trigger                string
	Cron                   string
	Event                  string
	EventSourceID          *int64
	Timezone               string
	Enabled                bool
	MaxConsecutiveFailures int
	AutoDisableOnFailure   bool
	Template               RunInput
}

// Firing statuses: how far a schedule's occurrence (or "run now") got.
const (
	FiringStarting = "STARTING" // claimed; the run is being created
	FiringStarted  = "STARTED"  // the run exists (RunID)
	FiringWaiting  = "WAITING"  // the active-run limit holds it; retried until the next occurrence
	FiringSkipped  = "SKIPPED"  // never started: still waiting when the next occurrence came
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

func (in *ScheduleInput) normalize() (*schedule.Spec, error) {
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return nil, invalid("name", "is required")
	case len(in.Name) > 255:
		return nil, invalid("name", "is longer than 255 characters")
	case in.MaxConsecutiveFailures == 0:
		in.MaxConsecutiveFailures = 3
	}
	if in.MaxConsecutiveFailures < 1 || in.MaxConsecutiveFailures > 1000 {
		return nil, invalid("max_consecutive_failures", "must be within 1…1000")
	}
	in.Cron = strings.Join(strings.Fields(in.Cron), " ")
	in.Timezone = strings.TrimSpace(in.Timezone)
	if in.Timezone == "" {
		in.Timezone = "UTC"
	}
	if err := in.normalizeTrigger(); err != nil || in.Trigger != TriggerCron {
		return nil, err
	}
	spec, err := schedule.Parse(in.Cron, in.Timezone)
	if err != nil {
		var se *schedule.Error
		if errors.As(err, &se) {
			return nil, invalid(se.Field, "%s", se.Message)
		}
		return nil, invalid("cron", "%v", err)
	}
	return spec, nil
}

// checkTemplate validates a schedule's run template as CreateRun would,
// naming the fields under "template.".
func (s *Store) checkTemplate(ctx context.Context, in *RunInput) error {
	prefix := func(err error) error {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return &ValidationError{Field: "template." + ve.Field, Message: ve.Message}
		}
		return err
	}
	if err := in.normalize(); err != nil {
		return prefix(err)
	}
	if in.Judge == nil && len(in.JudgeIDs) == 0 && !in.checksOnly() {
		return invalid("template.judge.provider_id", "is required: pick a judge or a panel (judge_ids), or set metrics to reference checks only")
	}
	exists := func(table, field string, id int64, what string) error {
		var n int64
		if err := s.conn(ctx).Table(table).Where("id = ?", id).Count(&n).Error; err != nil {
			return fmt.Errorf("store: check schedule template: %w", err)
		}
		if n == 0 {
			return invalid("template."+field, "no %s with id %d", what, id)
		}
		return nil
	}
	if in.Judge != nil {
		if err := exists("providers", "judge.provider_id", in.Judge.ProviderID, "provider"); err != nil {
			return err
		}
	}
	for i, id := range in.JudgeIDs {
		if err := exists("judges", fmt.Sprintf("judge_ids[%d]", i), id, "judge"); err != nil {
			return err
		}
	}
	for i, t := range in.Targets {
		if err := exists("providers", fmt.Sprintf("targets[%d].provider_id", i), t.ProviderID, "provider"); err != nil {
			return err
		}
	}
	for i, id := range in.CollectionIDs {
		if err := exists("collections", fmt.Sprintf("collection_ids[%d]", i), id, "collection"); err != nil {
			return err
		}
	}
	return nil
}

// Schedules lists the schedules by name.
func (s *Store) Schedules(ctx context.Context) ([]Schedule, error) {
	out := []Schedule{}
	if err := s.conn(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: schedules: %w", err)
	}
	return out, nil
}

// Schedule returns one schedule.
func (s *Store) Schedule(ctx context.Context, id int64) (*Schedule, error) {
	var sc Schedule
	if err := s.conn(ctx).Take(&sc, id).Error; err != nil {
		return nil, fmt.Errorf("store: schedule: %w", notFound(err, "schedule", id))
	}
	return &sc, nil
}

// nextAt is a cron schedule's next occurrence; other triggers have none (nil spec).
func nextAt(spec *schedule.Spec, now time.Time) *time.Time {
	if spec == nil {
		return nil
	}
	n := spec.Next(now)
	if n.IsZero() {
		return nil
	}
	return &n
}

// CreateSchedule saves a schedule; when enabled, its first occurrence is the
// first one after now.
func (s *Store) CreateSchedule(ctx context.Context, in ScheduleInput, now time.Time) (*Schedule, error) {
	spec, err := in.normalize()
	if err != nil {
		return nil, err
	}
	if err := s.checkTemplate(ctx, &in.Template); err != nil {
		return nil, err
	}
	now = now.UTC()
	sc := Schedule{Name: in.Name, Trigger: in.Trigger, Cron: in.Cron, Event: in.Event, EventSourceID: in.EventSourceID,
		Timezone: in.Timezone, Enabled: in.Enabled, Template: in.Template,
		MaxConsecutiveFailures: in.MaxConsecutiveFailures, AutoDisableOnFailure: in.AutoDisableOnFailure,
		Revision: 1, CreatedAt: now, UpdatedAt: now}
	if in.Trigger == TriggerWebhook {
		if sc.Token, sc.TokenHash, err = newScheduleToken(); err != nil {
			return nil, err
		}
	}
	if in.Enabled {
		sc.NextRunAt = nextAt(spec, now)
	}
	if err := s.conn(ctx).Create(&sc).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, conflict("a schedule named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: create schedule: %w", err)
	}
	return &sc, nil
}

// UpdateSchedule replaces a schedule's settings. A change of cron or time
// zone, or enabling it, plans the next occurrence afresh from now (missed
// occurrences of a disabled schedule are not caught up); enabling also
// clears its failures. Disabling drops a waiting occurrence. A switch to
// WEBHOOK makes a token (returned in Token, once); a switch away drops it.
func (s *Store) UpdateSchedule(ctx context.Context, id int64, in ScheduleInput, now time.Time) (*Schedule, error) {
	spec, err := in.normalize()
	if err != nil {
		return nil, err
	}
	if err := s.checkTemplate(ctx, &in.Template); err != nil {
		return nil, err
	}
	now = now.UTC()
	token := ""
	err = s.Transact(ctx, func(tx *Store) error {
		var cur Schedule
		if err := tx.conn(ctx).Clauses(lockForUpdate(s.dialect)...).Take(&cur, id).Error; err != nil {
			return fmt.Errorf("store: update schedule: %w", notFound(err, "schedule", id))
		}
		updates := map[string]any{"name": in.Name, "trigger_type": in.Trigger, "cron": in.Cron, "event": in.Event,
			"event_source_id": in.EventSourceID, "timezone": in.Timezone, "enabled": in.Enabled,
			"template": mustJSON(in.Template), "max_consecutive_failures": in.MaxConsecutiveFailures,
			"auto_disable_on_failure": in.AutoDisableOnFailure, "revision": gorm.Expr("revision + 1"), "updated_at": now}
		switch {
		case in.Trigger != TriggerWebhook:
			updates["token_hash"] = ""
		case cur.Trigger != TriggerWebhook || cur.TokenHash == "":
			var hash string
			var err error
			if token, hash, err = newScheduleToken(); err != nil {
				return err
			}
			updates["token_hash"] = hash
		}
		switch {
		case !in.Enabled:
			updates["next_run_at"], updates["pending_since"] = nil, nil
		case !cur.Enabled:
			updates["next_run_at"], updates["pending_since"] = nextAt(spec, now), nil
			updates["consecutive_failures"], updates["disabled_reason"] = 0, ""
		case cur.Cron != in.Cron || cur.Timezone != in.Timezone || cur.NextRunAt == nil:
			updates["next_run_at"], updates["pending_since"] = nextAt(spec, now), nil
		}
		if err := tx.conn(ctx).Model(&Schedule{}).Where("id = ?", id).Updates(updates).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return conflict("a schedule named %q already exists", in.Name)
			}
			return fmt.Errorf("store: update schedule: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sc, err := s.Schedule(ctx, id)
	if err != nil {
		return nil, err
	}
	sc.Token = token
	return sc, nil
}

// DeleteSchedule removes a schedule with its firings and scoped KPIs and
// alerts; its runs stay (they keep the schedule's id).
func (s *Store) DeleteSchedule(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&Schedule{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete schedule: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete schedule: %w", &NotFoundError{What: "schedule", ID: id})
	}
	return nil
}

// DueSchedules lists enabled schedules whose next_run_at has come, earliest first.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error) {
	var out []Schedule
	err := s.conn(ctx).Where("enabled AND trigger_type = ? AND next_run_at IS NOT NULL AND next_run_at <= ?", TriggerCron, now.UTC()).
		Order("next_run_at, id").Limit(max(limit, 1)).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: due schedules: %w", err)
	}
	return out, nil
}

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
