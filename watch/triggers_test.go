package watch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

func newEventSchedule(t *testing.T, st *store.Store, name, event string, sourceID *int64, tmpl store.RunInput, now time.Time) *store.Schedule {
	t.Helper()
	sc, err := st.CreateSchedule(context.Background(), store.ScheduleInput{Name: name, Trigger: "EVENT", Event: event,
		EventSourceID: sourceID, Enabled: true, Template: tmpl}, now)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// startedBy lists the schedules whose runs were started, in order.
func startedBy(runs []*store.Run) []int64 {
	var out []int64
	for _, r := range runs {
		out = append(out, *r.ScheduleID)
	}
	return out
}

func TestFireStartsListeningSchedulesOnly(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxActiveRuns: 10}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		tmpl := template(t, st)
		src3, src4 := int64(3), int64(4)
		anySource := newEventSchedule(t, st, "any import", store.EventImportFinished, nil, tmpl, now)
		fromThree := newEventSchedule(t, st, "import from 3", store.EventImportFinished, &src3, tmpl, now)
		onRun := newEventSchedule(t, st, "after runs", store.EventRunFinished, nil, tmpl, now)
		off := newEventSchedule(t, st, "disabled", store.EventImportFinished, nil, tmpl, now)
		if _, err := st.UpdateSchedule(ctx, off.ID, store.ScheduleInput{Name: off.Name, Trigger: "EVENT", Event: store.EventImportFinished,
			Enabled: false, Template: tmpl}, now); err != nil {
			t.Fatal(err)
		}
		newSchedule(t, st, "cron", "0 0 3 * * *", "UTC", tmpl, now)
		if _, err := st.CreateSchedule(ctx, store.ScheduleInput{Name: "hook", Trigger: "WEBHOOK", Enabled: true, Template: tmpl}, now); err != nil {
			t.Fatal(err)
		}
		starter := &recStarter{st: st}

		// An import from source 4: the schedules on any source, not the one on source 3.
		runs, err := Fire(ctx, st, starter, Event{Name: store.EventImportFinished, SourceID: &src4}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := startedBy(runs); len(got) != 1 || got[0] != anySource.ID {
			t.Fatalf("import from source 4 started schedules %v, want [%d]", got, anySource.ID)
		}
		for _, r := range runs {
			if r.TriggeredBy != "EVENT" {
				t.Errorf("run %d triggered_by %q, want EVENT", r.ID, r.TriggeredBy)
			}
		}
		if fs := firings(t, st, anySource.ID); len(fs) != 1 || fs[0].TriggeredBy != "EVENT" || fs[0].Status != store.FiringStarted ||
			fs[0].RunID == nil || *fs[0].RunID != runs[0].ID {
			t.Errorf("firing of the listening schedule: %s", describe(fs))
		}

		// From source 3: both import listeners, in id order.
		runs, err = Fire(ctx, st, starter, Event{Name: store.EventImportFinished, SourceID: &src3}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := startedBy(runs); len(got) != 2 || got[0] != anySource.ID || got[1] != fromThree.ID {
			t.Fatalf("import from source 3 started %v, want [%d %d]", got, anySource.ID, fromThree.ID)
		}

		// A manual run finished: only the run.finished listener starts.
		manual, err := st.CreateRun(ctx, tmpl)
		if err != nil {
			t.Fatal(err)
		}
		runs, err = Fire(ctx, st, starter, Event{Name: store.EventRunFinished, RunID: manual.ID}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := startedBy(runs); len(got) != 1 || got[0] != onRun.ID {
			t.Fatalf("run.finished started %v, want [%d]", got, onRun.ID)
		}
		// The run that event started finishing starts nothing: no loops.
		again, err := Fire(ctx, st, starter, Event{Name: store.EventRunFinished, RunID: runs[0].ID}, now)
		if err != nil || len(again) != 0 {
			t.Fatalf("an event-started run's end started %v (%v)", startedBy(again), err)
		}
		if fs := firings(t, st, off.ID); len(fs) != 0 {
			t.Errorf("the disabled schedule fired: %s", describe(fs))
		}
		if n := len(starter.ins); n != 4 {
			t.Errorf("%d runs started in all, want 4", n)
		}
	})
}

func TestFireRecordsASkipWhenNoSlotIsFree(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		tmpl := template(t, st)
		sc := newEventSchedule(t, st, "after imports", store.EventImportFinished, nil, tmpl, now)
		if _, err := st.CreateRun(ctx, tmpl); err != nil { // holds the one run slot
			t.Fatal(err)
		}
		runs, err := Fire(ctx, st, &recStarter{st: st}, Event{Name: store.EventImportFinished}, now)
		if err != nil || len(runs) != 0 {
			t.Fatalf("Fire with no free slot: %v, %v", startedBy(runs), err)
		}
		if fs := firings(t, st, sc.ID); len(fs) != 1 || fs[0].Status != store.FiringSkipped || fs[0].TriggeredBy != "EVENT" || fs[0].RunID != nil {
			t.Errorf("want one SKIPPED event firing: %s", describe(fs))
		}
	})
}

