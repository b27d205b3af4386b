package handlers_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

// runCount counts the runs in the store.
func runCount(t *testing.T, st *store.Store) int {
	t.Helper()
	page, err := st.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return int(page.Total)
}

func TestScheduleWebhookTrigger(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		runBody, _, _ := watchFixture(t, a)

		var s struct {
			scheduleReply
			Trigger string `json:"trigger"`
			Token   string `json:"token"`
		}
		created := a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(
			`{"name":"Hook","trigger":"WEBHOOK","template":%s}`, runBody)}, 201, &s)
		if s.Trigger != "WEBHOOK" || len(s.Token) != 64 || s.Cron != "" || s.NextRunAt != nil {
			t.Fatalf("created: %s", created)
		}
		// The token is shown once: never again in a read or a list.
		for _, path := range []string{fmt.Sprintf("/api/schedules/%d", s.ID), "/api/schedules"} {
			if body := a.do(t, call{method: "GET", path: path}, 200, nil); strings.Contains(body, s.Token) || strings.Contains(body, `"token"`) {
				t.Errorf("GET %s shows the token: %s", path, body)
			}
		}
		if page := a.do(t, call{method: "GET", path: fmt.Sprintf("/schedules/%d", s.ID)}, 200, nil); strings.Contains(page, s.Token) {
			t.Errorf("the schedule page shows the token")
		}

		trigger := fmt.Sprintf("/api/schedules/%d/trigger", s.ID)
		for _, h := range []map[string]string{nil, {"X-Tribunal-Token": ""}, {"X-Tribunal-Token": "wrong"}, {"X-Tribunal-Token": s.Token[:63]}} {
			a.do(t, call{method: "POST", path: trigger, header: h}, 401, nil)
		}
		if n := runCount(t, st); n != 0 {
			t.Fatalf("%d runs after refused calls, want none", n)
		}

		var run watchRunReply
		a.do(t, call{method: "POST", path: trigger, header: map[string]string{"X-Tribunal-Token": s.Token}}, 201, &run)
		if run.TriggeredBy != "WEBHOOK" || run.ScheduleID == nil || *run.ScheduleID != s.ID {
			t.Fatalf("run: %+v", run)
		}
		a.waitRunDone(t, run.ID)
		var history []store.ScheduleFiring
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/schedules/%d/runs", s.ID)}, 200, &history)
		if len(history) != 1 || history[0].TriggeredBy != "WEBHOOK" || history[0].RunID == nil || *history[0].RunID != run.ID {
			t.Errorf("history: %+v", history)
		}

		// Rotating answers a new token once; the old one stops working.
		var rot struct {
			Token string `json:"token"`
		}
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/token", s.ID)}, 200, &rot)
		if len(rot.Token) != 64 || rot.Token == s.Token {
			t.Fatalf("rotated token %q", rot.Token)
		}
		a.do(t, call{method: "POST", path: trigger, header: map[string]string{"X-Tribunal-Token": s.Token}}, 401, nil)
		if n := runCount(t, st); n != 1 {
			t.Fatalf("%d runs after the old token was refused, want 1", n)
		}
		a.do(t, call{method: "POST", path: trigger, header: map[string]string{"X-Tribunal-Token": rot.Token}}, 201, &run)
		a.waitRunDone(t, run.ID)

		// A cron schedule has no webhook: 409, whatever the token.
		var cron scheduleReply
		a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(`{"name":"Nightly","cron":"0 0 3 * * *","template":%s}`, runBody)}, 201, &cron)
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/trigger", cron.ID), header: map[string]string{"X-Tribunal-Token": rot.Token}}, 409, nil)
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/token", cron.ID)}, 409, nil)
		a.do(t, call{method: "POST", path: "/api/schedules/999999/trigger", header: map[string]string{"X-Tribunal-Token": rot.Token}}, 404, nil)
		if n := runCount(t, st); n != 2 {
			t.Errorf("%d runs, want 2", n)
		}
	})
}

// With --auth-token the webhook needs only the schedule's token; every
// other route, the schedule's own included, still needs the server's.
func TestScheduleWebhookUnderAuthToken(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	runBody, _, _ := watchFixture(t, a)
	var s struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(`{"name":"Hook","trigger":"WEBHOOK","template":%s}`, runBody)}, 201, &s)

	// The guarded server's engine only starts the run; newApp's engine runs it.
	log := slog.New(slog.DiscardHandler)
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), log)
	guarded := httptest.NewServer(handlers.New(st, eng, log, handlers.WithEdge(handlers.Edge{AuthToken: "server-secret"})))
	t.Cleanup(guarded.Close)
	g := &app{srv: guarded, st: st, fake: a.fake}

	g.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/trigger", s.ID), header: map[string]string{"X-Tribunal-Token": "wrong"}}, 401, nil)
	for _, c := range []call{
		{method: "POST", path: fmt.Sprintf("/api/schedules/%d/run", s.ID), header: map[string]string{"X-Tribunal-Token": s.Token}},
		{method: "POST", path: fmt.Sprintf("/api/schedules/%d/token", s.ID), header: map[string]string{"X-Tribunal-Token": s.Token}},
		{method: "GET", path: fmt.Sprintf("/api/schedules/%d", s.ID), header: map[string]string{"X-Tribunal-Token": s.Token}},
		{method: "GET", path: fmt.Sprintf("/api/schedules/%d/trigger", s.ID), header: map[string]string{"X-Tribunal-Token": s.Token}},
	} {
		g.do(t, c, 401, nil)
	}
	if n := runCount(t, st); n != 0 {
		t.Fatalf("%d runs before the right token, want none", n)
	}
	var run watchRunReply
	g.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/trigger", s.ID), header: map[string]string{"X-Tribunal-Token": s.Token}}, 201, &run)
	if run.TriggeredBy != "WEBHOOK" {
		t.Fatalf("run: %+v", run)
	}
	a.waitRunDone(t, run.ID)
}
