package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestScheduleWebhookToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		in := store.ScheduleInput{Name: "Hook", Trigger: "webhook", Cron: "0 0 3 * * *", Enabled: true, Template: scheduleTemplate(t, st)}
		sc, err := st.CreateSchedule(ctx, in, t0)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Trigger != store.TriggerWebhook || sc.Cron != "" || sc.NextRunAt != nil || len(sc.Token) != 64 {
			t.Fatalf("created: trigger %q cron %q next %v token %q", sc.Trigger, sc.Cron, sc.NextRunAt, sc.Token)
		}
		raw, err := st.RawScheduleToken(ctx, sc.ID)
		sum := sha256.Sum256([]byte(sc.Token))
		if err != nil || raw != hex.EncodeToString(sum[:]) {
			t.Fatalf("stored %q (%v), want the token's SHA-256", raw, err)
		}
		read, err := st.Schedule(ctx, sc.ID)
		if err != nil || read.Token != "" || !read.TokenMatches(sc.Token) || read.TokenMatches("") || read.TokenMatches(sc.Token[:63]+"x") {
			t.Fatalf("read back: token %q, matching %v (%v)", read.Token, read.TokenMatches(sc.Token), err)
		}
		// A cron schedule is never due: the scheduler does not fire webhook schedules.
		if due, err := st.DueSchedules(ctx, t0.Add(48*time.Hour), 10); err != nil || len(due) != 0 {
			t.Errorf("due: %v (%v)", due, err)
		}

		rot, err := st.RotateScheduleToken(ctx, sc.ID, t0)
		if err != nil || rot.Token == "" || rot.Token == sc.Token {
			t.Fatalf("rotate: %+v (%v)", rot, err)
		}
		read, _ = st.Schedule(ctx, sc.ID)
		if read.TokenMatches(sc.Token) || !read.TokenMatches(rot.Token) {
			t.Errorf("after rotation the old token still works or the new one does not")
		}

		// Saving it unchanged keeps the token; switching to CRON drops it.
		in.Trigger = store.TriggerWebhook
		upd, err := st.UpdateSchedule(ctx, sc.ID, in, t0)
		if err != nil || upd.Token != "" || !upd.TokenMatches(rot.Token) {
			t.Fatalf("update kept trigger: token %q, matches %v (%v)", upd.Token, upd.TokenMatches(rot.Token), err)
		}
		in.Trigger, in.Cron = store.TriggerCron, "0 0 3 * * *"
		if upd, err = st.UpdateSchedule(ctx, sc.ID, in, t0); err != nil || upd.TokenHash != "" || upd.TokenMatches(rot.Token) || upd.NextRunAt == nil {
			t.Fatalf("switch to cron: %+v (%v)", upd, err)
		}
		if _, err := st.RotateScheduleToken(ctx, sc.ID, t0); !errors.Is(err, store.ErrConflict) {
			t.Errorf("rotating a cron schedule's token: %v, want a conflict", err)
		}
		// And back to WEBHOOK: a fresh token, shown in that reply.
		in.Trigger = store.TriggerWebhook
		if upd, err = st.UpdateSchedule(ctx, sc.ID, in, t0); err != nil || len(upd.Token) != 64 || !upd.TokenMatches(upd.Token) || upd.NextRunAt != nil {
			t.Fatalf("switch back to webhook: token %q next %v (%v)", upd.Token, upd.NextRunAt, err)
		}
	})
}

func TestScheduleTriggerValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		tmpl := scheduleTemplate(t, st)
		src := int64(7)
		for _, c := range []struct {
			in    store.ScheduleInput
			field string
		}{
			{store.ScheduleInput{Name: "a", Trigger: "SOMETIMES"}, "trigger"},
			{store.ScheduleInput{Name: "b", Trigger: "EVENT"}, "event"},
			{store.ScheduleInput{Name: "c", Trigger: "EVENT", Event: "task.created"}, "event"},
			{store.ScheduleInput{Name: "d", Trigger: "EVENT", Event: store.EventRunFinished, EventSourceID: &src}, "event_source_id"},
			{store.ScheduleInput{Name: "e", Trigger: "CRON"}, "cron"},
		} {
			c.in.Template = tmpl
			_, err := st.CreateSchedule(ctx, c.in, t0)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field {
				t.Errorf("%+v: %v, want a validation error on %s", c.in, err, c.field)
			}
		}
		sc, err := st.CreateSchedule(ctx, store.ScheduleInput{Name: "f", Trigger: "EVENT", Event: store.EventImportFinished,
			EventSourceID: &src, Cron: "0 0 3 * * *", Enabled: true, Template: tmpl}, t0)
		if err != nil || sc.Cron != "" || sc.NextRunAt != nil || sc.Token != "" || sc.TokenHash != "" || *sc.EventSourceID != 7 {
			t.Fatalf("event schedule: %+v (%v)", sc, err)
		}
	})
}
