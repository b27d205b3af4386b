package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

var t0 = time.Date(2026, 1, 22, 9, 30, 0, 0, time.UTC)

// scheduleTemplate makes a provider, task and collection and returns a run template over them.
func scheduleTemplate(t *testing.T, st *store.Store) store.RunInput {
	t.Helper()
	run := makeRun(t, st, 1, 1)
	if _, err := st.SetRunStatus(context.Background(), run.ID, store.RunFinished, store.RunRunning); err != nil {
		t.Fatal(err)
	}
	return store.RunInput{Judge: &store.ModelRef{ProviderID: *run.Targets[0].ProviderID, Model: "j"},
		Targets:       []store.ModelRef{{ProviderID: *run.Targets[0].ProviderID, Model: "m"}},
		CollectionIDs: []int64{*run.Collections[0].CollectionID}}
}

func TestWatchScheduleValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tmpl := scheduleTemplate(t, st)
		noTargets := tmpl
		noTargets.Targets = nil
		ghost := tmpl
		ghost.Targets = []store.ModelRef{{ProviderID: 999, Model: "m"}}
		noJudge := tmpl
		noJudge.Judge = nil
		ok := store.ScheduleInput{Name: "Nightly", Cron: "0 0 2 * * *", Timezone: "Europe/Rome", Enabled: true, Template: tmpl}
		if _, err := st.CreateSchedule(ctx, ok, t0); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name  string
			edit  func(*store.ScheduleInput)
			field string
			msg   string
		}{
			{"no name", func(in *store.ScheduleInput) { in.Name = " " }, "name", "is required"},
			{"bad cron", func(in *store.ScheduleInput) { in.Cron = "0 0 25 * * *" }, "cron", "above maximum"},
			{"no cron", func(in *store.ScheduleInput) { in.Cron = "" }, "cron", "is required"},
			{"bad zone", func(in *store.ScheduleInput) { in.Timezone = "Europe/Atlantis" }, "timezone", "unknown time zone"},
			{"max failures", func(in *store.ScheduleInput) { in.MaxConsecutiveFailures = -1 }, "max_consecutive_failures", "1…1000"},
			{"no targets", func(in *store.ScheduleInput) { in.Template = noTargets }, "template.targets", "at least one"},
			{"ghost provider", func(in *store.ScheduleInput) { in.Template = ghost }, "template.targets[0].provider_id", "no provider with id 999"},
			{"no judge", func(in *store.ScheduleInput) { in.Template = noJudge }, "template.judge.provider_id", "is required"},
		} {
			in := ok
			in.Name = "Other"
			tt.edit(&in)
			_, err := st.CreateSchedule(ctx, in, t0)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Message, tt.msg) {
				t.Errorf("%s: %v, want %s: …%s…", tt.name, err, tt.field, tt.msg)
			}
		}
		if _, err := st.CreateSchedule(ctx, ok, t0); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name: %v", err)
		}
	})
}

// TestWatchScheduleLifecycle: disabling clears the plan, enabling plans
// from now and clears failures, a new expression plans afresh, and every
// change invalidates a claim made on the old revision.
func TestWatchScheduleLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		in := store.ScheduleInput{Name: "Hourly", Cron: "0 0 * * * *", Enabled: true, AutoDisableOnFailure: true, Template: scheduleTemplate(t, st)}
		sc, err := st.CreateSchedule(ctx, in, t0)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Timezone != "UTC" || sc.MaxConsecutiveFailures != 3 || !sc.NextRunAt.Equal(t0.Add(30*time.Minute)) || sc.Template.Repeats != 1 {
			t.Fatalf("created: %+v", sc)
		}
		if out, err := st.RecordScheduleOutcome(ctx, sc.ID, false, "x", t0); err != nil || out.ConsecutiveFailures != 1 || out.Disabled {
			t.Fatalf("failure: %+v %v", out, err)
		}
		in.Enabled = false
		if sc, err = st.UpdateSchedule(ctx, sc.ID, in, t0); err != nil || sc.NextRunAt != nil || sc.Enabled {
			t.Fatalf("disabled: %+v %v", sc, err)
		}
		in.Enabled = true
		later := t0.Add(5 * time.Hour)
		if sc, err = st.UpdateSchedule(ctx, sc.ID, in, later); err != nil || !sc.NextRunAt.Equal(time.Date(2026, 1, 22, 15, 0, 0, 0, time.UTC)) || sc.ConsecutiveFailures != 0 {
			t.Fatalf("enabled: %+v %v", sc, err)
		}
		old := sc.Revision
		in.Cron = "0 30 9 * * MON-FRI"
		if sc, err = st.UpdateSchedule(ctx, sc.ID, in, later); err != nil || !sc.NextRunAt.Equal(time.Date(2026, 1, 23, 9, 30, 0, 0, time.UTC)) {
			t.Fatalf("new cron: %+v %v", sc, err)
		}
		next := sc.NextRunAt.Add(24 * time.Hour)
		f, err := st.ClaimOccurrence(ctx, store.OccurrenceClaim{ScheduleID: sc.ID, Revision: old, Occurrence: *sc.NextRunAt, Next: &next}, later)
		if err != nil || f != nil {
			t.Fatalf("a claim on an old revision won: %+v %v", f, err)
		}
		if err := st.DeleteSchedule(ctx, sc.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Schedule(ctx, sc.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted schedule: %v", err)
		}
	})
}

// TestWatchClaimOccurrenceExclusive: many claimers of one occurrence, one winner.
func TestWatchClaimOccurrenceExclusive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		sc, err := st.CreateSchedule(ctx, store.ScheduleInput{Name: "S", Cron: "0 0 * * * *", Enabled: true, Template: scheduleTemplate(t, st)}, t0)
		if err != nil {
			t.Fatal(err)
		}
		next := sc.NextRunAt.Add(time.Hour)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Go(func() {
				f, err := st.ClaimOccurrence(ctx, store.OccurrenceClaim{ScheduleID: sc.ID, Revision: sc.Revision, Occurrence: *sc.NextRunAt,
					Next: &next, WorkerID: string(rune('a' + i))}, t0.Add(30*time.Minute))
				if err != nil {
					t.Error(err)
				}
				if f != nil {
					mu.Lock()
					won++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d claimers won the same occurrence", won)
		}
		fs, _ := st.ScheduleFirings(ctx, sc.ID, 10)
		if len(fs) != 1 || fs[0].Status != store.FiringStarting {
			t.Fatalf("firings: %+v", fs)
		}
	})
}

// TestTaskRefJSON checks that a run template's task_ids read back as they
// were written (schedules store the template as JSON), old rows included.
func TestTaskRefJSON(t *testing.T) {
	in := []store.TaskRef{{ID: 12}, {Key: "t-1"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[12,"t-1"]` {
		t.Errorf("marshal: %s, want [12,\"t-1\"]", b)
	}
	for _, src := range []string{string(b), `[{"ID":12,"Key":""},{"ID":0,"Key":"t-1"}]`} {
		var out []store.TaskRef
		if err := json.Unmarshal([]byte(src), &out); err != nil {
			t.Fatalf("unmarshal %s: %v", src, err)
		}
		if len(out) != 2 || out[0] != in[0] || out[1] != in[1] {
			t.Errorf("unmarshal %s: %+v, want %+v", src, out, in)
		}
	}
}
