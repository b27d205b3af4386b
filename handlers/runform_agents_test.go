package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/mcpclient/mcptest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// agentRunTargets are a run's targets as GET /api/runs/{id} gives them.
type agentRunTargets struct {
	ID      int64 `json:"id"`
	Targets []struct {
		Provider     string `json:"provider"`
		Model        string `json:"model"`
		AgentID      *int64 `json:"agent_id"`
		AgentName    string `json:"agent_name"`
		AgentVersion int    `json:"agent_version"`
	} `json:"targets"`
}

// TestNewRunFormAgents: the new-run form offers the saved agents beside
// the models (the Agents page's Benchmark pre-ticks one), posts a run of a
// model and an agent, and the run page shows the agent's frozen version and
// tools; the Agents page counts and links its runs; a re-run keeps the
// version the run froze.
func TestNewRunFormAgents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		mcp := mcptest.Start(t)
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL})
		if err != nil {
			t.Fatal(err)
		}
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "t", Category: "c", Question: "q", Reference: "r"})
		if err != nil {
			t.Fatal(err)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		pid := p.ID
		ag, err := st.CreateAgent(ctx, store.AgentInput{Name: "Docs <agent>", ProviderID: &pid, Model: "fake-large",
			MCPServers: []store.MCPServer{{Name: "docs", URL: mcp.URL, AllowedTools: []string{"search", "fetch"}}}})
		if err != nil {
			t.Fatal(err)
		}
		agentID := fmt.Sprint(ag.ID)

		// The Agents page opens the form with the agent ticked and no empty model picker.
		_, doc, _ := a.get(t, "/agents")
		if href := doc.Find("[data-testid=benchmark-agent]").AttrOr("href", ""); href != "/runs/new?agent_id="+agentID {
			t.Errorf("Benchmark links to %q", href)
		}
		if got := strings.TrimSpace(doc.Find("[data-testid=agent-runs]").Text()); got != "none" {
			t.Errorf("runs of an agent never run: %q", got)
		}
		res, doc, _ := a.get(t, "/runs/new?agent_id="+agentID)
		box := doc.Find("[data-testid=agent-" + agentID + "]")
		if res.StatusCode != 200 || box.Length() != 1 || box.AttrOr("checked", "no") == "no" || doc.Find("[data-testid=target-picker-0]").Length() != 0 {
			t.Fatalf("pre-ticked form: status %d, agent boxes %d, checked %v, model pickers %d", res.StatusCode, box.Length(),
				box.AttrOr("checked", "no") != "no", doc.Find("[data-testid=target-picker-0]").Length())
		}
		choice := doc.Find("[data-testid=agent-choice]").Text()
		for _, want := range []string{"Docs <agent>", "v1", "Fake / fake-large", "1 tool server"} {
			if !strings.Contains(choice, want) {
				t.Errorf("agent choice %q lacks %q", choice, want)
			}
		}
		res, doc, _ = a.get(t, "/runs/new")
		if res.StatusCode != 200 || doc.Find("[data-testid=agent-"+agentID+"]").AttrOr("checked", "no") != "no" || doc.Find("[data-testid=target-picker-0]").Length() != 1 {
			t.Errorf("plain form: status %d; the agent is ticked or the model picker is missing", res.StatusCode)
		}
		for path, status := range map[string]int{"/runs/new?agent_id=99999": 404, "/runs/new?agent_id=x": 400} {
			if res, _, _ := a.get(t, path); res.StatusCode != status {
				t.Errorf("GET %s: status %d, want %d", path, res.StatusCode, status)
			}
		}

		form := url.Values{"name": {"model and agent"}, "judge_provider_id": {fmt.Sprint(p.ID)}, "judge_model": {"fake-judge"},
			"target_provider_id": {fmt.Sprint(p.ID)}, "target_model": {"fake-small"}, "agent_ids": {agentID}}
		// Refused (no collection): the agent stays ticked.
		res, doc = a.post(t, "/runs", form, nil)
		if res.StatusCode != 422 || doc.Find("[data-testid=agent-"+agentID+"]").AttrOr("checked", "no") == "no" {
			t.Errorf("refused form: status %d, agent ticked %v", res.StatusCode, doc.Find("[data-testid=agent-"+agentID+"]").AttrOr("checked", "no") != "no")
		}
		form.Set("collection_ids", fmt.Sprint(col.ID))
		res, _ = a.post(t, "/runs", form, nil)
		var runID int64
		if _, err := fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &runID); res.StatusCode != 303 || err != nil {
			t.Fatalf("start: status %d, location %q", res.StatusCode, res.Header.Get("Location"))
		}
		var run agentRunTargets
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", runID)}, 200, &run)
		if len(run.Targets) != 2 || run.Targets[0].Model != "fake-small" || run.Targets[0].AgentID != nil {
			t.Fatalf("targets: %+v", run.Targets)
		}
		if tg := run.Targets[1]; tg.AgentID == nil || *tg.AgentID != ag.ID || tg.AgentName != "Docs <agent>" || tg.AgentVersion != 1 ||
			tg.Provider != "Fake" || tg.Model != "fake-large" {
			t.Errorf("agent target: %+v", tg)
		}

		// Once warmed up, the run page lists the tools the agent was offered.
		waitEnded(t, st, runID)
		_, doc, body := a.get(t, fmt.Sprintf("/runs/%d", runID))
		if strings.Contains(body, "Docs <agent>") {
			t.Error("the agent's name is not escaped")
		}
		sec := doc.Find("[data-testid=run-targets]")
		if sec.Find("[data-testid=run-target]").Length() != 2 || strings.TrimSpace(sec.Find("[data-testid=target-agent-version]").Text()) != "v1" ||
			sec.Find("[data-testid=target-agent-link]").AttrOr("href", "") != "/agents/"+agentID+"/edit" {
			h, _ := sec.Html()
			t.Fatalf("targets section:\n%s", h)
		}
		var tools []string
		sec.Find("[data-testid=target-tool]").Each(func(_ int, r *goquery.Selection) {
			tools = append(tools, strings.Join(r.Find("td").Map(func(_ int, c *goquery.Selection) string { return c.Text() }), " · "))
		})
		slices.Sort(tools)
		if want := []string{"docs · fetch · Reads a page of the docs", "docs · search · Searches the docs"}; !slices.Equal(tools, want) {
			t.Errorf("frozen tools %q, want %q", tools, want)
		}

		// Another run without the agent: the agent's filter keeps to its own.
		other := url.Values{"judge_provider_id": {fmt.Sprint(p.ID)}, "judge_model": {"fake-judge"}, "target_provider_id": {fmt.Sprint(p.ID)},
			"target_model": {"fake-small"}, "collection_ids": {fmt.Sprint(col.ID)}}
		res, _ = a.post(t, "/runs", other, nil)
		var otherID int64
		if _, err := fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &otherID); res.StatusCode != 303 || err != nil {
			t.Fatalf("second run: status %d", res.StatusCode)
		}
		_, doc, _ = a.get(t, "/agents")
		if l := doc.Find("[data-testid=agent-runs] a"); strings.TrimSpace(l.Text()) != "1 run" || l.AttrOr("href", "") != "/runs?agent_id="+agentID {
			t.Errorf("agent's runs: %q → %q", l.Text(), l.AttrOr("href", ""))
		}
		_, doc, _ = a.get(t, "/runs?agent_id="+agentID)
		if n := doc.Find("[data-testid=runs-table] tbody tr").Length(); n != 1 || !strings.Contains(doc.Find("[data-testid=agent-filter]").Text(), "Docs <agent>") {
			t.Errorf("runs of the agent: %d rows, filter %q", n, doc.Find("[data-testid=agent-filter]").Text())
		}
		var page struct{ Total int64 }
		a.do(t, call{method: "GET", path: "/api/runs?agent_id=" + agentID}, 200, &page)
		if page.Total != 1 {
			t.Errorf("GET /api/runs?agent_id: %d runs, want 1", page.Total)
		}

		// A re-run after an edit keeps the version the run froze.
		if _, err := st.UpdateAgent(ctx, ag.ID, store.AgentInput{Name: "Docs <agent>", ProviderID: &pid, Model: "fake-small",
			MCPServers: []store.MCPServer{{Name: "docs", URL: mcp.URL}}}); err != nil {
			t.Fatal(err)
		}
		waitEnded(t, st, otherID)
		var again agentRunTargets
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/runs/%d/rerun", runID)}, 201, &again)
		if tg := again.Targets[1]; tg.AgentVersion != 1 || tg.Model != "fake-large" {
			t.Errorf("re-run's agent target: %+v, want version 1 on fake-large", tg)
		}
		waitEnded(t, st, again.ID)
	})
}

