package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tribunal/store"
)

// ErrBadToken answers a webhook call whose X-Tribunal-Token is missing or
// not the schedule's token; nothing is started.
var ErrBadToken = errors.New("watch: wrong or missing schedule token")

// Trigger starts a WEBHOOK schedule's run with the token it was called
// with: the run and its firing say WEBHOOK. A disabled schedule, or one
// with another trigger, is a conflict (store.ErrConflict), as is a full
// active-run limit (nothing is recorded then, as with Run now).
func Trigger(ctx context.Context, st *store.Store, starter Starter, scheduleID int64, token string, now time.Time) (*store.Run, error) {
	sc, err := st.Schedule(ctx, scheduleID)
	if err != nil {
		return nil, err
	}
	if sc.Trigger != store.TriggerWebhook {
		return nil, &store.ConflictError{Message: fmt.Sprintf("schedule %q is triggered by %s, not WEBHOOK", sc.Name, sc.Trigger)}
	}
	if !sc.TokenMatches(token) {
		return nil, ErrBadToken
	}
	if !sc.Enabled {
		return nil, &store.ConflictError{Message: fmt.Sprintf("schedule %q is disabled", sc.Name)}
	}
	return startTriggered(ctx, st, starter, sc, store.TriggerWebhook, "webhook", now)
}

// Event is something that happened which EVENT schedules may listen for.
type Event struct {
	// Name is store.EventImportFinished or store.EventRunFinished.
	Name string
	// SourceID is the trace source an import came from.
	SourceID *int64
	// RunID is the run that finished, or the run the import made.
	RunID int64
}

// Fire starts the run of every enabled schedule listening for ev and
// returns the runs it started. A run that an event started does not fire
// run.finished when it ends, so listeners never chain into a loop. A
// schedule the active-run limit holds back gets a SKIPPED firing saying
// so; one whose run cannot be created, an ERROR firing; the others still
// start.
func Fire(ctx context.Context, st *store.Store, starter Starter, ev Event, now time.Time) ([]*store.Run, error) {
	if ev.Name == store.EventRunFinished && ev.RunID != 0 {
		run, err := st.Run(ctx, ev.RunID)
		if err != nil {
			return nil, err
		}
		if run.TriggeredBy == store.TriggerEvent {
			return nil, nil
		}
	}
	listeners, err := st.ListeningSchedules(ctx, ev.Name, ev.SourceID)
	if err != nil {
		return nil, err
	}
	how := ev.Name
	if ev.RunID != 0 {
		how += fmt.Sprintf(" of run %d", ev.RunID)
	}
	if ev.SourceID != nil {
		how += fmt.Sprintf(" from source %d", *ev.SourceID)
	}
	var started []*store.Run
	var errs []error
	for i := range listeners {
		sc := &listeners[i]
		run, err := startTriggered(ctx, st, starter, sc, store.TriggerEvent, how, now)
		switch {
		case err == nil:
			started = append(started, run)
		case errors.Is(err, store.ErrConflict):
			if err := st.SkipTriggered(ctx, sc.ID, store.TriggerEvent, fmt.Sprintf("%s: no free run slot: %v", how, err), now); err != nil {
				errs = append(errs, err)
			}
		default:
			errs = append(errs, fmt.Errorf("schedule %d: %w", sc.ID, err))
		}
	}
	return started, errors.Join(errs...)
}

// startTriggered starts a webhook or event schedule's run and records the
// firing: its run, or why it could not be created.
func startTriggered(ctx context.Context, st *store.Store, starter Starter, sc *store.Schedule, triggeredBy, how string, now time.Time) (*store.Run, error) {
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		loc = time.UTC
	}
	run, err := startScheduled(ctx, st, starter, sc, triggeredBy, runName(sc, now, loc, false), how)
	if err != nil {
		if !errors.Is(err, store.ErrConflict) {
			if _, rerr := st.RecordRunNow(ctx, sc.ID, triggeredBy, nil, "the run could not be created: "+err.Error(), now); rerr != nil {
				return nil, errors.Join(err, rerr)
			}
		}
		return nil, err
	}
	if _, err := st.RecordRunNow(ctx, sc.ID, triggeredBy, &run.ID, how, now); err != nil {
		return run, err
	}
	return run, nil
}
