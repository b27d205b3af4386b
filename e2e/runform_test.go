package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"tribunal/store"
)

// TestNewRunFormUseCaseAndEstimate: on the new-run form, ticking a use case
// (no collection needed) makes the live estimate appear before Start with
// that use case's calls, a budget below it is flagged, and Start runs
// exactly the use case's tasks.
func TestNewRunFormUseCaseAndEstimate(t *testing.T) {
	chromePath(t)
	a := startApp(t, nil)
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "base_url": a.fake.URL,
		"prices": []map[string]any{{"model": "fake-small", "input_per_mtok": 1, "output_per_mtok": 2}}}, &prov, 201)
	for _, tk := range []struct{ key, uc, cat string }{{"a1", "support", "refunds"}, {"a2", "support", "shipping"}, {"b1", "sales", "leads"}} {
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": tk.key, "usecase": tk.uc, "category": tk.cat, "question": "Say " + tk.key}, nil, 201)
	}
	b := newBrowser(t, a.URL)
	b.open("/runs/new")
	b.waitFor("the form without collections", `document.querySelector("form[data-testid=new-run-form]")`, 15*time.Second)
	b.waitFor("the estimate asking for more", `document.querySelector("[data-testid=estimate-pending]")`, 15*time.Second)

	pickModel(b, "[data-testid=judge-picker-0]", "judge", 0, "fake-judge")
	pickModel(b, "[data-testid=target-picker-0]", "target", 0, "fake-small")
	b.click("[data-testid=usecase-support]")
	b.waitFor("the estimate", `document.querySelector("[data-testid=estimate-target]")`, 10*time.Second)
	cells := mustEval[[]string](b, "target row", `[...document.querySelectorAll("[data-testid=estimate-target] td")].map(td => td.innerText.trim())`)
	if len(cells) != 7 || !strings.HasPrefix(cells[0], "Fake / fake-small") || cells[1] != "2" || !strings.HasPrefix(cells[5], "$") {
		t.Errorf("estimate row for 2 support tasks: %q", cells)
	}

	// The task picker's buttons and boxes (assets/app.js): none, one by
	// hand, which picks tasks by hand, then all.
	boxes := `[...document.querySelectorAll("[data-testid=task-pick-items] input[type=checkbox]")]`
	b.click("[data-testid=task-picker] details > summary")
	b.click("[data-testid=load-tasks]")
	b.waitFor("the use case's tasks to pick from", boxes+`.length === 2`, 10*time.Second)
	b.click("[data-testid=task-pick-items] button[data-check-all=false]")
	b.check("no task ticked", `!`+boxes+`.some(c => c.checked)`, 2*time.Second)
	b.click("[data-testid=task-pick-items] input[type=checkbox]")
	b.check("a ticked task picks tasks by hand", `document.querySelector("[data-testid=task-mode-pick]").checked`, 2*time.Second)
	b.click("[data-testid=task-pick-items] button[data-check-all=true]")
	b.check("every task ticked", boxes+`.every(c => c.checked)`, 2*time.Second)

	b.typeInto("[data-testid=max-cost-usd]", "0.0001")
	b.waitFor("the budget warning", `document.querySelector("[data-testid=estimate-over-budget]")`, 10*time.Second)
	b.screenshot("/tmp/e2e-runform-estimate.png")

	b.click("[data-testid=start-run]")
	b.waitFor("the run page", `/^\/runs\/\d+$/.test(location.pathname) && document.querySelector("[data-testid=progress]")`, 10*time.Second)
	id, err := strconv.ParseInt(strings.TrimPrefix(mustEval[string](b, "path", "location.pathname"), "/runs/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Summary struct {
			Tasks int64 `json:"tasks"`
		} `json:"summary"`
		Options store.RunOptions `json:"options"`
	}
	apiCall(t, a, "GET", fmt.Sprintf("/api/runs/%d", id), nil, &run, 200)
	if run.Summary.Tasks != 2 || run.Options.MaxCostUSD == nil || *run.Options.MaxCostUSD != 0.0001 {
		t.Errorf("the run has %d tasks (want the 2 of support) and budget %v", run.Summary.Tasks, run.Options.MaxCostUSD)
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors: %q", errs)
	}
}
