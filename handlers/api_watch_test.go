package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/secret"
	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/watch"
)

// newWatchApp is newApp with the watch loops (scheduler, evaluator,
// deliverer) running beside the engine, polling fast.
func newWatchApp(t *testing.T, st *store.Store, script func(llmtest.ChatRequest) llmtest.Reply) *app {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, BackoffBase: 10 * time.Millisecond}, st, engine.NewBroker(), log)
	w := watch.New(watch.Config{PollInterval: 20 * time.Millisecond, RetryInterval: 200 * time.Millisecond,
		BackoffBase: 20 * time.Millisecond, BaseURL: "http://tribunal.test", Egress: storetest.Egress}, st, eng, log)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	wg.Go(func() { w.Run(ctx) })
	srv := httptest.NewServer(handlers.New(st, eng, log))
	t.Cleanup(func() { srv.Close(); cancel(); wg.Wait() })
	return &app{srv: srv, st: st, fake: llmtest.New(t, script)}
}

// eventually polls check until it holds or the time is up.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// watchFixture makes a provider on the fake, two tasks and a collection,
// and returns the body of POST /api/runs over them.
func watchFixture(t *testing.T, a *app) (runBody string, providerID, collectionID int64) {
	t.Helper()
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"concurrency":4}`, a.fake.URL)}, 201, &p)
	for i := range 2 {
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"w-%d","category":"c","question":"Question %d?"}`, i, i)}, 201, nil)
	}
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"W","task_ids":["w-0","w-1"]}`}, 201, &col)
	body := fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"},{"provider_id":%d,"model":"fake-large"}],"collection_ids":[%d]}`,
		p.ID, p.ID, p.ID, col.ID)
	return body, p.ID, col.ID
}

type scheduleReply struct {
	ID                     int64          `json:"id"`
	Name                   string         `json:"name"`
	Cron                   string         `json:"cron"`
	Timezone               string         `json:"timezone"`
	Enabled                bool           `json:"enabled"`
	NextRunAt              *time.Time     `json:"next_run_at"`
	LastRunAt              *time.Time     `json:"last_run_at"`
	LastRunID              *int64         `json:"last_run_id"`
	ConsecutiveFailures    int            `json:"consecutive_failures"`
	MaxConsecutiveFailures int            `json:"max_consecutive_failures"`
	AutoDisableOnFailure   bool           `json:"auto_disable_on_failure"`
	Template               store.RunInput `json:"template"`
	Upcoming               []time.Time    `json:"upcoming"`
}

type watchRunReply struct {
	ID          int64           `json:"id"`
	Status      store.RunStatus `json:"status"`
	TriggeredBy string          `json:"triggered_by"`
	ScheduleID  *int64          `json:"schedule_id"`
	KPIValues   []store.RunKPI  `json:"kpi_values"`
}

func (a *app) waitRunDone(t *testing.T, id int64) watchRunReply {
	t.Helper()
	var r watchRunReply
	eventually(t, fmt.Sprintf("run %d to end", id), func() bool {
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", id)}, 200, &r)
		return r.Status == store.RunFinished || r.Status == store.RunFailed || r.Status == store.RunCancelled
	})
	return r
}

func TestSchedulesAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newWatchApp(t, st, nil)
		runBody, _, _ := watchFixture(t, a)

		var s scheduleReply
		a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(
			`{"name":"Nightly","cron":"0 0 3 * * *","timezone":"Europe/Rome","template":%s}`, runBody)}, 201, &s)
		if s.ID == 0 || s.Cron != "0 0 3 * * *" || s.Timezone != "Europe/Rome" || !s.Enabled || s.MaxConsecutiveFailures != 3 ||
			!s.AutoDisableOnFailure || s.NextRunAt == nil || len(s.Template.Targets) != 2 || len(s.Upcoming) != 3 {
			t.Fatalf("created: %+v", s)
		}
		if loc, _ := time.LoadLocation("Europe/Rome"); s.NextRunAt.In(loc).Hour() != 3 || s.Upcoming[0].In(loc).Hour() != 3 {
			t.Errorf("next run %v is not 03:00 in Rome", s.NextRunAt)
		}
		var five scheduleReply
		a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(
			`{"name":"Weekdays","cron":"30 9 * * 1-5","enabled":false,"max_consecutive_failures":5,"auto_disable_on_failure":false,"template":%s}`, runBody)}, 201, &five)
		if five.Enabled || five.NextRunAt != nil || five.MaxConsecutiveFailures != 5 || five.AutoDisableOnFailure || five.Timezone != "UTC" {
			t.Errorf("five fields, disabled: %+v", five)
		}
		for _, tt := range []struct {
			body   string
			status int
			want   string
		}{
			{fmt.Sprintf(`{"name":"X","cron":"0 0 25 * * *","template":%s}`, runBody), 422, "cron"},
			{fmt.Sprintf(`{"name":"X","cron":"0 0 3 * * *","timezone":"Mars/Base","template":%s}`, runBody), 422, "timezone"},
			{`{"name":"X","cron":"0 0 3 * * *"}`, 422, "template"},
			{fmt.Sprintf(`{"name":"X","cron":"0 0 3 * * *","template":%s}`, strings.Replace(runBody, `"targets"`, `"targetz"`, 1)), 400, "targetz"},
			{fmt.Sprintf(`{"name":"X","cron":"0 0 3 * * *","template":{"judge":{"provider_id":1,"model":"j"},"targets":[],"collection_ids":[1]}}`), 422, "template.targets"},
			{fmt.Sprintf(`{"name":"Nightly","cron":"0 0 3 * * *","template":%s}`, runBody), 409, "already exists"},
			{`{"name":"X","cron":5}`, 400, "cron"},
		} {
			got := a.do(t, call{method: "POST", path: "/api/schedules", body: tt.body}, tt.status, nil)
			if !strings.Contains(got, tt.want) {
				t.Errorf("POST %s: %s, want it to mention %q", tt.body, got, tt.want)
			}
		}
		var list []scheduleReply
		a.do(t, call{method: "GET", path: "/api/schedules"}, 200, &list)
		if len(list) != 2 {
			t.Fatalf("list: %+v", list)
		}
		// PUT with only the fields that change; PATCH alike.
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/schedules/%d", s.ID), body: `{"enabled":false}`}, 200, &s)
		if s.Enabled || s.NextRunAt != nil || s.Name != "Nightly" || len(s.Template.Targets) != 2 {
			t.Fatalf("disabled: %+v", s)
		}
		a.do(t, call{method: "PATCH", path: fmt.Sprintf("/api/schedules/%d", s.ID), body: `{"enabled":true,"cron":"0 15 4 * * MON-FRI"}`}, 200, &s)
		if !s.Enabled || s.NextRunAt == nil || s.Cron != "0 15 4 * * MON-FRI" {
			t.Fatalf("enabled again: %+v", s)
		}

		// Run now. Calls take a while, so the run is still active when it is asked for again.
		a.fake.SetScript(func(r llmtest.ChatRequest) llmtest.Reply {
			rep := llmtest.DefaultReply(r)
			rep.Delay = 100 * time.Millisecond
			return rep
		})
		var run watchRunReply
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/run", s.ID)}, 201, &run)
		// The run is the schedule's (as an on-time one); the history says the API asked.
		if run.TriggeredBy != "SCHEDULED" || run.ScheduleID == nil || *run.ScheduleID != s.ID {
			t.Fatalf("run now: %+v", run)
		}
		if logs := runLog(t, st, run.ID); !strings.Contains(logs, "Started by schedule “Nightly” (Run now)") {
			t.Errorf("run now's log: %s", logs)
		}
		got := a.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/run", s.ID)}, 409, nil)
		if !strings.Contains(got, "active") {
			t.Errorf("second run now: %s", got)
		}
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("run now ended %s", r.Status)
		}
		var hist []store.ScheduleFiring
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/schedules/%d/runs", s.ID)}, 200, &hist)
		if len(hist) != 1 || hist[0].RunID == nil || *hist[0].RunID != run.ID || hist[0].TriggeredBy != "API" || hist[0].Status != store.FiringStarted {
			t.Fatalf("history: %+v", hist)
		}
		eventually(t, "the run's outcome in the history", func() bool {
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/schedules/%d/runs", s.ID)}, 200, &hist)
			return hist[0].Outcome == store.OutcomeSucceeded
		})
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/schedules/%d", s.ID)}, 200, &s)
		if s.LastRunID == nil || *s.LastRunID != run.ID || s.LastRunAt == nil {
			t.Errorf("last run: %+v", s)
		}

		// The scheduler fires on its own: every second.
		var every scheduleReply
		a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(`{"name":"Every second","cron":"* * * * * *","template":%s}`, runBody)}, 201, &every)
		var runs struct {
			Items []watchRunReply `json:"items"`
		}
		eventually(t, "a scheduled run", func() bool {
			a.do(t, call{method: "GET", path: "/api/runs"}, 200, &runs)
			return runs.Items[0].ScheduleID != nil && *runs.Items[0].ScheduleID == every.ID
		})
		if r := runs.Items[0]; r.TriggeredBy != "SCHEDULED" {
			t.Errorf("scheduled run %+v", r)
		}
		// The scheduler writes its line just after the run stands.
		eventually(t, "the schedule's line in the run's log", func() bool {
			return strings.Contains(runLog(t, st, runs.Items[0].ID), "Started by schedule “Every second” (due ")
		})
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/schedules/%d", every.ID), body: `{"enabled":false}`}, 200, nil)
		if r := runs.Items[0]; r.ScheduleID == nil || *r.ScheduleID != every.ID {
			t.Errorf("scheduled run: %+v", r)
		}
		a.waitRunDone(t, runs.Items[0].ID)

		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/schedules/%d", every.ID)}, 204, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/schedules/%d", every.ID)}, 404, nil)
		a.do(t, call{method: "POST", path: "/api/schedules/999/run"}, 404, nil)
	})
}

func TestKPIsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newWatchApp(t, st, nil) // the judge gives 7
		runBody, _, colID := watchFixture(t, a)

		var v struct {
			OK     bool `json:"ok"`
			Errors []struct {
				Message  string `json:"message"`
				Position int    `json:"position"`
			} `json:"errors"`
		}
		raw := a.do(t, call{method: "POST", path: "/api/kpis/validate", body: `{"formula":"WEIGHTED_SUM(accuracy:0.5, coherence:0.5)"}`}, 200, &v)
		if !v.OK || len(v.Errors) != 0 || !strings.Contains(raw, `"errors":[]`) {
			t.Errorf("valid: %s", raw)
		}
		a.do(t, call{method: "POST", path: "/api/kpis/validate", body: `{"formula":"AVERAGE(accuracy, bogus) +"}`}, 200, &v)
		if v.OK || len(v.Errors) != 2 || !strings.Contains(v.Errors[0].Message, `unknown metric "bogus"`) || v.Errors[0].Position != 19 ||
			v.Errors[1].Position != 27 {
			t.Errorf("invalid: %+v", v)
		}
		a.do(t, call{method: "POST", path: "/api/kpis/validate", body: `{"formula":"IF score > 5 THEN 1 ELSE 0"}`}, 200, &v)
		if !v.OK {
			t.Errorf("IF: %+v", v)
		}

		var k struct {
			ID           int64            `json:"id"`
			Name         string           `json:"name"`
			Formula      string           `json:"formula"`
			CollectionID *int64           `json:"collection_id"`
			Metrics      []string         `json:"metrics"`
			Values       []store.KPIPoint `json:"values"`
		}
		a.do(t, call{method: "POST", path: "/api/kpis", body: fmt.Sprintf(`{"name":"Quality","formula":"score * 10 + pass_rate","collection_id":%d}`, colID)}, 201, &k)
		if k.ID == 0 || *k.CollectionID != colID || len(k.Metrics) != 2 || k.Metrics[0] != "pass_rate" {
			t.Fatalf("created: %+v", k)
		}
		got := a.do(t, call{method: "POST", path: "/api/kpis", body: `{"name":"Bad","formula":"score +"}`}, 422, nil)
		if !strings.Contains(got, "formula") || !strings.Contains(got, "column 8") {
			t.Errorf("bad formula: %s", got)
		}
		a.do(t, call{method: "POST", path: "/api/kpis", body: `{"name":"Quality","formula":"score"}`}, 409, nil)

		var run watchRunReply
		a.do(t, call{method: "POST", path: "/api/runs", body: runBody}, 201, &run)
		a.waitRunDone(t, run.ID)
		eventually(t, "KPI values on the run", func() bool {
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
			return len(run.KPIValues) == 1
		})
		kv := run.KPIValues[0]
		// score 7, pass rate 1 (7 ≥ the default pass threshold)
		if kv.Name != "Quality" || kv.Value == nil || len(kv.PerModel) != 2 || kv.PerModel[0].Value == nil {
			t.Fatalf("run KPI values: %+v", run.KPIValues)
		}
		want := *kv.Value
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/kpis/%d", k.ID)}, 200, &k)
		if len(k.Values) != 3 || k.Values[0].RunID != run.ID {
			t.Fatalf("KPI values: %+v", k.Values)
		}
		// A new formula is computed for past runs at once.
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/kpis/%d", k.ID), body: `{"formula":"score * 100"}`}, 200, &k)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
		// KPIs read judge scores normalised to 0–1: 7 on the 1–10 scale is 6/9.
		if len(run.KPIValues) != 1 || math.Abs(*run.KPIValues[0].Value-600.0/9) > 1e-9 || *run.KPIValues[0].Value == want || *k.CollectionID != colID {
			t.Fatalf("after a new formula: %+v (KPI %+v)", run.KPIValues, k)
		}
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/kpis/%d", k.ID), body: `{"formula":"nope"}`}, 422, nil)
		var vals []store.KPIPoint
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/kpis/%d/values", k.ID)}, 200, &vals)
		if len(vals) != 3 {
			t.Errorf("values: %+v", vals)
		}
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/kpis/%d", k.ID)}, 204, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
		if len(run.KPIValues) != 0 {
			t.Errorf("values of a deleted KPI: %+v", run.KPIValues)
		}
	})
}

func TestAlertsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newWatchApp(t, st, nil)
		runBody, _, _ := watchFixture(t, a)
		var mu sync.Mutex
		var hooks []map[string]any
		fails := 1
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			if fails > 0 { // the first attempt fails: the delivery is retried
				fails--
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			hooks = append(hooks, m)
		}))
		defer receiver.Close()

		var alert store.Alert
		a.do(t, call{method: "POST", path: "/api/alerts", body: fmt.Sprintf(`{"name":"Score low","metric":"score","model":"fake-small","condition":"LESS_THAN",
			"threshold":0.8,"severity":"CRITICAL","channels":[{"type":"in_app"},{"type":"webhook","url":%q},{"type":"email","to":"ops@example.com"}]}`, receiver.URL)}, 201, &alert)
		if alert.ID == 0 || alert.BaselineRuns != 5 || len(alert.Channels) != 3 || alert.Channels[1].URL != secret.Mask(receiver.URL) || !alert.Enabled {
			t.Fatalf("created: %+v", alert)
		}
		for _, tt := range []struct{ body, want string }{
			{`{"name":"x","metric":"score","condition":"LESS_THAN"}`, "threshold"},
			{`{"name":"x","metric":"nope","condition":"LESS_THAN","threshold":1}`, "unknown metric"},
			{`{"name":"x","metric":"score","condition":"MAYBE","threshold":1}`, "condition"},
			{`{"name":"x","metric":"score","condition":"LESS_THAN","threshold":1,"channels":[{"type":"slack"}]}`, "channels[0].url"},
			{`{"name":"x","kpi_id":999,"condition":"LESS_THAN","threshold":1}`, "kpi_id"},
		} {
			if got := a.do(t, call{method: "POST", path: "/api/alerts", body: tt.body}, 422, nil); !strings.Contains(got, tt.want) {
				t.Errorf("POST %s: %s, want %q", tt.body, got, tt.want)
			}
		}
		var drop store.Alert
		a.do(t, call{method: "POST", path: "/api/alerts", body: `{"name":"Drop","metric":"pass_rate","condition":"PERCENTAGE_DROP","threshold":10,"baseline_runs":3}`}, 201, &drop)

		var run watchRunReply
		a.do(t, call{method: "POST", path: "/api/runs", body: runBody}, 201, &run)
		a.waitRunDone(t, run.ID)
		type notes struct {
			Items []struct {
				store.Notification
				Read bool   `json:"read"`
				Link string `json:"link"`
			} `json:"items"`
			Total  int64 `json:"total"`
			Unread int64 `json:"unread"`
		}
		var ns notes
		eventually(t, "the webhook delivered after a retry", func() bool {
			a.do(t, call{method: "GET", path: "/api/notifications"}, 200, &ns)
			return ns.Total == 1 && len(ns.Items[0].Deliveries) == 3 && ns.Items[0].Deliveries[1].Status == store.DeliverySent
		})
		n := ns.Items[0]
		if n.AlertID == nil || *n.AlertID != alert.ID || *n.RunID != run.ID || math.Abs(*n.Value-6.0/9) > 1e-9 || *n.Threshold != 0.8 ||
			n.Model != "Fake / fake-small" || n.Link != fmt.Sprintf("/runs/%d", run.ID) || n.Read || ns.Unread != 1 || n.AlertName != "Score low" {
			t.Errorf("notification: %+v", n)
		}
		if d := n.Deliveries; d[0].Channel != "in_app" || d[0].Status != store.DeliverySent || d[1].Attempts != 2 ||
			d[2].Channel != "email" || d[2].Status != store.DeliveryNotConfigured {
			t.Errorf("deliveries: %+v", d)
		}
		mu.Lock()
		if len(hooks) != 1 || hooks[0]["run_id"] != float64(run.ID) || math.Abs(hooks[0]["value"].(float64)-6.0/9) > 1e-9 || hooks[0]["link"] != fmt.Sprintf("http://tribunal.test/runs/%d", run.ID) {
			t.Errorf("webhook: %+v", hooks)
		}
		mu.Unlock()

		var marked map[string]int64
		a.do(t, call{method: "POST", path: "/api/notifications/read"}, 200, &marked)
		if marked["marked"] != 1 || marked["unread"] != 0 {
			t.Errorf("mark read: %v", marked)
		}
		a.do(t, call{method: "GET", path: "/api/notifications?unread=true"}, 200, &ns)
		if ns.Total != 0 {
			t.Errorf("unread after marking: %+v", ns)
		}

		// PATCH switches the alert to a KPI, dropping the metric; then disables it.
		var k struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/kpis", body: `{"name":"Q","formula":"score"}`}, 201, &k)
		a.do(t, call{method: "PATCH", path: fmt.Sprintf("/api/alerts/%d", alert.ID), body: fmt.Sprintf(`{"kpi_id":%d,"model":""}`, k.ID)}, 200, &alert)
		if alert.KPIID == nil || *alert.KPIID != k.ID || alert.Metric != "" || alert.Threshold != 0.8 || len(alert.Channels) != 3 {
			t.Errorf("switched to a KPI: %+v", alert)
		}
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/alerts/%d", alert.ID), body: `{"enabled":false}`}, 200, &alert)
		if alert.Enabled {
			t.Errorf("still enabled")
		}
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/alerts/%d/test", alert.ID)}, 201, nil)
		var alerts []store.Alert
		a.do(t, call{method: "GET", path: "/api/alerts"}, 200, &alerts)
		if len(alerts) != 2 {
			t.Errorf("list: %+v", alerts)
		}
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/alerts/%d", drop.ID)}, 204, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/alerts/%d", drop.ID)}, 404, nil)
	})
}

