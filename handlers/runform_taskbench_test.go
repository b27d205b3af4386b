package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/format"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// taskBenchFixture is a provider on the fake LLM and five tasks in two use
// cases (and one without), none of them in a collection.
func taskBenchFixture(t *testing.T, a *app) *store.Provider {
	t.Helper()
	ctx := context.Background()
	p, err := a.st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL,
		Prices: []store.ProviderPrice{{Model: "fake-small", InputPerMTok: 1, OutputPerMTok: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []struct{ key, uc, cat string }{
		{"a1", "support", "refunds"}, {"a2", "support", "shipping"},
		{"b1", "sales", "refunds"}, {"b2", "sales", "leads"}, {"c1", "", "misc"},
	} {
		if _, err := a.st.CreateTask(ctx, store.TaskInput{TaskKey: tk.key, UseCase: tk.uc, Category: tk.cat, Question: "question " + tk.key}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func frozenKeys(t *testing.T, st *store.Store, runID int64) []string {
	t.Helper()
	tasks, err := st.RunTasksFrom(context.Background(), runID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, tk := range tasks {
		keys = append(keys, tk.TaskKey)
	}
	return keys
}

// TestRunFormPicksUseCasesAndCategories: the form lists the use case →
// category tree with counts (no collection needed), and a run started from
// its ticks, by the form or by POST /api/runs, freezes exactly those tasks.
func TestRunFormPicksUseCasesAndCategories(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		p := taskBenchFixture(t, a)
		_, doc, _ := a.get(t, "/runs/new")
		picker := doc.Find("[data-testid=usecase-picker]")
		if picker.Length() != 1 || doc.Find("[data-testid=new-run-form]").Length() != 1 {
			t.Fatalf("the form without collections: picker %d", picker.Length())
		}
		if txt := strings.Join(strings.Fields(picker.Find("[data-testid=usecase-support]").Parent().Text()), " "); txt != "support (2 tasks)" {
			t.Errorf("use case row: %q", txt)
		}
		if v, ok := picker.Find(`[data-testid="category-sales-leads"]`).Attr("value"); !ok || v != `{"usecase":"sales","category":"leads"}` {
			t.Errorf("category value %q", v)
		}
		if !strings.Contains(picker.Text(), "No use case") {
			t.Errorf("tasks without a use case are not offered: %q", picker.Text())
		}
		// The hand-pick list offers the picked use cases' and categories' tasks.
		_, doc, _ = a.get(t, "/runs/new/tasks?usecases=support&categories="+url.QueryEscape(`{"usecase":"","category":"misc"}`))
		var listed []string
		doc.Find("input[name=task_ids]").Each(func(_ int, s *goquery.Selection) { listed = append(listed, s.AttrOr("value", "")) })
		if want := []string{"a1", "a2", "c1"}; !slices.Equal(listed, want) {
			t.Errorf("hand-pick list %v, want %v", listed, want)
		}

		form := url.Values{"judge_provider_id": {fmt.Sprint(p.ID)}, "judge_model": {"fake-judge"},
			"target_provider_id": {fmt.Sprint(p.ID)}, "target_model": {"fake-small"}, "target_version": {"2026-01"},
			"usecases": {"support"}, "categories": {`{"usecase":"sales","category":"leads"}`}}
		res, _ := a.post(t, "/runs", form, nil)
		if res.StatusCode != 303 {
			t.Fatalf("form run: status %d", res.StatusCode)
		}
		var id int64
		fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &id)
		if got, want := frozenKeys(t, st, id), []string{"a1", "a2", "b2"}; !slices.Equal(got, want) {
			t.Errorf("form run froze %v, want %v", got, want)
		}
		if run, err := st.Run(context.Background(), id); err != nil || run.Targets[0].Version != "2026-01" {
			t.Errorf("the version typed on the form: %+v, %v", run.Targets, err)
		}
		_, doc, _ = a.get(t, fmt.Sprintf("/runs/%d", id))
		if head := strings.Join(strings.Fields(doc.Find("hgroup p").Text()), " "); !strings.Contains(head, "tasks from use cases support; categories sales / leads") {
			t.Errorf("run header %q does not say where the tasks came from", head)
		}
		a.waitRunDone(t, id)

		var out struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge": {"provider_id": %d, "model": "j"},
			"targets": [{"provider_id": %d, "model": "m"}], "categories": [{"usecase": "", "category": "misc"}, {"usecase": "sales", "category": "refunds"}]}`,
			p.ID, p.ID)}, 201, &out)
		if got, want := frozenKeys(t, st, out.ID), []string{"b1", "c1"}; !slices.Equal(got, want) {
			t.Errorf("API run froze %v, want %v", got, want)
		}
		a.waitRunDone(t, out.ID)
		body := a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge": {"provider_id": %d, "model": "j"},
			"targets": [{"provider_id": %d, "model": "m"}], "usecases": ["billing"]}`, p.ID, p.ID)}, 422, nil)
		if !strings.Contains(body, `no task has use case \"billing\"`) {
			t.Errorf("unknown use case: %s", body)
		}
	})
}

