package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/store"
)

// TestBenchmarkAgentFromForm: Benchmark on an agent's row opens the new-run
// form with the agent ticked; with a model added beside it, a judge and a
// collection, Start run creates a run whose targets are the model and the
// agent at its version.
func TestBenchmarkAgentFromForm(t *testing.T) {
	chromePath(t)
	a := startApp(t, nil)
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "base_url": a.fake.URL}, &prov, 201)
	apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": "t1", "category": "c", "question": "Say hi"}, nil, 201)
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Agents E2E", "task_ids": []string{"t1"}}, nil, 201)
	var agent store.Agent
	apiCall(t, a, "POST", "/api/agents", map[string]any{"name": "Helper", "provider_id": prov.ID, "model": "fake-large"}, &agent, 201)
	b := newBrowser(t, a.URL)

	b.open("/agents")
	b.click("[data-testid=benchmark-agent]")
	box := fmt.Sprintf("[data-testid=agent-%d]", agent.ID)
	b.waitFor("the form with the agent ticked", fmt.Sprintf(`location.pathname === "/runs/new" && document.querySelector(%s) && document.querySelector(%s).checked`, js(box), js(box)), 10*time.Second)
	if n := mustEval[int](b, "model pickers", `document.querySelectorAll("#targets .model-picker").length`); n != 0 {
		t.Errorf("the form opened for an agent shows %d empty model pickers", n)
	}

	pickModel(b, "[data-testid=judge-picker-0]", "judge", 0, "fake-judge")
	b.click("[data-testid=add-target]")
	b.waitFor("a model picker", `document.querySelector("[data-testid=target-picker-0]")`, 15*time.Second)
	pickModel(b, "[data-testid=target-picker-0]", "target", 0, "fake-small")
	b.do("tick the collection", 15*time.Second, chromedp.Click(chromedp.Search(
		`//form[@data-testid="new-run-form"]//label[contains(., "Agents E2E")]/input[@name="collection_ids"]`)))
	b.click("[data-testid=start-run]")
	b.waitFor("the run page", `/^\/runs\/\d+$/.test(location.pathname) && document.querySelector("[data-testid=progress]")`, 10*time.Second)
	path := mustEval[string](b, "the run's path", `location.pathname`)
	id, err := strconv.ParseInt(strings.TrimPrefix(path, "/runs/"), 10, 64)
	if err != nil {
		t.Fatalf("run page %q", path)
	}

	var run struct {
		Targets []struct {
			Provider     string `json:"provider"`
			Model        string `json:"model"`
			AgentID      *int64 `json:"agent_id"`
			AgentName    string `json:"agent_name"`
			AgentVersion int    `json:"agent_version"`
		} `json:"targets"`
	}
	apiCall(t, a, "GET", fmt.Sprintf("/api/runs/%d", id), nil, &run, 200)
	if len(run.Targets) != 2 || run.Targets[0].Model != "fake-small" || run.Targets[0].AgentID != nil {
		t.Fatalf("targets: %+v", run.Targets)
	}
	if tg := run.Targets[1]; tg.AgentID == nil || *tg.AgentID != agent.ID || tg.AgentName != "Helper" || tg.AgentVersion != 1 || tg.Model != "fake-large" {
		t.Errorf("agent target: %+v", tg)
	}
	if !strings.Contains(b.text("[data-testid=run-targets]"), "Helper") {
		t.Errorf("the run page's targets section lacks the agent: %q", b.text("[data-testid=run-targets]"))
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
