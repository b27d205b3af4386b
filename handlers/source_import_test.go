package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"tribunal/langfuse/langfusetest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// seedLangfuse fills the fake with a dataset of n items (three pages at the
// client's 100 a page) and a run whose traces answer "answer i": item 1 has
// no trace in the run, item 2's trace Langfuse does not have.
func seedLangfuse(fake *langfusetest.Server, n int) {
	items := make([]langfusetest.Item, n)
	for i := range items {
		items[i] = langfusetest.Item{ID: fmt.Sprintf("item-%03d", i), Input: map[string]any{"question": fmt.Sprintf("question %d", i)},
			ExpectedOutput: fmt.Sprintf("answer %d", i), Metadata: map[string]any{"difficulty": "easy", "rank": i}}
	}
	items = append(items, langfusetest.Item{ID: "archived", Input: "old", Status: "ARCHIVED"})
	fake.AddDataset("support-qa", items...)
	var runItems []langfusetest.RunItem
	for i := range n {
		if i == 1 {
			continue
		}
		id := fmt.Sprintf("trace-%03d", i)
		runItems = append(runItems, langfusetest.RunItem{DatasetItemID: fmt.Sprintf("item-%03d", i), TraceID: id})
		if i == 2 {
			continue // the run names it; Langfuse answers 404
		}
		fake.AddTrace(langfusetest.Trace{ID: id, Output: fmt.Sprintf("answer %d", i), LatencySeconds: 1.5, TotalCost: 0.01,
			Observations: []langfusetest.Observation{{UsageDetails: map[string]int64{"input": 100, "output": 20, "total": 120}}}})
	}
	fake.AddRun("support-qa", "v1", runItems...)
}

// TestImportSource: a Langfuse dataset run becomes an IMPORTED run whose
// items hold the traces' answers, latency, tokens and cost exactly once,
// scored by the checks; the missing traces fail their items with the
// reason; a 429 on the way is waited out; importing again answers 409
// naming the run, unless rejudge.
func TestImportSource(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		fake := langfusetest.New(t)
		const n = 230
		seedLangfuse(fake, n)
		var src store.Source
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, fake.PublicKey, fake.SecretKey), nil}, 201, &src)
		fake.FailRequest(3, 429, "1")

		path := fmt.Sprintf("/api/sources/%d/import", src.ID)
		var out runs.SourceImported
		a.do(t, call{"POST", path, `{"dataset": "support-qa", "run": "v1", "checks": ["exact_match", {"type": "contains", "value": "answer"}]}`, nil}, 201, &out)
		if out.TasksCreated != n || out.TasksUpdated != 0 || out.Items != n || out.Failed != 2 || out.RunID == 0 || out.CollectionID == 0 {
			t.Fatalf("import = %+v", out)
		}
		if hits := fake.Hits("/api/public/dataset-items"); hits < 3 {
			t.Errorf("the dataset items took %d page(s), want 3", hits)
		}
		run := a.waitRunDone(t, out.RunID)
		if run.Status != store.RunFinished {
			t.Fatalf("run ended %s", run.Status)
		}
		var detail store.Run
		a.do(t, call{"GET", fmt.Sprintf("/api/runs/%d", out.RunID), "", nil}, 200, &detail)
		if detail.Kind != store.RunImported || len(detail.Targets) != 1 || detail.Targets[0].Source == nil ||
			*detail.Targets[0].Source != (store.RunSource{SourceID: src.ID, Dataset: "support-qa", Run: "v1", SourceName: "prod"}) {
			t.Fatalf("run = kind %s, targets %+v", detail.Kind, detail.Targets)
		}
		seen := map[string]int{}
		if err := st.EachRunItem(t.Context(), out.RunID, func(v *store.ItemView) error {
			seen[v.TaskID]++
			switch v.TaskID {
			case "item-001":
				if v.Status != store.ItemFailed || !strings.Contains(v.Error, `no trace in run "v1"`) {
					t.Errorf("item without a trace: %s %q", v.Status, v.Error)
				}
			case "item-002":
				if v.Status != store.ItemFailed || !strings.Contains(v.Error, "trace-002: not found") {
					t.Errorf("item whose trace is gone: %s %q", v.Status, v.Error)
				}
			default:
				want := "answer " + strings.TrimLeft(strings.TrimPrefix(v.TaskID, "item-"), "0")
				if v.TaskID == "item-000" {
					want = "answer 0"
				}
				if v.Status != store.ItemCompleted || v.Response == nil || *v.Response != want || v.Question == "" ||
					*v.TimeMs != 1500 || *v.PromptTokens != 100 || *v.CompletionTokens != 20 || *v.CostUSD != 0.01 || v.Score == nil || *v.Score != 1 {
					t.Errorf("%s: %s %v time %v tokens %v/%v cost %v score %v", v.TaskID, v.Status, deref(v.Response), deref(v.TimeMs),
						deref(v.PromptTokens), deref(v.CompletionTokens), deref(v.CostUSD), deref(v.Score))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(seen) != n || seen["archived"] != 0 {
			t.Errorf("%d distinct items (archived %d), want %d", len(seen), seen["archived"], n)
		}
		for k, c := range seen {
			if c != 1 {
				t.Errorf("%s has %d items", k, c)
			}
		}
		// The same dataset run again: 409 naming the run; nothing new.
		body := a.do(t, call{"POST", path, `{"dataset": "support-qa", "run": "v1", "checks": ["exact_match"]}`, nil}, 409, nil)
		if !strings.Contains(body, fmt.Sprintf("in run %d", out.RunID)) {
			t.Errorf("second import: %s", body)
		}
		var tasks store.Page[store.Task]
		a.do(t, call{"GET", "/api/tasks?per_page=1", "", nil}, 200, &tasks)
		if tasks.Total != n {
			t.Errorf("%d tasks after the refused import, want %d", tasks.Total, n)
		}
		// Unknown dataset: 422 naming it; bad keys: 502.
		if body := a.do(t, call{"POST", path, `{"dataset": "nope", "run": "v1", "checks": ["exact_match"]}`, nil}, 422, nil); !strings.Contains(body, "dataset") {
			t.Errorf("unknown dataset: %s", body)
		}
	})
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestImportSourceRejudge: a dataset run judged once is judged again on
// request, every answer going back to the judge.
func TestImportSourceRejudge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		fake := langfusetest.New(t)
		seedLangfuse(fake, 5)
		var src store.Source
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, fake.PublicKey, fake.SecretKey), nil}, 201, &src)
		var prov store.Provider
		a.do(t, call{"POST", "/api/providers", fmt.Sprintf(`{"name":"judge","base_url":%q}`, a.fake.URL), nil}, 201, &prov)
		body := fmt.Sprintf(`{"dataset": "support-qa", "run": "latest", "judge": {"provider_id": %d, "model": "fake-judge"}}`, prov.ID)
		path := fmt.Sprintf("/api/sources/%d/import", src.ID)
		var out runs.SourceImported
		a.do(t, call{"POST", path, body, nil}, 201, &out)
		if out.Run != "v1" {
			t.Errorf("latest picked %q", out.Run)
		}
		a.waitRunDone(t, out.RunID)
		judged := a.fake.CallCount()
		if judged != 3 {
			t.Fatalf("%d judge calls, want one per answer (3)", judged)
		}
		var again runs.SourceImported
		a.do(t, call{"POST", path, strings.Replace(body, `"latest"`, `"latest", "rejudge": true`, 1), nil}, 200, &again)
		if !again.Rejudged || again.RunID != out.RunID {
			t.Fatalf("rejudge = %+v", again)
		}
		if r := a.waitRunDone(t, out.RunID); r.Status != store.RunFinished {
			t.Fatalf("rejudged run ended %s", r.Status)
		}
		if n := a.fake.CallCount() - judged; n != 3 {
			t.Errorf("rejudging made %d judge calls, want 3", n)
		}
		n := 0
		if err := st.EachRunItem(t.Context(), out.RunID, func(v *store.ItemView) error {
			n++
			if v.Status == store.ItemCompleted && (v.Score == nil || *v.Score != 7) {
				t.Errorf("item %d scored %v after rejudging, want the judge's 7", v.ID, deref(v.Score))
			}
			return nil
		}); err != nil || n != 5 {
			t.Errorf("%d items (%v), want 5", n, err)
		}
	})
}

