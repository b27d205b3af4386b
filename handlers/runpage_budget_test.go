package handlers_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tribunal/format"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunPageBudget: the run page shows the spend against the budget, in the
// page and in the live progress event; a run paused at its budget says so
// with a form that refuses a budget below the spend and, with a higher one,
// raises it (the use case PATCH calls) and resumes the run to its end.
func TestRunPageBudget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 7, "reasoning": "ok"}`}
			}
			return llmtest.Reply{Content: costAnswer}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(
			`{"name":"Fake","base_url":%q,"concurrency":1,"prices":[{"model":"fake-small","input_per_mtok":1000,"output_per_mtok":1000}]}`, a.fake.URL)}, 201, &p)
		var keys []string
		for i := range 4 {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"b-%d","category":"c","question":"Question number %d?"}`, i, i)}, 201, nil)
			keys = append(keys, fmt.Sprintf(`"b-%d"`, i))
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"B","task_ids":[` + strings.Join(keys, ",") + `]}`}, 201, &col)
		var run costRunReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(
			`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"}],"collection_ids":[%d],"max_cost_usd":0.000001}`,
			p.ID, p.ID, col.ID)}, 201, &run)
		eventually(t, "the run to pause at its budget", func() bool {
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
			return run.Status == store.RunPaused
		})
		spent := format.USD(&run.Budget.SpentUSD)

		page := fmt.Sprintf("/runs/%d", run.ID)
		_, doc, _ := a.get(t, page)
		cost := doc.Find("[data-testid=run-cost]")
		if got := strings.Join(strings.Fields(cost.Text()), " "); got != "Cost "+spent+" of $0.00000 budget" {
			t.Errorf("cost line %q, want the spend %s of the budget", got, spent)
		}
		notice := doc.Find("[data-testid=budget-reached]")
		if notice.Length() != 1 || !strings.Contains(notice.Text(), "Paused: the budget is reached") ||
			notice.Find("form[hx-post='"+page+"/budget'] input[name=max_cost_usd]").Length() != 1 {
			t.Fatalf("budget notice: %q", notice.Text())
		}
		// The live panel carries the same line.
		if ev := firstEvent(t, a, page+"/events", "progress"); !strings.Contains(ev, `data-testid="run-spent">`+spent+"<") {
			t.Errorf("progress event lacks the spend %s:\n%s", spent, ev)
		}

		// A budget at or below the spend is refused, and the run stays paused.
		res, doc := a.post(t, page+"/budget", url.Values{"max_cost_usd": {"0"}}, map[string]string{"HX-Request": "true"})
		if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=budget-problem]").Text(), "must be more than the "+spent+" spent so far") {
			t.Errorf("a budget below the spend: %d %q", res.StatusCode, doc.Find("[data-testid=budget-problem]").Text())
		}
		if r, _ := st.Run(t.Context(), run.ID); r.Status != store.RunPaused || *r.Options.MaxCostUSD != 0.000001 {
			t.Errorf("after a refused budget: %s, budget %v", r.Status, *r.Options.MaxCostUSD)
		}
		if res, _ := a.post(t, page+"/budget", url.Values{"max_cost_usd": {""}}, nil); res.StatusCode != 422 {
			t.Errorf("no budget: %d", res.StatusCode)
		}

		res, doc = a.post(t, page+"/budget", url.Values{"max_cost_usd": {"100"}}, map[string]string{"HX-Request": "true"})
		if res.StatusCode != 200 || doc.Find("[data-testid=progress]").Length() != 1 || doc.Find("[data-testid=budget-reached]").Length() != 0 {
			t.Fatalf("raise: %d\n%s", res.StatusCode, doc.Text())
		}
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("resumed run: %+v", r)
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
		_, doc, _ = a.get(t, page)
		if got := strings.Join(strings.Fields(doc.Find("[data-testid=run-cost]").Text()), " "); got != "Cost "+format.USD(&run.Budget.SpentUSD)+" of $100.00 budget" {
			t.Errorf("after the run: %q", got)
		}
	})
}
