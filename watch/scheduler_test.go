package watch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

var day = time.Date(2026, 1, 22, 0, 0, 0, 0, time.UTC)

func at(h, m, s int) time.Time {
	return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
}

func newTestScheduler(st *store.Store, clock Clock, starter Starter) *Scheduler {
	return NewScheduler(Config{Clock: clock, WorkerID: "w1"}, st, starter, quietLog())
}

func tick(t *testing.T, s *Scheduler) int {
	t.Helper()
	n, err := s.Tick(context.Background())
	if err != nil {
		t.Fatalf("tick: %v", err)
	}
	return n
}

// TestSchedulerFiresOnCron: a six-field expression in a time zone fires
// once at its occurrence, names the run after it, and plans the next one.
func TestSchedulerFiresOnCron(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := newFakeClock(at(7, 0, 0)) // 08:00 in Rome
		sc := newSchedule(t, st, "Daily", "0 0 9 * * *", "Europe/Rome", template(t, st), clock.Now())
		if want := at(8, 0, 0); sc.NextRunAt == nil || !sc.NextRunAt.Equal(want) {
			t.Fatalf("next_run_at %v, want %v (09:00 Rome)", sc.NextRunAt, want)
		}
		s := newTestScheduler(st, clock, &recStarter{st: st})
		clock.Set(at(7, 59, 59))
		if n := tick(t, s); n != 0 {
			t.Fatalf("fired %d before the occurrence", n)
		}
		clock.Set(at(8, 0, 0).Add(300 * time.Millisecond))
		if n := tick(t, s); n != 1 {
			t.Fatalf("fired %d at the occurrence, want 1", n)
		}
		if n := tick(t, s); n != 0 {
			t.Fatalf("fired again: %d", n)
		}
		fs := firings(t, st, sc.ID)
		if len(fs) != 1 || fs[0].Status != store.FiringStarted || fs[0].RunID == nil || fs[0].Missed != 0 || fs[0].TriggeredBy != "SCHEDULED" {
			t.Fatalf("firings: %s", describe(fs))
		}
		run, err := st.Run(ctx, *fs[0].RunID)
		if err != nil {
			t.Fatal(err)
		}
		if run.TriggeredBy != "SCHEDULED" || run.ScheduleID == nil || *run.ScheduleID != sc.ID || run.Name != "Daily · 2026-01-22 09:00 CET" {
			t.Errorf("run: triggered_by %s schedule %v name %q", run.TriggeredBy, run.ScheduleID, run.Name)
		}
		if got := runLogMessages(t, st, run.ID); !slices.Contains(got, "Started by schedule “Daily” (due 2026-01-22 09:00 CET)") {
			t.Errorf("run log %q", got)
		}
		sc = mustSchedule(t, st, sc.ID)
		if want := at(8, 0, 0).Add(24 * time.Hour); !sc.NextRunAt.Equal(want) || sc.LastRunID == nil || *sc.LastRunID != run.ID {
			t.Errorf("after firing: next %v (want %v), last run %v", sc.NextRunAt, want, sc.LastRunID)
		}
	})
}

