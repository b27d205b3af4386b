package handlers_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunFailuresShownAndRetried: a run that finished with failed items says
// so in its JSON and pages, never as a plain FINISHED, and retry-failed
// brings them back (409 while the run is active, 404 for no run).
func TestRunFailuresShownAndRetried(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		fixed := atomic.Bool{}
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.Model == "down" && !fixed.Load() {
				return llmtest.Reply{Status: 404, Content: "model 'down' not found"}
			}
			rep := llmtest.DefaultReply(r)
			if r.Model == "down" && !r.IsWarmup() {
				rep.Delay = 300 * time.Millisecond // the retried run is still RUNNING when asked again
			}
			return rep
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"f-0","category":"c","question":"2+2?"}`}, 201, nil)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"f-1","category":"c","question":"3+3?"}`}, 201, nil)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"F","task_ids":["f-0","f-1"]}`}, 201, &col)
		var run struct {
			ID          int64                `json:"id"`
			Status      store.RunStatus      `json:"status"`
			FailedItems int64                `json:"failed_items"`
			Failures    []store.FailureGroup `json:"failures"`
			Requeued    *int64               `json:"requeued"`
		}
		body := fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"},{"provider_id":%d,"model":"down"}],"collection_ids":[%d]}`,
			p.ID, p.ID, p.ID, col.ID)
		a.do(t, call{method: "POST", path: "/api/runs", body: body}, 201, &run)
		a.collectEvents(t, run.ID, "")

		path := fmt.Sprintf("/api/runs/%d", run.ID)
		a.do(t, call{method: "GET", path: path}, 200, &run)
		want := "[{BENCHMARKING warm-up failed after 1 attempt(s): HTTP 404 Not Found: model 'down' not found 2}]"
		if run.Status != store.RunFinished || run.FailedItems != 2 || fmt.Sprint(run.Failures) != want {
			t.Fatalf("run with failures: %s, failed_items %d, failures %v; want %s", run.Status, run.FailedItems, run.Failures, want)
		}
		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		badge := doc.Find("#progress [data-testid=status]")
		if badge.Text() != "Finished with 2 failures" || !badge.HasClass("badge-FINISHED_WITH_FAILURES") || badge.HasClass("badge-FINISHED") {
			t.Errorf("run page status %q (class %q)", badge.Text(), badge.AttrOr("class", ""))
		}
		if rows := doc.Find("[data-testid=failures-table] [data-testid=failure-row]"); rows.Length() != 1 || !strings.Contains(rows.Text(), "model 'down' not found") {
			t.Errorf("failures table: %d rows %q", rows.Length(), rows.Text())
		}
		if doc.Find("[data-testid=retry-failed]").Length() != 1 {
			t.Errorf("no Retry failed items button")
		}
		_, doc, _ = a.get(t, "/runs")
		if s := doc.Find("[data-testid=runs-table] [data-testid=status]").Text(); s != "Finished with 2 failures" {
			t.Errorf("runs list status %q", s)
		}

		fixed.Store(true)
		res, _ := a.post(t, fmt.Sprintf("/runs/%d/retry-failed", run.ID), nil, map[string]string{"HX-Request": "true"})
		if res.StatusCode != 200 || res.Header.Get("HX-Redirect") != fmt.Sprintf("/runs/%d", run.ID) {
			t.Fatalf("retry failed items from the page: %d %q", res.StatusCode, res.Header.Get("HX-Redirect"))
		}
		a.do(t, call{method: "POST", path: path + "/retry-failed"}, 409, nil)
		a.collectEvents(t, run.ID, "")
		run.Failures = nil
		a.do(t, call{method: "GET", path: path}, 200, &run)
		if run.Status != store.RunFinished || run.FailedItems != 0 || run.Failures == nil || len(run.Failures) != 0 {
			t.Errorf("after retry: %s, failed_items %d, failures %v", run.Status, run.FailedItems, run.Failures)
		}
		_, doc, _ = a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		if s := doc.Find("#progress [data-testid=status]").AttrOr("data-status", ""); s != "FINISHED" {
			t.Errorf("run page status after retry %q", s)
		}
		a.do(t, call{method: "POST", path: path + "/retry-failed"}, 200, &run)
		if run.Requeued == nil || *run.Requeued != 0 {
			t.Errorf("retry with nothing failed: requeued %v", run.Requeued)
		}
		a.do(t, call{method: "POST", path: "/api/runs/9999/retry-failed"}, 404, nil)
	})
}