// TestCompareAgentVersions: two runs of one agent at two versions compare
// as the same subject across runs, each entry named by its version, on the
// compare page too.
func TestCompareAgentVersions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL})
		if err != nil {
			t.Fatal(err)
		}
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "t", Category: "c", Question: "q", Reference: "r"})
		if err != nil {
			t.Fatal(err)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		pid := p.ID
		ag, err := st.CreateAgent(ctx, store.AgentInput{Name: "Helper", ProviderID: &pid, Model: "fake-small"})
		if err != nil {
			t.Fatal(err)
		}
		start := func() int64 {
			var run agentRunTargets
			a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"agent_id":%d}],"collection_ids":[%d]}`,
				p.ID, ag.ID, col.ID)}, 201, &run)
			waitEnded(t, st, run.ID)
			return run.ID
		}
		first := start()
		if _, err := st.UpdateAgent(ctx, ag.ID, store.AgentInput{Name: "Helper", ProviderID: &pid, Model: "fake-large"}); err != nil {
			t.Fatal(err)
		}
		second := start()

		var cmp struct {
			Entries []struct {
				Model   string `json:"model"`
				AgentID int64  `json:"agent_id"`
			} `json:"entries"`
			Baselines []int `json:"baselines"`
			PairTests []struct {
				A, B    string
				Pairing string `json:"pairing"`
			} `json:"pair_tests"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/compare?run_ids=%d,%d&baseline=%d", first, second, first)}, 200, &cmp)
		if len(cmp.Entries) != 2 || cmp.Entries[0].Model != "Helper (agent v1)" || cmp.Entries[1].Model != "Helper (agent v2)" ||
			cmp.Entries[1].AgentID != ag.ID {
			t.Fatalf("entries: %+v", cmp.Entries)
		}
		if len(cmp.Baselines) != 2 || cmp.Baselines[1] != 0 || len(cmp.PairTests) != 1 || cmp.PairTests[0].Pairing != "same_model" {
			t.Errorf("v2 is not measured against v1: baselines %v, pairs %+v", cmp.Baselines, cmp.PairTests)
		}
		_, doc, _ := a.get(t, fmt.Sprintf("/compare?run_ids=%d,%d", first, second))
		if text := doc.Text(); !strings.Contains(text, "Helper (agent v1)") || !strings.Contains(text, "Helper (agent v2)") {
			t.Error("the compare page does not name both versions")
		}
	})
}