// TestSchedulerRestartMissedRuns: a new scheduler (a restart) never fires
// an occurrence again, and occurrences missed while none ran are run once
// on start, saying so.
func TestSchedulerRestartMissedRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := newFakeClock(at(9, 59, 50))
		sc := newSchedule(t, st, "Hourly", "0 0 * * * *", "UTC", template(t, st), clock.Now())
		first := newTestScheduler(st, clock, &recStarter{st: st})
		clock.Set(at(10, 0, 1))
		if n := tick(t, first); n != 1 {
			t.Fatalf("first scheduler fired %d", n)
		}
		finishRuns(t, st)

		// Restart half a minute later: the 10:00 occurrence is not fired again.
		restarted := newTestScheduler(st, clock, &recStarter{st: st})
		clock.Set(at(10, 0, 30))
		if n := tick(t, restarted); n != 0 {
			t.Fatalf("the restarted scheduler fired the same occurrence again (%d)", n)
		}
		// Down from 10:00:30 to 13:30: 11:00, 12:00 and 13:00 were missed.
		clock.Set(at(13, 30, 0))
		if n := tick(t, restarted); n != 1 {
			t.Fatalf("catch-up fired %d runs, want 1", n)
		}
		if n := tick(t, restarted); n != 0 {
			t.Fatalf("fired again after the catch-up: %d", n)
		}
		fs := firings(t, st, sc.ID)
		if len(fs) != 2 {
			t.Fatalf("firings: %s", describe(fs))
		}
		up := fs[1]
		if !up.ScheduledFor.Equal(at(13, 0, 0)) || up.Missed != 3 || up.Status != store.FiringStarted ||
			!strings.Contains(up.Message, "3 occurrence(s) from 2026-01-22 11:00 UTC to 2026-01-22 13:00 UTC") {
			t.Fatalf("catch-up firing: %s", describe(fs[1:]))
		}
		run, err := st.Run(ctx, *up.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(run.Name, "(catch-up)") {
			t.Errorf("catch-up run name %q", run.Name)
		}
		logs, _ := st.RunLogs(ctx, run.ID, 0, 100)
		found := false
		for _, l := range logs {
			found = found || strings.Contains(l.Message, "Catch-up run: 3 occurrence(s)")
		}
		if !found {
			t.Errorf("the run's log does not say it is a catch-up: %+v", logs)
		}
		ns, err := st.Notifications(ctx, store.NotificationFilter{ScheduleID: sc.ID})
		if err != nil || ns.Total != 1 || !strings.Contains(ns.Items[0].Title, "missed 3 occurrence(s)") || ns.Items[0].ReadAt != nil {
			t.Errorf("notification: %+v %v", ns.Items, err)
		}
		if sc = mustSchedule(t, st, sc.ID); !sc.NextRunAt.Equal(at(14, 0, 0)) {
			t.Errorf("next run %v, want 14:00", sc.NextRunAt)
		}
	})
}

// TestSchedulerWaitsForFreeSlot: while the active-run limit refuses, an
// occurrence waits and is retried; it starts once the slot frees, or is
// skipped (without counting as a failure) when the next occurrence comes.
func TestSchedulerWaitsForFreeSlot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tmpl := template(t, st)
		clock := newFakeClock(at(9, 30, 0))
		sc := newSchedule(t, st, "Hourly", "0 0 * * * *", "UTC", tmpl, clock.Now())
		if _, err := st.CreateRun(ctx, tmpl); err != nil { // a manual run holds the only slot
			t.Fatal(err)
		}
		s := newTestScheduler(st, clock, &recStarter{st: st})
		clock.Set(at(10, 0, 0))
		tick(t, s)
		sc = mustSchedule(t, st, sc.ID)
		fs := firings(t, st, sc.ID)
		if len(fs) != 1 || fs[0].Status != store.FiringWaiting || !strings.Contains(fs[0].Message, "waiting for a free run slot") ||
			sc.WaitingSince == nil || !sc.WaitingSince.Equal(at(10, 0, 0)) || !sc.NextRunAt.Equal(at(10, 0, 30)) {
			t.Fatalf("after a refusal: waiting since %v next %v firings %s", sc.WaitingSince, sc.NextRunAt, describe(fs))
		}
		clock.Set(at(10, 0, 30))
		tick(t, s)
		finishRuns(t, st)
		clock.Set(at(10, 1, 0))
		tick(t, s)
		fs = firings(t, st, sc.ID)
		if len(fs) != 1 || fs[0].Status != store.FiringStarted || fs[0].Attempts != 3 || fs[0].Missed != 0 {
			t.Fatalf("after the slot freed: %s", describe(fs))
		}
		run, _ := st.Run(ctx, *fs[0].RunID)
		if !strings.Contains(run.Name, "10:00") {
			t.Errorf("the late run is named %q, want the 10:00 occurrence", run.Name)
		}
		if sc = mustSchedule(t, st, sc.ID); sc.WaitingSince != nil || !sc.NextRunAt.Equal(at(11, 0, 0)) {
			t.Fatalf("schedule after start: %+v", sc)
		}

		// The run just started holds the slot through 11:00: retried until 11:59:30, then skipped.
		for clock.Set(at(11, 0, 0)); clock.Now().Before(at(12, 0, 0)); clock.Advance(30 * time.Second) {
			tick(t, s)
		}
		fs = firings(t, st, sc.ID)
		if len(fs) != 2 || fs[1].Status != store.FiringSkipped || fs[1].Attempts != 120 || !strings.Contains(fs[1].Message, "no free run slot before the next occurrence") {
			t.Fatalf("held through the hour: %s", describe(fs))
		}
		if sc = mustSchedule(t, st, sc.ID); sc.ConsecutiveFailures != 0 || !sc.Enabled {
			t.Errorf("a skip counted as a failure: %+v", sc)
		}
		ns, _ := st.Notifications(ctx, store.NotificationFilter{ScheduleID: sc.ID})
		if ns.Total != 1 || !strings.Contains(ns.Items[0].Title, "skipped an occurrence") {
			t.Errorf("notifications: %+v", ns.Items)
		}

		// A waiting occurrence overtaken while no scheduler ran is skipped; the newest one fires.
		clock.Set(at(12, 0, 0))
		tick(t, s) // 12:00 waits
		finishRuns(t, st)
		clock.Set(at(13, 0, 5))
		tick(t, s)
		fs = firings(t, st, sc.ID)
		if len(fs) != 4 || fs[2].Status != store.FiringSkipped || !strings.Contains(fs[2].Message, "next occurrence (2026-01-22 13:00 UTC) came") ||
			fs[3].Status != store.FiringStarted || !fs[3].ScheduledFor.Equal(at(13, 0, 0)) {
			t.Fatalf("overtaken: %s", describe(fs))
		}
	})
}