// TestRunFormJudgeMetricToggles: the form lists the picked judges' metrics
// (reloaded when the panel changes); the unticked ones are left out of the
// run's metrics, so they do not weigh in an item's overall.
func TestRunFormJudgeMetricToggles(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	p := taskBenchFixture(t, a)
	ctx := context.Background()
	styles, err := st.Styles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var five store.JudgementStyle
	for _, s := range styles {
		if len(s.Metrics) == 5 {
			five = s
		}
	}
	j, err := st.CreateJudge(ctx, store.JudgeInput{Name: "Five", ProviderID: p.ID, Model: "fake-judge", StyleID: five.ID})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range five.Metrics {
		names = append(names, m.Name)
	}

	_, doc, _ := a.get(t, "/runs/new")
	if n := doc.Find("[data-testid=judge-metrics] input[name=judge_metrics]").Length(); n != 0 {
		t.Errorf("the default style's one score is offered as a toggle (%d boxes)", n)
	}
	_, doc, _ = a.get(t, fmt.Sprintf("/runs/new/metrics?judge_ids=%d&judge_metrics_shown=%s&judge_metrics=%s", j.ID, names[1], names[0]))
	boxes := doc.Find("input[name=judge_metrics]")
	if boxes.Length() != len(names) {
		t.Fatalf("the panel's metrics: %d boxes, want %d", boxes.Length(), len(names))
	}
	if _, on := doc.Find(fmt.Sprintf("[data-testid=judge-metric-%s]", names[1])).Attr("checked"); on {
		t.Errorf("a metric unticked before the reload came back ticked")
	}
	if _, on := doc.Find(fmt.Sprintf("[data-testid=judge-metric-%s]", names[2])).Attr("checked"); !on {
		t.Errorf("a metric new to the list is not ticked")
	}

	form := url.Values{"judge_ids": {fmt.Sprint(j.ID)}, "target_provider_id": {fmt.Sprint(p.ID)}, "target_model": {"fake-small"},
		"usecases": {"support"}, "judge_metrics_shown": names, "judge_metrics": names[1:]}
	for _, c := range store.CheckTypes {
		form.Add("metrics", "check_"+c)
	}
	res, _ := a.post(t, "/runs", form, nil)
	if res.StatusCode != 303 {
		t.Fatalf("form run: status %d", res.StatusCode)
	}
	var id int64
	fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &id)
	run, err := st.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Options.MetricOn(names[0]) || !run.Options.MetricOn(names[1]) || !run.Options.MetricOn("check_contains") {
		t.Errorf("metrics on: %v", run.Options.Metrics)
	}
	for _, w := range runs.ItemWeights(run) {
		if w.Metric == names[0] {
			t.Errorf("the unticked metric %s weighs %v in the overall", names[0], w.Weight)
		}
	}
	a.waitRunDone(t, id)

	// Everything ticked: the run scores everything, as before.
	form["judge_metrics"] = names
	res, _ = a.post(t, "/runs", form, nil)
	fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &id)
	if run, err = st.Run(ctx, id); err != nil || len(run.Options.Metrics) != 0 {
		t.Errorf("all ticked: metrics %v, %v", run.Options.Metrics, err)
	}
}

// TestRunFormLiveEstimate: the form's estimate panel shows runs.Estimate's
// figures for what the form picks, compares them with the budget, and says
// what is missing while the form is incomplete.
func TestRunFormLiveEstimate(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	p := taskBenchFixture(t, a)
	ctx := context.Background()
	form := url.Values{"judge_provider_id": {fmt.Sprint(p.ID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(p.ID)}, "target_model": {"fake-small"}, "target_max_tokens": {"1000"},
		"usecases": {"support"}, "repeats": {"2"}, "max_cost_usd": {"0.001"}}
	_, doc := a.post(t, "/runs/new/estimate", form, nil)
	in := store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "fake-judge"}, UseCases: []string{"support"}, Repeats: 2,
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "fake-small", Settings: store.TargetSettings{MaxTokens: ptrInt(1000)}}}}
	want, err := runs.New(st, nil).Estimate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	row := doc.Find("[data-testid=estimate-target] td")
	if row.Length() != 7 || row.Eq(1).Text() != fmt.Sprint(want.Targets[0].Calls) || row.Eq(3).Text() != fmt.Sprint(want.Targets[0].OutputTokens) {
		t.Errorf("target row %q, want calls %d", row.Text(), want.Targets[0].Calls)
	}
	if want.Targets[0].Calls != 4 {
		t.Errorf("2 tasks × 2 repeats should be 4 calls, the estimate says %d", want.Targets[0].Calls)
	}
	if doc.Find("[data-testid=estimate-judge]").Length() != 1 || doc.Find("[data-testid=estimate-total]").Length() != 1 {
		t.Errorf("judge row or total missing: %s", doc.Text())
	}
	if got, exp := doc.Find("[data-testid=estimate-expected]").Text(), format.USD(&want.TotalUSD.Expected); got != exp {
		t.Errorf("the header's expected total %q, want %q", got, exp)
	}
	if doc.Find("[data-testid=estimate-over-budget]").Length() != 1 {
		t.Errorf("an expected %v over a budget of 0.001 is not flagged", want.TotalUSD.Expected)
	}
	form.Set("max_cost_usd", "1000")
	if _, doc = a.post(t, "/runs/new/estimate", form, nil); doc.Find("[data-testid=estimate-within-budget]").Length() != 1 {
		t.Errorf("a budget of $1000 is not met: %s", doc.Text())
	}
	form.Del("target_model")
	res, doc := a.post(t, "/runs/new/estimate", form, nil)
	if res.StatusCode != 200 || !strings.Contains(doc.Find("[data-testid=estimate-pending]").Text(), "of each model to benchmark") {
		t.Errorf("incomplete form: status %d, %q", res.StatusCode, doc.Text())
	}
	// An empty form asks for the judge in words, not by the API's field path.
	if _, doc = a.post(t, "/runs/new/estimate", url.Values{}, nil); !strings.Contains(doc.Find("[data-testid=estimate-pending]").Text(), "choose the judge's provider and model") {
		t.Errorf("empty form: %q", doc.Find("[data-testid=estimate-pending]").Text())
	}
}

func ptrInt(v int64) *int64 { return &v }
