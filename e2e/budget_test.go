package e2e

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// TestRunPageBudget watches a run whose provider reports each answer's cost
// (usage.cost): the page's spend rises with the run, the run pauses at its
// budget and says so, and raising the budget on the page resumes it to
// its end.
func TestRunPageBudget(t *testing.T) {
	// The first answer comes at once; the others wait until the page has shown it.
	release := make(chan struct{})
	var answered atomic.Int32
	a := startApp(t, func(r llmtest.ChatRequest) llmtest.Reply {
		rep := llmtest.DefaultReply(r)
		if !r.IsWarmup() && !r.IsJudge() {
			if answered.Add(1) > 1 {
				<-release
			}
			cost := 0.01
			rep.Cost = &cost
		}
		return rep
	})
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the app stops: a waiting answer would hold it up
	var p store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Billed", "base_url": a.fake.URL, "concurrency": 1}, &p, 201)
	var keys []string
	for i := range 6 {
		keys = append(keys, fmt.Sprintf("bg-%d", i))
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": keys[i], "category": "c", "question": keys[i]}, nil, 201)
	}
	var col store.CollectionDetail
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Budget", "task_ids": keys}, &col, 201)
	var run struct{ ID int64 }
	apiCall(t, a, "POST", "/api/runs", map[string]any{
		"judge":          map[string]any{"provider_id": p.ID, "model": "judge"},
		"targets":        []map[string]any{{"provider_id": p.ID, "model": "billed"}},
		"collection_ids": []int64{col.ID},
		"max_cost_usd":   0.02,
	}, &run, 201)

	b := newBrowser(t, a.URL)
	b.open(fmt.Sprintf("/runs/%d", run.ID))
	b.waitFor("the first answer's cost against the budget", `document.querySelector("[data-testid=run-cost]").innerText.trim() === "Cost $0.01 of $0.02 budget"`, 30*time.Second)
	free()
	b.waitFor("the pause at the budget, live", `document.querySelector("[data-testid=budget-reached]") && /budget is reached/.test(document.querySelector("[data-testid=budget-reached]").innerText)`, 30*time.Second)
	b.screenshot("/tmp/e2e-budget-reached.png")

	b.typeInto("[data-testid=budget-input]", "1")
	b.click("[data-testid=raise-budget]")
	b.waitFor("the run to resume and end", `document.querySelector("#progress [data-testid=status]").dataset.status === "FINISHED"`, 60*time.Second)
	if got := b.text("[data-testid=run-cost]"); got != "Cost $0.06 of $1.00 budget" {
		t.Errorf("cost line after the run: %q\n%s", got, b.diagnose())
	}
	if n := mustEval[int](b, "notice gone", `document.querySelectorAll("[data-testid=budget-reached]").length`); n != 0 {
		t.Errorf("the budget notice stayed after raising it")
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors: %v", errs)
	}
}