// TestSchedulerFailuresDisable: a template that cannot start and runs that
// fail count as consecutive failures; at the maximum the schedule disables
// itself and says why; a finished run resets the count; enabling again
// clears it.
func TestSchedulerFailuresDisable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := newFakeClock(at(9, 30, 0))
		sc := newSchedule(t, st, "Hourly", "0 0 * * * *", "UTC", template(t, st), clock.Now())
		starter := &recStarter{st: st}
		s := newTestScheduler(st, clock, starter)
		ev := NewEvaluator(Config{Clock: clock, WorkerID: "w1"}, st, quietLog())
		evaluate := func() {
			t.Helper()
			if _, err := ev.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// 10:00 fails (the run fails), 11:00 finishes (reset), 12:00 fails.
		for _, step := range []struct {
			hour     int
			status   store.RunStatus
			failures int
		}{{10, store.RunFailed, 1}, {11, store.RunFinished, 0}, {12, store.RunFailed, 1}} {
			clock.Set(at(step.hour, 0, 0))
			tick(t, s)
			fs := firings(t, st, sc.ID)
			runID := *fs[len(fs)-1].RunID
			if _, err := st.SetRunStatus(ctx, runID, step.status, store.RunPending); err != nil {
				t.Fatal(err)
			}
			evaluate()
			evaluate() // evaluating again counts nothing twice
			if got := mustSchedule(t, st, sc.ID).ConsecutiveFailures; got != step.failures {
				t.Fatalf("after the %d:00 run %s: %d consecutive failures, want %d", step.hour, step.status, got, step.failures)
			}
		}
		// Then the template stops working: 13:00 and 14:00 cannot start.
		var ve error = &store.ValidationError{Field: "targets[0].provider_id", Message: "no provider with id 9"}
		starter.setErr(ve)
		for _, h := range []int{13, 14} {
			clock.Set(at(h, 0, 0))
			tick(t, s)
		}
		sc = mustSchedule(t, st, sc.ID)
		fs := firings(t, st, sc.ID)
		if sc.Enabled || sc.NextRunAt != nil || sc.ConsecutiveFailures != 3 || !strings.Contains(sc.DisabledReason, "3 consecutive failures") ||
			!strings.Contains(sc.DisabledReason, "no provider with id 9") || fs[len(fs)-1].Status != store.FiringError {
			t.Fatalf("after 3 failures: %+v %s", sc, describe(fs))
		}
		ns, _ := st.Notifications(ctx, store.NotificationFilter{ScheduleID: sc.ID})
		if ns.Total == 0 || ns.Items[0].Severity != "CRITICAL" || !strings.Contains(ns.Items[0].Title, "disabled") {
			t.Errorf("notifications: %+v", ns.Items)
		}
		clock.Set(at(15, 0, 0))
		if n := tick(t, s); n != 0 {
			t.Fatalf("a disabled schedule fired")
		}
		starter.setErr(nil)
		in := store.ScheduleInput{Name: sc.Name, Cron: sc.Cron, Timezone: sc.Timezone, Enabled: true, MaxConsecutiveFailures: 3,
			AutoDisableOnFailure: true, Template: sc.Template}
		if sc, err := st.UpdateSchedule(ctx, sc.ID, in, clock.Now()); err != nil || sc.ConsecutiveFailures != 0 || sc.DisabledReason != "" ||
			!sc.NextRunAt.Equal(at(16, 0, 0)) {
			t.Fatalf("enabled again: %+v %v", sc, err)
		}
	})
}

