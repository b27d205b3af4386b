package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"tribunal/schedule"
	"tribunal/store"
)

// Starter starts runs; *engine.Engine is one.
type Starter interface {
	StartRun(ctx context.Context, in store.RunInput) (*store.Run, error)
}

// Scheduler fires due schedules. Any number of schedulers may share a
// database: each occurrence is claimed by exactly one.
type Scheduler struct {
	st      *store.Store
	starter Starter
	cfg     Config
	log     *slog.Logger
}

// NewScheduler builds a scheduler.
func NewScheduler(cfg Config, st *store.Store, starter Starter, log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	return &Scheduler{st: st, starter: starter, cfg: cfg.withDefaults(), log: log}
}

// maxOccurrences bounds how many missed occurrences are counted one by one.
const maxOccurrences = 100_000

// Run fires schedules until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	for {
		if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "scheduler", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(jitter(s.cfg.PollInterval)):
		}
	}
}

// Tick settles interrupted firings and fires every due schedule once; it
// reports how many occurrences this scheduler claimed.
func (s *Scheduler) Tick(ctx context.Context) (int, error) {
	now := s.cfg.Clock.Now().UTC()
	errs := []error{s.recover(ctx, now)}
	due, err := s.st.DueSchedules(ctx, now, 100)
	if err != nil {
		return 0, errors.Join(append(errs, err)...)
	}
	n := 0
	for i := range due {
		fired, err := s.fire(ctx, &due[i], now)
		if fired {
			n++
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %d: %w", due[i].ID, err))
		}
	}
	return n, errors.Join(errs...)
}

// recover settles firings left STARTING by a process that stopped.
func (s *Scheduler) recover(ctx context.Context, now time.Time) error {
	stale, err := s.st.StaleFirings(ctx, now.Add(-s.cfg.StartTimeout))
	if err != nil {
		return err
	}
	for _, f := range stale {
		msg := "interrupted: the process firing this occurrence stopped before it recorded the run"
		rec, err := s.st.RecoverFiring(ctx, f, msg, now)
		if err != nil {
			return err
		}
		s.log.WarnContext(ctx, "recovered an interrupted schedule firing", "schedule_id", f.ScheduleID, "firing_id", f.ID,
			"status", rec.Status, "run_id", rec.RunID)
		if rec.Status == store.FiringError {
			s.notify(ctx, f.ScheduleID, nil, "WARNING", "Scheduled run lost", msg+"; the next occurrence has come, so it was not fired again.", now)
		}
	}
	return nil
}