// TestScheduleImportsLatestDatasetRun: a schedule whose template names a
// trace source imports the dataset's newest run when it fires (MOSAICO's
// collect → metrics → KPIs → alerts loop); a run it imported already is a
// conflict, not a second copy.
func TestScheduleImportsLatestDatasetRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		fake := langfusetest.New(t)
		seedLangfuse(fake, 4)
		var src store.Source
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, fake.PublicKey, fake.SecretKey), nil}, 201, &src)
		// No judge nor checks: refused, naming the field.
		if body := a.do(t, call{"POST", "/api/schedules", fmt.Sprintf(`{"name": "collect", "cron": "0 3 * * *",
			"template": {"source": {"source_id": %d, "dataset": "support-qa"}}}`, src.ID), nil}, 422, nil); !strings.Contains(body, "source.checks") {
			t.Errorf("a template without a judge or checks: %s", body)
		}
		var sc struct{ ID int64 }
		a.do(t, call{"POST", "/api/schedules", fmt.Sprintf(`{"name": "collect", "cron": "0 3 * * *",
			"template": {"source": {"source_id": %d, "dataset": "support-qa", "run": "latest", "checks": [{"type": "exact_match"}]}}}`, src.ID), nil}, 201, &sc)
		var run store.Run
		a.do(t, call{"POST", fmt.Sprintf("/api/schedules/%d/run", sc.ID), "", nil}, 201, &run)
		if run.Kind != store.RunImported || run.TriggeredBy != "SCHEDULED" || run.ScheduleID == nil || *run.ScheduleID != sc.ID ||
			len(run.Targets) != 1 || run.Targets[0].Source == nil || run.Targets[0].Source.Run != "v1" {
			t.Fatalf("scheduled import = kind %s by %s, targets %+v", run.Kind, run.TriggeredBy, run.Targets)
		}
		a.waitRunDone(t, run.ID)
		if body := a.do(t, call{"POST", fmt.Sprintf("/api/schedules/%d/run", sc.ID), "", nil}, 409, nil); !strings.Contains(body, fmt.Sprintf("in run %d", run.ID)) {
			t.Errorf("firing again over the same dataset run: %s", body)
		}
		// A newer dataset run is picked up next time.
		fake.AddRun("support-qa", "v2", langfusetest.RunItem{DatasetItemID: "item-000", TraceID: "trace-000"})
		var next store.Run
		a.do(t, call{"POST", fmt.Sprintf("/api/schedules/%d/run", sc.ID), "", nil}, 201, &next)
		if next.Targets[0].Source.Run != "v2" {
			t.Errorf("the next firing imported %q, want the newer v2", next.Targets[0].Source.Run)
		}
	})
}
