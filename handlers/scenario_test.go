package handlers_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"tribunal/format"
	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestTrustScenario is issue 12's scenario: a check on one task of twelve, a
// model whose warm-up fails once, a model whose provider is down. The API,
// the run page and the HTML report must tell the same, true story.
func TestTrustScenario(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var flakyWarmups atomic.Int32
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			switch {
			case r.Model == "down":
				return llmtest.Reply{Status: 503, Content: "upstream down"}
			case r.Model == "flaky" && r.IsWarmup() && flakyWarmups.Add(1) == 1:
				return llmtest.Reply{Status: 500, Content: "try again"}
			case r.IsJudge() && strings.Contains(r.Last(), "answer from flaky"):
				return llmtest.Reply{Content: `{"score": 6, "reasoning": "fair"}`}
			case r.IsJudge():
				return llmtest.Reply{Content: `{"score": 8, "reasoning": "good"}`}
			case r.IsWarmup():
				return llmtest.DefaultReply(r)
			}
			return llmtest.Reply{Content: "answer from " + r.Model}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		var ids []string
		for i := range 12 {
			checks := ""
			if i == 0 {
				checks = `,"checks":[{"type":"contains","value":"zzz"}]`
			}
			var tk struct{ ID int64 }
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"t%02d","category":"c","question":"What is %d+%d?"%s}`,
				i, i, i, checks)}, 201, &tk)
			ids = append(ids, fmt.Sprint(tk.ID))
		}
		var coll struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/collections", body: fmt.Sprintf(`{"name":"c","task_ids":[%s]}`, strings.Join(ids, ","))}, 201, &coll)
		var created struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},
			"targets":[{"provider_id":%[1]d,"model":"good"},{"provider_id":%[1]d,"model":"flaky"},{"provider_id":%[1]d,"model":"down"}],
			"collection_ids":[%d]}`, p.ID, coll.ID)}, 201, &created)
		a.waitRunDone(t, created.ID)

		var run struct {
			Status      store.RunStatus      `json:"status"`
			FailedItems int64                `json:"failed_items"`
			Failures    []store.FailureGroup `json:"failures"`
			Progress    runs.Progress        `json:"progress"`
			Targets     []store.RunTarget    `json:"targets"`
			Summary     runs.Summary         `json:"summary"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", created.ID)}, 200, &run)
		// A dead model does not make the run fail, but it is in plain sight.
		if run.Status != store.RunFinished || run.FailedItems != 12 || len(run.Failures) != 1 || run.Failures[0].Count != 12 ||
			run.Failures[0].Phase != store.PhaseBenchmarking || !strings.Contains(run.Failures[0].Reason, "warm-up") {
			t.Fatalf("status %s, %d failed, failures %+v", run.Status, run.FailedItems, run.Failures)
		}
		if p := run.Progress; p.Total != 36 || p.Answered != 36 || p.Judged != 36 || p.Percent != 100 || p.Failed != 12 {
			t.Errorf("progress %+v", p)
		}
		// The flaky model's warm-up was retried: its items were answered and judged.
		// Each live model: 11 tasks at (s−1)/9 and one at the mean of that and the failed check.
		wantOf := map[string]float64{"good": (11*7.0/9 + 7.0/18) / 12 * 100, "flaky": (11*5.0/9 + 5.0/18) / 12 * 100}
		overall := map[string]runs.ModelScore{}
		for _, tg := range run.Targets {
			for _, m := range run.Summary.Models {
				if m.TargetID == tg.ID {
					overall[tg.Model] = m
				}
			}
		}
		for model, want := range wantOf {
			if m := overall[model]; m.Overall == nil || *m.Overall < want-1e-9 || *m.Overall > want+1e-9 || m.Scored != 12 {
				t.Errorf("%s overall %+v, want %.3f over 12 items", model, m, want)
			}
		}
		if m := overall["down"]; m.Overall != nil || m.Scored != 0 {
			t.Errorf("down overall %+v, want none", m)
		}
		// The dead model is left out of the comparison, and the page says so.
		if b := run.Summary.Best; b.OverallTargetID != overall["good"].TargetID || b.Note != "down left out: no scored item" {
			t.Errorf("best %+v, want good with down left out", b)
		}

		// The run page and the HTML report say the same, formatted the same.
		ci := overall["good"].OverallCI
		figure := format.CI(ci.Mean, ci.Lo, ci.Hi, 1)
		for _, path := range []string{fmt.Sprintf("/runs/%d", created.ID), fmt.Sprintf("/api/runs/%d/export?format=html", created.ID)} {
			res, err := http.Get(a.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			body := html.UnescapeString(string(b))
			for _, s := range []string{figure, run.Summary.Best.Note, "inished with 12 failures", "warm-up failed"} {
				if !strings.Contains(body, s) {
					t.Errorf("%s lacks %q", path, s)
				}
			}
		}
	})
}
