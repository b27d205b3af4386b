package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestScheduleFormUseCases: the schedule form picks use cases and
// categories as the new-run form does, shows the stored ones ticked, and
// an edit that unticks them leaves them out.
func TestScheduleFormUseCases(t *testing.T) {
	st := storetest.SQLite(t)
	a := newWatchApp(t, st, nil)
	_, providerID, colID := watchFixture(t, a)
	for i := range 2 {
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"s-%d","usecase":"support","category":"refunds","question":"Refund %d?"}`, i, i)}, 201, nil)
	}
	form := url.Values{"schedule_name": {"By use case"}, "cron": {"0 0 3 * * *"}, "timezone": {"UTC"}, "enabled": {"1"},
		"judge_provider_id": {fmt.Sprint(providerID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(providerID)}, "target_model": {"fake-small"},
		"usecases": {"support"}, "categories": {`{"usecase":"","category":"c"}`}}
	if res, _ := a.post(t, "/schedules", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create from the form: %d", res.StatusCode)
	}
	list, err := st.Schedules(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("schedules: %+v, %v", list, err)
	}
	s := list[0]
	if !slices.Equal(s.Template.UseCases, []string{"support"}) || !slices.Equal(s.Template.Categories, []store.CategoryRef{{Category: "c"}}) {
		t.Fatalf("template draws from use cases %q and categories %+v", s.Template.UseCases, s.Template.Categories)
	}

	_, doc, _ := a.get(t, fmt.Sprintf("/schedules/%d", s.ID))
	if doc.Find(`[data-testid=usecase-picker] input[name=usecases][value=support][checked]`).Length() != 1 ||
		doc.Find(`[data-testid=category--c][checked]`).Length() != 1 || doc.Find(`[data-testid=category-support-refunds][checked]`).Length() != 0 {
		t.Errorf("the edit form does not show the template's use case and category ticked")
	}

	form.Del("usecases")
	form.Del("categories")
	form.Set("collection_ids", fmt.Sprint(colID))
	if res, _ := a.post(t, fmt.Sprintf("/schedules/%d", s.ID), form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit from the form: %d", res.StatusCode)
	}
	got, err := st.Schedule(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Template.UseCases) != 0 || len(got.Template.Categories) != 0 || !slices.Equal(got.Template.CollectionIDs, []int64{colID}) {
		t.Errorf("after unticking: use cases %q, categories %+v, collections %v", got.Template.UseCases, got.Template.Categories, got.Template.CollectionIDs)
	}

	// A use case or category no task has yet (a schedule made for tasks to
	// come) shows ticked, so an edit keeps it.
	var later scheduleReply
	a.do(t, call{method: "POST", path: "/api/schedules", body: fmt.Sprintf(`{"name":"Later","cron":"0 0 3 * * *","template":{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"}],"collection_ids":[%d],"usecases":["later"],"categories":[{"usecase":"soon","category":"x"}]}}`,
		providerID, providerID, colID)}, 201, &later)
	_, doc, _ = a.get(t, fmt.Sprintf("/schedules/%d", later.ID))
	if doc.Find(`input[name=usecases][value=later][checked]`).Length() != 1 || doc.Find(`[data-testid=category-soon-x][checked]`).Length() != 1 {
		t.Errorf("the edit form drops the template's use case and category that no task has yet: %q", doc.Find("[data-testid=usecase-picker]").Text())
	}
}
