package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/watch"
)

// TestWatchPages drives the schedule and KPI pages in Chromium: create a
// schedule with the cron preview, run it now, write a KPI formula with a
// mistake the page points at as it is typed, fix it, and see its trend.
func TestWatchPages(t *testing.T) {
	chromePath(t) // skips without a browser
	st := storetest.SQLite(t)
	fake := llmtest.New(t, nil)
	log := slog.New(slog.DiscardHandler)
	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond}, st, engine.NewBroker(), log)
	w := watch.New(watch.Config{PollInterval: 50 * time.Millisecond}, st, eng, log)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	wg.Go(func() { w.Run(ctx) })
	srv := httptest.NewServer(handlers.New(st, eng, log))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); cancel(); wg.Wait() })

	_, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: fake.URL, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	var refs []store.TaskRef
	for i := range 2 {
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: fmt.Sprintf("t%d", i), Category: "c", Question: fmt.Sprintf("Question %d?", i)})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, store.TaskRef{ID: tk.ID})
	}
	if _, err := st.CreateCollection(ctx, store.CollectionInput{Name: "Smoke", TaskIDs: &refs}); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, srv.URL)
	clearCron := func() {
		t.Helper()
		mustEval[bool](b, "clear the cron", `(() => { document.querySelector("[data-testid=cron-input]").value = ""; return true })()`)
	}
	b.open("/schedules")
	b.waitFor("the schedule form", `document.querySelector("[data-testid=schedule-form]")`, 10*time.Second)
	b.typeInto("[data-testid=schedule-name-input]", "Weekday smoke")
	clearCron()
	b.typeInto("[data-testid=cron-input]", "0 0 9 * * MON-FRI")
	b.waitFor("the cron preview", `document.querySelector("[data-testid=cron-next]")?.innerText.includes("09:00:00")`, 10*time.Second)
	clearCron()
	b.typeInto("[data-testid=cron-input]", "0 0 25 * * *")
	b.waitFor("the cron problem", `document.querySelector("[data-testid=cron-problem]")?.innerText.includes("above maximum")`, 10*time.Second)
	clearCron()
	b.typeInto("[data-testid=cron-input]", "0 0 9 * * MON-FRI")
	b.choose("select[name=judge_provider_id]", "Fake")
	b.typeInto("input[name=judge_model]", "fake-judge")
	b.choose("select[name=target_provider_id]", "Fake")
	b.typeInto("input[name=target_model]", "fake-small")
	b.click("[data-testid=schedule-collections] input[type=checkbox]")
	b.click("[data-testid=save-schedule]")
	b.waitFor("the schedule page", `document.querySelector("[data-testid=schedule-name]")?.innerText === "Weekday smoke"`, 10*time.Second)
	if got := b.text("[data-testid=upcoming]"); !strings.Contains(got, "09:00:00 UTC") {
		t.Errorf("upcoming: %q", got)
	}
	b.screenshot("watch-schedule.png")

	b.click("[data-testid=run-now]")
	b.waitFor("the run page", `location.pathname.startsWith("/runs/")`, 10*time.Second)
	var runs store.Page[store.Run]
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs, err = st.Runs(ctx, store.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs.Items) == 1 && !runs.Items[0].Active() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %+v", runs.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := runs.Items[0]; r.TriggeredBy != "SCHEDULED" || r.ScheduleID == nil || r.Status != store.RunFinished {
		t.Fatalf("run: %+v", r)
	}

	b.open("/kpis")
	b.typeInto("[data-testid=kpi-name-input]", "Quality")
	b.typeInto("[data-testid=formula-input]", "score * 10 +")
	b.waitFor("the formula's problem", `document.querySelector("[data-testid=formula-errors]")?.innerText.includes("Column 13: expected a value after '+'")`, 10*time.Second)
	b.typeInto("[data-testid=formula-input]", " pass_rate")
	b.waitFor("the formula accepted", `document.querySelector("[data-testid=formula-ok]")?.innerText.includes("pass_rate, score")`, 10*time.Second)
	b.click("[data-testid=save-kpi]")
	b.waitFor("the KPI page", `document.querySelector("[data-testid=kpi-name]")?.innerText === "Quality"`, 10*time.Second)
	b.waitFor("the trend chart", `document.querySelector("[data-testid=kpi-trend] svg")`, 10*time.Second)
	if n := mustEval[int](b, "value rows", `document.querySelectorAll("[data-testid=kpi-value-row]").length`); n != 1 {
		t.Errorf("%d value rows, want the run", n)
	}
	b.screenshot("watch-kpi.png")

	// An alert on the KPI, a test notification, the unread badge, marking it read.
	b.open("/alerts")
	b.typeInto("form[data-testid=alert-form] input[name=name]", "Quality low")
	b.choose("select[name=watch]", "Quality")
	b.typeInto("form[data-testid=alert-form] input[name=threshold]", "50")
	b.click("[data-testid=save-alert]")
	b.waitFor("the alert page", `document.querySelector("[data-testid=alert-name]")?.innerText === "Quality low"`, 10*time.Second)
	b.click("[data-testid=test-alert]")
	b.waitFor("the unread badge", `document.querySelector("[data-testid=watch-link] [data-testid=unread-count]")?.innerText === "1"`, 10*time.Second)
	b.open("/notifications")
	b.waitFor("the notification", `document.querySelectorAll("[data-testid=notification]").length === 1`, 10*time.Second)
	b.screenshot("watch-notifications.png")
	b.click("[data-testid=mark-all-read]")
	b.waitFor("nothing unread", `document.querySelector("[data-testid=watch-link] #unread-badge [hidden]") && !document.querySelector("[data-testid=unread-count]")`, 10*time.Second)
	b.open("/schedules")
	b.waitFor("the schedule listed", `document.querySelectorAll("[data-testid=schedule-row]").length === 1`, 10*time.Second)
	b.screenshot("watch-schedules.png")
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
