package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// What starts a schedule's run (seed 002 §3.2 TriggerType).
const (
	TriggerCron    = "CRON"    // its cron expression
	TriggerWebhook = "WEBHOOK" // POST /api/schedules/{id}/trigger with its token
	TriggerEvent   = "EVENT"   // an event it listens for
)

// Events an EVENT schedule may listen for.
const (
	EventImportFinished = "import.finished" // an import from a trace source finished
	EventRunFinished    = "run.finished"    // a run finished (or failed)
)

// normalizeTrigger checks the trigger and its settings; what another trigger
// would use is cleared, so switching trigger leaves nothing stale behind.
func (in *ScheduleInput) normalizeTrigger() error {
	in.Trigger = strings.ToUpper(strings.TrimSpace(in.Trigger))
	if in.Trigger == "" {
		in.Trigger = TriggerCron
	}
	in.Event = strings.TrimSpace(in.Event)
	switch in.Trigger {
	case TriggerCron:
		in.Event, in.EventSourceID = "", nil
	case TriggerWebhook:
		in.Cron, in.Event, in.EventSourceID = "", "", nil
	case TriggerEvent:
		in.Cron = ""
		switch in.Event {
		case EventImportFinished:
		case EventRunFinished:
			if in.EventSourceID != nil {
				return invalid("event_source_id", "applies to %s only", EventImportFinished)
			}
		case "":
			return invalid("event", "is required for an EVENT trigger: %s or %s", EventImportFinished, EventRunFinished)
		default:
			return invalid("event", "must be %s or %s, got %q", EventImportFinished, EventRunFinished, in.Event)
		}
	default:
		return invalid("trigger", "must be CRON, WEBHOOK or EVENT, got %q", in.Trigger)
	}
	return nil
}

// newScheduleToken makes a webhook token (32 random bytes, hex) and the
// hash that is all the database keeps of it.
func newScheduleToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("store: schedule token: %w", err)
	}
	token = hex.EncodeToString(b)
	return token, hashToken(token), nil
}

func hashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// TokenMatches reports whether token is the schedule's webhook token. The
// hashes are compared in constant time, so a wrong token costs what a right
// one does; a schedule without a token matches nothing.
func (sc *Schedule) TokenMatches(token string) bool {
	want, err := hex.DecodeString(sc.TokenHash)
	if err != nil || len(want) != sha256.Size {
		want = make([]byte, sha256.Size) // compare anyway: the same work either way
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], want) == 1 && sc.TokenHash != "" && token != ""
}

// RotateScheduleToken gives a WEBHOOK schedule a new token, returned once;
// the old one stops working at once. Another trigger is a conflict.
func (s *Store) RotateScheduleToken(ctx context.Context, id int64, now time.Time) (*Schedule, error) {
	token, hash, err := newScheduleToken()
	if err != nil {
		return nil, err
	}
	res := s.conn(ctx).Model(&Schedule{}).Where("id = ? AND trigger_type = ?", id, TriggerWebhook).
		Updates(map[string]any{"token_hash": hash, "revision": gorm.Expr("revision + 1"), "updated_at": now.UTC()})
	if res.Error != nil {
		return nil, fmt.Errorf("store: rotate schedule token: %w", res.Error)
	}
	sc, err := s.Schedule(ctx, id)
	if err != nil {
		return nil, err
	}
	if res.RowsAffected == 0 {
		return nil, conflict("schedule %q is triggered by %s, not WEBHOOK: it has no token", sc.Name, sc.Trigger)
	}
	sc.Token = token
	return sc, nil
}

// ListeningSchedules lists the enabled EVENT schedules that listen for
// event; for import.finished, those that name no source or sourceID.
func (s *Store) ListeningSchedules(ctx context.Context, event string, sourceID *int64) ([]Schedule, error) {
	q := s.conn(ctx).Where("enabled AND trigger_type = ? AND event = ?", TriggerEvent, event)
	if sourceID != nil {
		q = q.Where("event_source_id IS NULL OR event_source_id = ?", *sourceID)
	} else {
		q = q.Where("event_source_id IS NULL")
	}
	out := []Schedule{}
	if err := q.Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: listening schedules: %w", err)
	}
	return out, nil
}

// SkipTriggered records a webhook or event firing that started no run
// because no run slot was free (the active-run limit).
func (s *Store) SkipTriggered(ctx context.Context, scheduleID int64, triggeredBy, message string, now time.Time) error {
	now = now.UTC()
	f := ScheduleFiring{ScheduleID: scheduleID, TriggeredBy: triggeredBy, Status: FiringSkipped, Attempts: 1,
		Message: clipMessage(message, 1000), CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Omit("RunName", "RunStatus").Create(&f).Error; err != nil {
		return fmt.Errorf("store: record skipped firing: %w", err)
	}
	return nil
}