// fire claims one due schedule's occurrence and starts its run.
func (s *Scheduler) fire(ctx context.Context, sc *store.Schedule, now time.Time) (bool, error) {
	spec, err := schedule.Parse(sc.Cron, sc.Timezone)
	if err != nil {
		reason := fmt.Sprintf("its cron expression no longer parses: %v", err)
		s.log.ErrorContext(ctx, "disabling schedule", "schedule_id", sc.ID, "reason", reason)
		return false, s.st.DisableSchedule(ctx, sc.ID, reason, now)
	}
	// when formats an occurrence in the schedule's time zone.
	when := func(t time.Time) string { return formatWhen(t, spec.Location()) }
	from := *sc.NextRunAt
	waiting := sc.WaitingSince
	if waiting != nil {
		from = *waiting
	}
	occs, more := spec.Between(from, now, maxOccurrences)
	if len(occs) == 0 {
		occs = []time.Time{from}
	}
	occ := occs[len(occs)-1]
	missed := 0
	for _, o := range occs {
		if (waiting == nil || !o.Equal(*waiting)) && now.Sub(o) > s.cfg.MissedAfter {
			missed++
		}
	}
	var next *time.Time
	if n := spec.Next(now); !n.IsZero() {
		next = &n
	}
	msg := ""
	if missed > 0 {
		count := fmt.Sprint(missed)
		if more {
			count = "more than " + count
		}
		msg = fmt.Sprintf("%s occurrence(s) from %s to %s fell due while no scheduler was running; fired once now, %s late",
			count, when(occs[0]), when(occ), now.Sub(occ).Round(time.Second))
	}
	f, err := s.st.ClaimOccurrence(ctx, store.OccurrenceClaim{ScheduleID: sc.ID, Revision: sc.Revision, Occurrence: occ,
		Next: next, Missed: missed, Message: msg, WorkerID: s.cfg.WorkerID}, now)
	if err != nil || f == nil {
		return false, err // f == nil: another process fired it, or it was edited meanwhile
	}
	claimed := sc.Revision + 1
	if waiting != nil && occ.After(*waiting) {
		skip := fmt.Sprintf("still waiting for a free run slot when the next occurrence (%s) came", when(occ))
		if ok, err := s.st.SkipWaitingFiring(ctx, sc.ID, *waiting, skip, now); err != nil {
			return true, err
		} else if ok {
			s.notify(ctx, sc.ID, nil, "WARNING", fmt.Sprintf("Schedule %q skipped an occurrence", sc.Name),
				fmt.Sprintf("The occurrence of %s was %s.", when(*waiting), skip), now)
		}
	}
	if missed > 0 {
		s.log.WarnContext(ctx, "schedule missed occurrences; firing once", "schedule_id", sc.ID, "missed", missed, "occurrence", occ)
	}
	run, err := startScheduled(ctx, s.st, s.starter, sc, "SCHEDULED", runName(sc, occ, spec.Location(), missed > 0), "due "+when(occ))
	switch {
	case err == nil:
		s.log.InfoContext(ctx, "schedule fired", "schedule_id", sc.ID, "run_id", run.ID, "occurrence", occ)
		if err := s.st.StartedFiring(ctx, f.ID, run.ID, msg, now); err != nil {
			return true, err
		}
		if missed > 0 {
			_ = s.st.AppendLog(ctx, &store.RunLog{RunID: run.ID, Level: store.LogWarn, Kind: "run", Message: "Catch-up run: " + msg})
			s.notify(ctx, sc.ID, &run.ID, "WARNING", fmt.Sprintf("Schedule %q missed %d occurrence(s)", sc.Name, missed), msg+".", now)
		}
		return true, nil
	case errors.Is(err, store.ErrConflict):
		retry := now.Add(s.cfg.RetryInterval)
		if next == nil || retry.Before(*next) {
			_, werr := s.st.WaitFiring(ctx, f, claimed, retry, "waiting for a free run slot: "+err.Error(), now)
			return true, werr
		}
		reason := "skipped: no free run slot before the next occurrence: " + err.Error()
		s.log.WarnContext(ctx, "schedule occurrence skipped", "schedule_id", sc.ID, "occurrence", occ, "reason", err)
		s.notify(ctx, sc.ID, nil, "WARNING", fmt.Sprintf("Schedule %q skipped an occurrence", sc.Name),
			fmt.Sprintf("The occurrence of %s was %s.", when(occ), reason), now)
		return true, s.st.EndFiring(ctx, f.ID, store.FiringSkipped, reason, now)
	default:
		reason := "the run could not be created: " + err.Error()
		s.log.WarnContext(ctx, "schedule could not start its run", "schedule_id", sc.ID, "err", err)
		if err := s.st.EndFiring(ctx, f.ID, store.FiringError, reason, now); err != nil {
			return true, err
		}
		return true, s.failure(ctx, sc.ID, sc.Name, reason, nil, now)
	}
}

// failure counts a failure against a schedule and says so when it disables it.
func (s *Scheduler) failure(ctx context.Context, scheduleID int64, name, reason string, runID *int64, now time.Time) error {
	out, err := s.st.RecordScheduleOutcome(ctx, scheduleID, false, reason, now)
	if err != nil {
		return err
	}
	if out.Disabled {
		s.log.WarnContext(ctx, "schedule disabled after consecutive failures", "schedule_id", scheduleID, "failures", out.ConsecutiveFailures)
		s.notify(ctx, scheduleID, runID, "CRITICAL", fmt.Sprintf("Schedule %q disabled", name),
			fmt.Sprintf("It failed %d times in a row; the last: %s. Fix it and enable it again.", out.ConsecutiveFailures, reason), now)
	}
	return nil
}