func TestWatchPages(t *testing.T) {
	st := storetest.SQLite(t)
	a := newWatchApp(t, st, nil)
	runBody, providerID, colID := watchFixture(t, a)
	var s scheduleReply
	a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(`{"name":"Nightly","cron":"0 0 3 * * *","template":%s}`, runBody)}, 201, &s)

	for _, path := range []string{"/schedules", fmt.Sprintf("/schedules/%d", s.ID), "/kpis", "/alerts", "/notifications"} {
		res, doc, _ := a.get(t, path)
		if res.StatusCode != 200 || doc.Find(`[data-testid=watch-link][aria-current=page]`).Length() != 1 {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}
	// The schedule's form shows its template.
	_, doc, _ := a.get(t, fmt.Sprintf("/schedules/%d", s.ID))
	if doc.Find(`input[name=target_model][value=fake-large]`).Length() != 1 || doc.Find(fmt.Sprintf(`input[name=collection_ids][value="%d"][checked]`, colID)).Length() != 1 {
		t.Errorf("the edit form lost the template")
	}
	// Create a schedule from the form.
	form := url.Values{"schedule_name": {"Form made"}, "cron": {"0 30 6 * * MON-FRI"}, "timezone": {"Europe/Rome"}, "enabled": {"1"},
		"max_consecutive_failures": {"2"}, "judge_provider_id": {fmt.Sprint(providerID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(providerID)}, "target_model": {"fake-small"}, "collection_ids": {fmt.Sprint(colID)}}
	res, _ := a.post(t, "/schedules", form, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create from the form: %d", res.StatusCode)
	}
	list, _ := st.Schedules(context.Background())
	if len(list) != 2 || list[0].Name != "Form made" || list[0].MaxConsecutiveFailures != 2 || list[0].Template.Judge.Model != "fake-judge" {
		t.Fatalf("schedules: %+v", list)
	}
	form.Set("cron", "0 0 99 * * *")
	res, doc = a.post(t, "/schedules", form, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=error-cron]").Text(), "above maximum") {
		t.Errorf("bad cron from the form: %d %q", res.StatusCode, doc.Find("[data-testid=error-cron]").Text())
	}
	// The cron preview and the live formula check.
	_, doc = a.post(t, "/schedules/preview", url.Values{"cron": {"0 0 9 * * *"}, "timezone": {"Asia/Tokyo"}}, nil)
	if !strings.Contains(doc.Find("[data-testid=cron-next]").Text(), "09:00:00 JST") {
		t.Errorf("cron preview: %q", doc.Text())
	}
	_, doc = a.post(t, "/kpis/check", url.Values{"formula": {"AVERAGE(accuracy,, coherence)"}}, nil)
	if e := doc.Find("[data-testid=formula-errors]").Text(); !strings.Contains(e, "Column 18") || !strings.Contains(doc.Find("pre").Text(), "^") {
		t.Errorf("formula check: %q", e)
	}
	_, doc = a.post(t, "/kpis/check", url.Values{"formula": {"AVERAGE(accuracy, coherence)"}}, nil)
	if !strings.Contains(doc.Find("[data-testid=formula-ok]").Text(), "reads accuracy, coherence") {
		t.Errorf("formula ok: %q", doc.Text())
	}
	// KPI and alert forms.
	res, _ = a.post(t, "/kpis", url.Values{"name": {"Quality"}, "formula": {"score"}, "scope": {fmt.Sprintf("s:%d", s.ID)}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create KPI from the form: %d", res.StatusCode)
	}
	res, doc = a.post(t, "/kpis", url.Values{"name": {"Broken"}, "formula": {"score +"}}, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Find("#formula-check").Text(), "column 8") {
		t.Errorf("bad KPI from the form: %d %q", res.StatusCode, doc.Find("#formula-check").Text())
	}
	res, _ = a.post(t, "/alerts", url.Values{"name": {"Low"}, "watch": {"metric:score"}, "condition": {"LESS_THAN"}, "threshold": {"5"},
		"severity": {"WARNING"}, "channels": {"in_app\nslack https://hooks.slack.test/x"}, "enabled": {"1"}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create alert from the form: %d", res.StatusCode)
	}
	alerts, _ := st.Alerts(context.Background())
	if len(alerts) != 1 || len(alerts[0].Channels) != 2 || alerts[0].Channels[1].URL != secret.Mask("https://hooks.slack.test/x") {
		t.Fatalf("alerts: %+v", alerts)
	}
	// Run now from the page redirects to the run, logged as the schedule's; the badge counts unread notifications.
	res, _ = a.post(t, fmt.Sprintf("/schedules/%d/run", s.ID), nil, map[string]string{"HX-Request": "true"})
	loc := res.Header.Get("HX-Redirect")
	if !strings.HasPrefix(loc, "/runs/") {
		t.Errorf("run now: %d %q", res.StatusCode, loc)
	} else if id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64); !strings.Contains(runLog(t, st, id), "Started by schedule “"+s.Name+"” (Run now)") {
		t.Errorf("run now from the page: log %s", runLog(t, st, id))
	}
	_, doc, _ = a.get(t, "/watch/badge")
	if doc.Find("[data-testid=unread-count]").Length() != 0 {
		t.Errorf("a badge with nothing unread")
	}
	res, _ = a.post(t, fmt.Sprintf("/alerts/%d/test", alerts[0].ID), nil, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("test alert: %d", res.StatusCode)
	}
	_, doc, _ = a.get(t, "/watch/badge")
	if doc.Find("[data-testid=unread-count]").Text() != "1" {
		t.Errorf("badge: %q", doc.Text())
	}
	_, doc, _ = a.get(t, "/notifications")
	if doc.Find("[data-testid=notification]").Length() != 1 {
		t.Errorf("notifications page")
	}
}

// runLog is a run's log messages, one a line.
func runLog(t *testing.T, st *store.Store, runID int64) string {
	t.Helper()
	logs, err := st.RunLogs(context.Background(), runID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range logs {
		b.WriteString(l.Message + "\n")
	}
	return b.String()
}

// GET /api/kpis/metrics is the vocabulary the formula checker uses: the
// seed's names as aliases, every check, and the judges' own metrics.
func TestKPIMetricsAPI(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	a.do(t, call{method: "POST", path: "/api/judgement-styles", body: `{"name":"Help","scale_min":1,"scale_max":5,
		"metrics":[{"name":"helpfulness","description":"Does it help?","weight":1}]}`}, 201, nil)
	var list []struct {
		Name        string   `json:"name"`
		Aliases     []string `json:"aliases"`
		Description string   `json:"description"`
		Scale       string   `json:"scale"`
	}
	raw := a.do(t, call{method: "GET", path: "/api/kpis/metrics"}, 200, &list)
	byName := map[string]int{}
	for i, m := range list {
		byName[m.Name] = i
	}
	for name, want := range map[string]string{"accuracy": "ACCURACY", "check_rouge_l": "ROUGE", "check_bleu": "BLEU",
		"check_f1": "F1_SCORE", "check_precision": "PRECISION", "check_recall": "RECALL", "latency_ms": "LATENCY_MS",
		"cost_usd": "COST_USD", "pass_rate": "PASS_RATE"} {
		i, ok := byName[name]
		if !ok || !slices.Contains(list[i].Aliases, want) || list[i].Description == "" {
			t.Errorf("%s: want alias %s and a description in %s", name, want, raw)
		}
	}
	if i, ok := byName["helpfulness"]; !ok || list[i].Description != "Does it help?" || list[i].Scale != "0–1" {
		t.Errorf("the style's metric: %s", raw)
	}
	if i := byName["latency_ms"]; list[i].Scale != "ms" {
		t.Errorf("latency_ms scale %q, want ms", list[i].Scale)
	}
	if strings.Contains(raw, `"aliases":null`) {
		t.Errorf("aliases must be a list: %s", raw)
	}

	// The KPI form's help is the same list.
	_, doc, _ := a.get(t, "/kpis")
	help := doc.Find(`[data-testid="known-metrics"] tbody tr`)
	if help.Length() != len(list) || !strings.Contains(help.Text(), "ROUGE") || !strings.Contains(help.Text(), "Does it help?") {
		t.Errorf("KPI form help: %d rows for %d metrics: %q", help.Length(), len(list), help.Text())
	}

	var v struct {
		OK     bool `json:"ok"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	a.do(t, call{method: "POST", path: "/api/kpis/validate", body: `{"formula":"THRESHOLD(accuracy, 0.8) + rouge + HELPFULNESS"}`}, 200, &v)
	if !v.OK {
		t.Errorf("aliases and style metrics: %+v", v)
	}
	a.do(t, call{method: "POST", path: "/api/kpis/validate", body: `{"formula":"helpfulnes + ROUGH"}`}, 200, &v)
	if v.OK || len(v.Errors) != 2 || !strings.Contains(v.Errors[0].Message, "close: helpfulness") ||
		!strings.Contains(v.Errors[1].Message, "close: ROUGE") {
		t.Errorf("close names: %+v", v)
	}
}