// The evaluator fires run.finished once per finished run: a FINISHED run
// starts the listener, a FAILED one does not, and the listener's own run
// finishing starts nothing more.
func TestEvaluatorFiresRunFinished(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxActiveRuns: 10}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := newFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		tmpl := template(t, st)
		sc := newEventSchedule(t, st, "after runs", store.EventRunFinished, nil, tmpl, clock.Now())
		starter := &recStarter{st: st}
		ev := NewEvaluator(Config{Clock: clock, WorkerID: "w1"}, st, quietLog())
		ev.starter = starter
		end := func(status store.RunStatus) *store.Run {
			t.Helper()
			r, err := st.CreateRun(ctx, tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.SetRunStatus(ctx, r.ID, status, store.RunPending); err != nil {
				t.Fatal(err)
			}
			return r
		}
		end(store.RunFailed)
		finished := end(store.RunFinished)
		for range 2 { // the second look finds nothing new
			if _, err := ev.Tick(ctx); err != nil {
				t.Fatal(err)
			}
		}
		fs := firings(t, st, sc.ID)
		if len(fs) != 1 || fs[0].TriggeredBy != "EVENT" || fs[0].RunID == nil || !strings.Contains(fs[0].Message, fmt.Sprintf("run %d", finished.ID)) {
			t.Fatalf("want one EVENT firing for run %d: %s", finished.ID, describe(fs))
		}
		if _, err := st.SetRunStatus(ctx, *fs[0].RunID, store.RunFinished, store.RunPending); err != nil {
			t.Fatal(err)
		}
		if _, err := ev.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if fs := firings(t, st, sc.ID); len(fs) != 1 {
			t.Errorf("the event-started run's end fired again: %s", describe(fs))
		}
	})
}

// TestEvaluatorFiresImportFinished: an IMPORTED run from a trace source
// that finished fires import.finished for that source only.
func TestEvaluatorFiresImportFinished(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxActiveRuns: 10}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clock := newFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		tmpl := template(t, st)
		seven, eight := int64(7), int64(8)
		mine := newEventSchedule(t, st, "after imports of 7", store.EventImportFinished, &seven, tmpl, clock.Now())
		other := newEventSchedule(t, st, "after imports of 8", store.EventImportFinished, &eight, tmpl, clock.Now())
		ev := NewEvaluator(Config{Clock: clock, WorkerID: "w1"}, st, quietLog())
		ev.starter = &recStarter{st: st}
		in := tmpl
		in.Name = "imported"
		run, _, err := st.CreateImportedRun(ctx, in, store.ImportInput{Collection: "qa", Tasks: []store.TaskInput{{TaskKey: "i1", Category: "qa", Question: "q?"}}},
			store.ImportedRun{Targets: []store.ImportedTarget{{Provider: "Langfuse", Model: "qa / v1", Source: &store.RunSource{SourceID: 7, Dataset: "qa", Run: "v1"}}},
				Answers: []store.ImportedAnswer{{TaskKey: "i1", Error: "no trace"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunFinished, store.RunPending); err != nil {
			t.Fatal(err)
		}
		if _, err := ev.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if fs := firings(t, st, mine.ID); len(fs) != 1 || !strings.Contains(fs[0].Message, "from source 7") {
			t.Errorf("the source's listener: %s", describe(fs))
		}
		if fs := firings(t, st, other.ID); len(fs) != 0 {
			t.Errorf("another source's listener fired: %s", describe(fs))
		}
	})
}

// cancellingStarter stands for a shutdown in the middle of an evaluation:
// it ends the evaluator's context as the run.finished listener starts.
type cancellingStarter struct{ cancel context.CancelFunc }

func (c cancellingStarter) StartRun(ctx context.Context, _ store.RunInput) (*store.Run, error) {
	c.cancel()
	return nil, ctx.Err()
}

// An evaluation a shutdown stops midway is left claimed, not recorded as
// done: once its lease runs out, another evaluator does it again, and its
// listener then starts.
func TestEvaluationStoppedMidwayIsRedone(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxActiveRuns: 10}, func(t *testing.T, st *store.Store) {
		clock := newFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		tmpl := template(t, st)
		sc := newEventSchedule(t, st, "after runs", store.EventRunFinished, nil, tmpl, clock.Now())
		r, err := st.CreateRun(context.Background(), tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetRunStatus(context.Background(), r.ID, store.RunFinished, store.RunPending); err != nil {
			t.Fatal(err)
		}
		stopping, stop := context.WithCancel(context.Background())
		defer stop()
		first := NewEvaluator(Config{Clock: clock, WorkerID: "w1", Lease: time.Minute}, st, quietLog())
		first.starter = cancellingStarter{stop}
		first.Tick(stopping) // a shutdown's error or none: either way, not done
		if stopping.Err() == nil {
			t.Fatal("the evaluation never reached its listener")
		}
		second := NewEvaluator(Config{Clock: clock, WorkerID: "w2", Lease: time.Minute}, st, quietLog())
		second.starter = &recStarter{st: st}
		if n, err := second.Tick(context.Background()); err != nil || n != 0 {
			t.Fatalf("within the stopped evaluation's lease: %d evaluated (%v), want none", n, err)
		}
		clock.Advance(time.Minute + time.Second)
		if n, err := second.Tick(context.Background()); err != nil || n != 1 {
			t.Fatalf("after the lease: %d evaluated (%v), want the stopped one again", n, err)
		}
		if fs := firings(t, st, sc.ID); len(fs) != 1 || fs[0].RunID == nil {
			t.Errorf("want the listener started once, by the evaluation done again: %s", describe(fs))
		}
	})
}