// notify records an in-app notification about a schedule; a failure to do
// so is logged, never returned: it must not undo what it reports.
func (s *Scheduler) notify(ctx context.Context, scheduleID int64, runID *int64, severity, title, message string, now time.Time) {
	id := scheduleID
	n := &store.Notification{Kind: "SCHEDULE", ScheduleID: &id, RunID: runID, Severity: severity, Title: title, Message: message}
	if err := s.st.CreateNotification(ctx, n, []store.Channel{{Type: "in_app"}}, now); err != nil {
		s.log.ErrorContext(ctx, "record schedule notification", "schedule_id", scheduleID, "err", err)
	}
}

func formatWhen(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	if t.Second() != 0 {
		return t.Format("2006-01-02 15:04:05 MST")
	}
	return t.Format("2006-01-02 15:04 MST")
}

// runName names a schedule's run after the template (or the schedule) and the occurrence.
func runName(sc *store.Schedule, occ time.Time, loc *time.Location, catchUp bool) string {
	base := strings.TrimSpace(sc.Template.Name)
	if base == "" {
		base = sc.Name
	}
	suffix := " · " + formatWhen(occ, loc)
	if catchUp {
		suffix += " (catch-up)"
	}
	if len(base)+len(suffix) > 255 {
		base = base[:255-len(suffix)]
		for len(base) > 0 && base[len(base)-1]&0xC0 == 0x80 {
			base = base[:len(base)-1]
		}
	}
	return base + suffix
}

// startScheduled starts a schedule's run, on time, by Run now, by its
// webhook or on an event: the run is the schedule's (its id), triggeredBy
// says what fired it (SCHEDULED for the first two, WEBHOOK, EVENT), and
// its log says which schedule started it and how.
func startScheduled(ctx context.Context, st *store.Store, starter Starter, sc *store.Schedule, triggeredBy, name, how string) (*store.Run, error) {
	in := sc.Template
	in.Name = name
	in.TriggeredBy, in.ScheduleID = triggeredBy, &sc.ID
	run, err := starter.StartRun(ctx, in)
	if err != nil {
		return nil, err
	}
	// The run stands without this line if it cannot be written, as with the catch-up note.
	_ = st.AppendLog(ctx, &store.RunLog{RunID: run.ID, Level: store.LogInfo, Kind: "run",
		Message: fmt.Sprintf("Started by schedule “%s” (%s)", sc.Name, how)})
	return run, nil
}

// RunNow starts a schedule's template at once, whether the schedule is
// enabled or not; the run is the schedule's, as an on-time one is, and
// triggeredBy (MANUAL from the UI, or API) says in the schedule's history
// who asked. A refusal by the active-run limit (ErrConflict) records nothing.
func RunNow(ctx context.Context, st *store.Store, starter Starter, scheduleID int64, triggeredBy string, now time.Time) (*store.Run, error) {
	sc, err := st.Schedule(ctx, scheduleID)
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		loc = time.UTC
	}
	run, err := startScheduled(ctx, st, starter, sc, "SCHEDULED", runName(sc, now, loc, false), "Run now")
	if err != nil {
		if !errors.Is(err, store.ErrConflict) {
			if _, rerr := st.RecordRunNow(ctx, sc.ID, triggeredBy, nil, "the run could not be created: "+err.Error(), now); rerr != nil {
				return nil, errors.Join(err, rerr)
			}
		}
		return nil, err
	}
	if _, err := st.RecordRunNow(ctx, sc.ID, triggeredBy, &run.ID, "", now); err != nil {
		return run, err
	}
	return run, nil
}
