package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

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
	if in.Source == nil && in.Judge == nil && len(in.JudgeIDs) == 0 && !in.checksOnly() {
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
	if in.Source != nil {
		if err := exists("sources", "source.source_id", in.Source.SourceID, "trace source"); err != nil {
			return err
		}
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