// TestSchedulerRecoversInterruptedFiring: a process that stopped after
// claiming an occurrence leaves it STARTING; another process links the run
// if it was created, or fires the occurrence again.
func TestSchedulerRecoversInterruptedFiring(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tmpl := template(t, st)
		clock := newFakeClock(at(9, 30, 0))
		lost := newSchedule(t, st, "Lost", "0 0 * * * *", "UTC", tmpl, clock.Now())
		made := newSchedule(t, st, "Made", "0 0 * * * *", "UTC", tmpl, clock.Now())
		clock.Set(at(10, 0, 0))
		next := at(11, 0, 0)
		for _, sc := range []*store.Schedule{lost, made} {
			f, err := st.ClaimOccurrence(ctx, store.OccurrenceClaim{ScheduleID: sc.ID, Revision: sc.Revision, Occurrence: at(10, 0, 0),
				Next: &next, WorkerID: "crashed"}, clock.Now())
			if err != nil || f == nil {
				t.Fatalf("claim: %v %v", f, err)
			}
		}
		// "Made" got as far as creating its run.
		in := tmpl
		in.TriggeredBy, in.ScheduleID = "SCHEDULED", &made.ID
		run, err := st.CreateRun(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		finishRuns(t, st)
		s := NewScheduler(Config{Clock: clock, WorkerID: "w2", StartTimeout: 5 * time.Minute}, st, &recStarter{st: st}, quietLog())
		clock.Set(at(10, 4, 0))
		tick(t, s)
		if fs := firings(t, st, lost.ID); fs[0].Status != store.FiringStarting {
			t.Fatalf("recovered before the timeout: %s", describe(fs))
		}
		clock.Set(at(10, 6, 0))
		tick(t, s)
		if fs := firings(t, st, made.ID); len(fs) != 1 || fs[0].Status != store.FiringStarted || *fs[0].RunID != run.ID {
			t.Errorf("made: %s", describe(fs))
		}
		fs := firings(t, st, lost.ID)
		if len(fs) != 1 || fs[0].Status != store.FiringStarted || fs[0].RunID == nil || fs[0].Attempts != 2 || *fs[0].RunID == run.ID {
			t.Errorf("lost: %s", describe(fs))
		}
	})
}

// TestSchedulerLoop runs the loop itself on the fake clock.
func TestSchedulerLoop(t *testing.T) {
	st := storetest.SQLite(t)
	clock := newFakeClock(at(9, 59, 0))
	sc := newSchedule(t, st, "Minutely", "0 * * * * *", "UTC", template(t, st), clock.Now())
	s := NewScheduler(Config{Clock: clock, PollInterval: time.Second}, st, &recStarter{st: st}, quietLog())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	clock.waitForWaiter(t)
	if fs := firings(t, st, sc.ID); len(fs) != 0 {
		t.Fatalf("fired early: %s", describe(fs))
	}
	clock.Set(at(10, 0, 0))
	clock.waitForWaiter(t) // the loop ran a tick and waits again
	if fs := firings(t, st, sc.ID); len(fs) != 1 || fs[0].Status != store.FiringStarted {
		t.Fatalf("loop: %s", describe(fs))
	}
}

