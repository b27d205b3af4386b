package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestScheduleTriggerPages(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	_, providerID, colID := watchFixture(t, a)
	form := url.Values{"schedule_name": {"Hooked"}, "trigger": {"WEBHOOK"}, "cron": {""}, "timezone": {"UTC"}, "enabled": {"1"},
		"judge_provider_id": {fmt.Sprint(providerID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(providerID)}, "target_model": {"fake-small"}, "collection_ids": {fmt.Sprint(colID)}}

	// Created: the page shows the URL and the token once, with the warning.
	res, doc := a.post(t, "/schedules", form, nil)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create a webhook schedule from the form: %d %s", res.StatusCode, doc.Find("main").Text())
	}
	list, _ := st.Schedules(context.Background())
	if len(list) != 1 || list[0].Trigger != store.TriggerWebhook {
		t.Fatalf("schedules: %+v", list)
	}
	id := list[0].ID
	token := strings.TrimSpace(doc.Find("[data-testid=webhook-token]").Text())
	wantURL := fmt.Sprintf("%s/api/schedules/%d/trigger", a.srv.URL, id)
	if !list[0].TokenMatches(token) || doc.Find("[data-testid=token-warning]").Length() != 1 ||
		strings.TrimSpace(doc.Find("[data-testid=webhook-url]").Text()) != wantURL {
		t.Fatalf("created page: token %q, url %q", token, doc.Find("[data-testid=webhook-url]").Text())
	}
	if doc.Find(`input[name=trigger][value=WEBHOOK][checked]`).Length() != 1 {
		t.Errorf("the edit form does not show the WEBHOOK trigger")
	}

	// Shown again: the URL and the rotate action, never the token.
	_, doc, body := a.get(t, fmt.Sprintf("/schedules/%d", id))
	if strings.Contains(body, token) || doc.Find("[data-testid=webhook-token]").Length() != 0 || doc.Find("[data-testid=rotate-token]").Length() != 1 {
		t.Fatalf("the schedule page shows the token again, or no rotate action")
	}
	_, doc, _ = a.get(t, "/schedules")
	if got := doc.Find("[data-testid=schedule-trigger]").First().AttrOr("data-trigger", ""); got != "WEBHOOK" {
		t.Errorf("the list shows trigger %q", got)
	}

	// Rotate: the panel comes back with a new token; the old one is refused.
	res, doc = a.post(t, fmt.Sprintf("/schedules/%d/token", id), nil, map[string]string{"HX-Request": "true"})
	fresh := strings.TrimSpace(doc.Find("[data-testid=webhook-token]").Text())
	if res.StatusCode != http.StatusOK || fresh == "" || fresh == token {
		t.Fatalf("rotate: %d, token %q", res.StatusCode, fresh)
	}
	a.do(t, call{method: "POST", path: fmt.Sprintf("/api/schedules/%d/trigger", id), header: map[string]string{"X-Tribunal-Token": token}}, 401, nil)

	// An EVENT schedule from the form: its event and source, and no cron.
	form.Set("schedule_name", "After imports")
	form.Set("trigger", "EVENT")
	form.Set("event", "import.finished")
	form.Set("event_source_id", "4")
	form.Set("cron", "0 0 3 * * *")
	if res, doc = a.post(t, "/schedules", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create an event schedule: %d %s", res.StatusCode, doc.Find("main").Text())
	}
	list, _ = st.Schedules(context.Background())
	ev := list[0]
	if ev.Trigger != store.TriggerEvent || ev.Event != store.EventImportFinished || ev.EventSourceID == nil || *ev.EventSourceID != 4 || ev.Cron != "" {
		t.Fatalf("event schedule: %+v", ev)
	}
	form.Set("schedule_name", "Broken")
	form.Set("event", "task.created")
	if res, doc = a.post(t, "/schedules", form, nil); res.StatusCode != 422 || doc.Find("[data-testid=error-event]").Length() != 1 {
		t.Errorf("a bad event from the form: %d", res.StatusCode)
	}
}
