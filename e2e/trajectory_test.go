package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/mcpclient/mcptest"
	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/trajectory"
)

// waitEndedUnseen waits for a run to finish through the runs list, which
// computes no summary: the trace written next is in the run's first one.
func waitEndedUnseen(t *testing.T, a *app, id int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var list struct {
			Items []struct {
				ID     int64
				Status string
			}
		}
		apiCall(t, a, "GET", "/api/runs?per_page=100", nil, &list, 200)
		for _, r := range list.Items {
			if r.ID == id && r.Status == "FINISHED" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d did not finish", id)
		}
	}
}

// seedTrajectory writes a trajectory, as the engine's tool loop will, on
// the first item of the run's agent target: three calls over two turns,
// the second failed, with a long result and long unbroken words that must
// wrap on a phone. It returns the item's id.
func seedTrajectory(t *testing.T, a *app, st *store.Store, runID int64) int64 {
	t.Helper()
	var items struct {
		Items []struct {
			ID    int64
			Agent *struct{ Name string }
		}
	}
	apiCall(t, a, "GET", fmt.Sprintf("/api/runs/%d/items", runID), nil, &items, 200)
	for _, it := range items.Items {
		if it.Agent == nil {
			continue
		}
		long := strings.Repeat("The page says the result is 18 dollars per day. ", 30)
		storetest.SetTrace(t, st, it.ID, trajectory.Calls{
			{Turn: 1, Server: "docs", Name: "search_docs", Arguments: trajectory.Args(`{"query": "duck eggs per day sold at $2 each", "url": "https://docs.example.com/a/very/long/path/without/any/break/` + strings.Repeat("x", 120) + `"}`),
				Result: "3 hits: eggs.md, ducks.md, market.md", DurationMs: 231},
			{Turn: 1, Server: "docs", Name: "fetch_page", Arguments: `{"path": "market.md"}`, Result: "404: market.md not found", IsError: true, DurationMs: 18},
			{Turn: 2, Server: "docs", Name: "fetch_page", Arguments: `{"path": "eggs.md"}`, Result: long, DurationMs: 1250},
		}, 3, "The question is arithmetic; the docs confirm the price.")
		return it.ID
	}
	t.Fatalf("run %d has no agent item", runID)
	return 0
}

// TestAgentTrajectoryPage opens an agent item's page on a phone: the
// timeline shows each call under its turn, the failed one marked in words,
// a long result folded until opened, and nothing wider than the screen.
func TestAgentTrajectoryPage(t *testing.T) {
	chromePath(t)
	a, st := startAppWithStore(t, gradingScript)
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": a.fake.URL}, &prov, 201)
	apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": "ducks", "category": "math", "question": gradingQuestions[0].question}, nil, 201)
	var col struct{ ID int64 }
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Agents", "task_ids": []string{"ducks"}}, &col, 201)
	var agent store.Agent
	apiCall(t, a, "POST", "/api/agents", map[string]any{"name": "Docs helper", "provider_id": prov.ID, "model": "fake-small",
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcptest.Start(t).URL}}}, &agent, 201)
	var run struct{ ID int64 }
	apiCall(t, a, "POST", "/api/runs", map[string]any{"name": "Agent run", "judge": map[string]any{"provider_id": prov.ID, "model": "fake-judge"},
		"targets": []map[string]any{{"agent_id": agent.ID}}, "collection_ids": []int64{col.ID}}, &run, 201)
	waitEndedUnseen(t, a, run.ID)
	item := seedTrajectory(t, a, st, run.ID)

	b := newBrowser(t, a.URL)
	b.do("a phone-sized viewport", 15*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	b.open(fmt.Sprintf("/items/%d", item))
	b.waitFor("the trajectory", `!!document.querySelector("[data-testid=trajectory]")`, 10*time.Second)
	got := mustEval[string](b, "the timeline", `(() => {
		const turns = [...document.querySelectorAll("[data-testid=trajectory-turn]")];
		const text = e => e.textContent.trim().replace(/\s+/g, " "); // as written, not as styled (upper case)
		return turns.map(t => text(t.querySelector("h3")) + ": " + [...t.querySelectorAll("[data-testid=trajectory-step]")]
			.map(s => (s.dataset.error !== undefined ? "[" + text(s.querySelector("[data-testid=step-error]")) + "] " : "") + text(s.querySelector("code"))).join(", ")).join(" | ");
	})()`)
	if want := "Turn 1: docs · search_docs, [✗ Error] docs · fetch_page | Turn 2: docs · fetch_page"; got != want {
		t.Errorf("timeline %q, want %q", got, want)
	}
	if h := b.text("h1"); !strings.Contains(h, "Docs helper") {
		t.Errorf("h1 %q does not name the agent", h)
	}
	// The long result is folded; opened, it wraps inside the page.
	if open := mustEval[bool](b, "the long result", `document.querySelectorAll("[data-testid=trajectory-step]")[2].querySelector("details").open`); open {
		t.Error("the long result is not folded")
	}
	b.click("[data-testid=trajectory-turn]:nth-child(2) details summary")
	b.waitFor("the long result opened", `document.querySelectorAll("[data-testid=trajectory-step]")[2].querySelector("details").open`, 15*time.Second)
	wide := mustEval[string](b, "overflow", `(() => {
		const vw = document.documentElement.clientWidth;
		return document.documentElement.scrollWidth <= vw ? "" : "page is " + document.documentElement.scrollWidth + " px wide in " + vw;
	})()`)
	if wide != "" {
		t.Error(wide)
	}
	if end := b.text("[data-testid=trajectory-end]"); !strings.Contains(end, "Final answer") {
		t.Errorf("end of the trajectory %q", end)
	}
}