// TestExactlyOnceTwoProcesses: two schedulers on separate connection pools
// to one PostgreSQL race for the same occurrences; each fires exactly once.
func TestExactlyOnceTwoProcesses(t *testing.T) {
	url := storetest.PostgresURL(t)
	ctx := context.Background()
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Config{DatabaseURL: url, Box: storetest.Box(t), MaxActiveRuns: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, b := open(), open()
	tmpl := template(t, a)
	clock := newFakeClock(at(9, 59, 0))
	const schedules, minutes = 12, 8
	var ids []int64
	for i := range schedules {
		ids = append(ids, newSchedule(t, a, "S"+string(rune('a'+i)), "0 * * * * *", "UTC", tmpl, clock.Now()).ID)
	}
	sa := NewScheduler(Config{Clock: clock, WorkerID: "a"}, a, &recStarter{st: a}, quietLog())
	sb := NewScheduler(Config{Clock: clock, WorkerID: "b"}, b, &recStarter{st: b}, quietLog())
	fired := map[string]int{}
	for m := range minutes {
		clock.Set(at(10, m, 0).Add(time.Duration(m) * 10 * time.Millisecond))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, s := range []*Scheduler{sa, sb, sa, sb} {
			wg.Go(func() {
				n, err := s.Tick(ctx)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				fired[s.cfg.WorkerID] += n
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	if fired["a"]+fired["b"] != schedules*minutes {
		t.Fatalf("fired %v, want %d in all", fired, schedules*minutes)
	}
	if fired["a"] == 0 || fired["b"] == 0 {
		t.Logf("one process fired everything (%v); the race still held", fired)
	}
	for _, id := range ids {
		fs := firings(t, a, id)
		seen := map[time.Time]bool{}
		for _, f := range fs {
			if f.Status != store.FiringStarted || seen[*f.ScheduledFor] {
				t.Fatalf("schedule %d: %s", id, describe(fs))
			}
			seen[*f.ScheduledFor] = true
		}
		if len(fs) != minutes {
			t.Fatalf("schedule %d fired %d times, want %d: %s", id, len(fs), minutes, describe(fs))
		}
	}
	runs, _ := a.Runs(ctx, store.RunFilter{PerPage: 500})
	if runs.Total != schedules*minutes {
		t.Fatalf("%d runs, want %d", runs.Total, schedules*minutes)
	}
	t.Logf("fired by process: %v", fired)
}

// runLogMessages is a run's log, oldest first.
func runLogMessages(t *testing.T, st *store.Store, runID int64) []string {
	t.Helper()
	logs, err := st.RunLogs(context.Background(), runID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range logs {
		out = append(out, l.Message)
	}
	return out
}

// TestRunNow: "run now" starts the template at once as the schedule's run
// (triggered by it, as an on-time run, and logged so), records who asked in
// the history, and leaves the schedule's plan alone; a refusal records nothing.
func TestRunNow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := newFakeClock(at(9, 30, 0))
		sc := newSchedule(t, st, "Nightly", "0 0 2 * * *", "UTC", template(t, st), clock.Now())
		starter := &recStarter{st: st}
		run, err := RunNow(ctx, st, starter, sc.ID, "API", clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if run.TriggeredBy != "SCHEDULED" || *run.ScheduleID != sc.ID || run.Name != "Nightly · 2026-01-22 09:30 UTC" {
			t.Errorf("run: %s %v %q", run.TriggeredBy, run.ScheduleID, run.Name)
		}
		if got := runLogMessages(t, st, run.ID); !slices.Contains(got, "Started by schedule “Nightly” (Run now)") {
			t.Errorf("run log %q", got)
		}
		if _, err := RunNow(ctx, st, starter, sc.ID, "MANUAL", clock.Now()); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second run now: %v, want a conflict", err)
		}
		fs := firings(t, st, sc.ID)
		if len(fs) != 1 || fs[0].TriggeredBy != "API" || fs[0].ScheduledFor != nil || *fs[0].RunID != run.ID {
			t.Fatalf("history: %s", describe(fs))
		}
		if after := mustSchedule(t, st, sc.ID); !after.NextRunAt.Equal(*sc.NextRunAt) {
			t.Errorf("run now moved the plan: %v → %v", sc.NextRunAt, after.NextRunAt)
		}
	})
}
