package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"tribunal/store"
)

// TestPasteCodeMakesAgent: a user pastes Agents SDK code, "Read code" fills
// the form beside it, they add a second MCP server by hand, choose a
// provider and save; the list shows the agent with its servers.
func TestPasteCodeMakesAgent(t *testing.T) {
	a := startApp(t, nil)
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "base_url": a.fake.URL}, &prov, 201)
	b := newBrowser(t, a.URL)

	b.open("/agents")
	b.waitFor("the paste box", `document.querySelector("[data-testid=agent-code]")`, 15*time.Second)
	code := `agent = Agent(
    name="Docs helper",
    model="fake-small",
    instructions="Answer from the docs.",
    tools=[HostedMCPTool(tool_config={"type": "mcp", "server_label": "docs",
        "server_url": "https://mcp.example.com/mcp", "allowed_tools": ["search_docs"],
        "headers": {"Authorization": "Bearer sk-e2e-4321"}})],
)`
	// A paste: the value arrives at once.
	mustEval[bool](b, "paste the code", fmt.Sprintf(`(() => { const e = document.querySelector("[data-testid=agent-code]"); e.value = %s; return true })()`, js(code)))
	b.click("[data-testid=read-code]")
	b.waitFor("the form filled from the code", `document.querySelector("#agent-form input[name=name]").value === "Docs helper" &&
		document.querySelector("#agent-form input[name=server_0_url]").value === "https://mcp.example.com/mcp"`, 15*time.Second)

	b.click("[data-testid=add-server]")
	b.waitFor("a second server row", `document.querySelector("input[name=server_1_name]")`, 15*time.Second)
	b.typeInto("input[name=server_1_name]", "tickets")
	b.typeInto("input[name=server_1_url]", "https://tickets.example.com/mcp")
	b.choose("select[name=provider_id]", "Fake")
	b.click("[data-testid=save-agent]")
	b.waitFor("the saved agent", `document.querySelector("[data-testid=flash-success]") &&
		document.querySelector("[data-testid=flash-success]").innerText.includes("Agent created")`, 15*time.Second)
	row := b.text("[data-testid=agent-row]")
	for _, want := range []string{"Docs helper", "docs", "tickets", "search_docs", "v1"} {
		if !strings.Contains(row, want) {
			t.Errorf("the row %q lacks %q", row, want)
		}
	}
	var agents []store.Agent
	apiCall(t, a, "GET", "/api/agents", nil, &agents, 200)
	if len(agents) != 1 || len(agents[0].MCPServers) != 2 || agents[0].MCPServers[0].Headers[0].Value != "••••••4321" || agents[0].SystemPrompt != "Answer from the docs." {
		t.Errorf("saved: %+v", agents)
	}

	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}

	// Unreadable code says why, under the code (a 422, which HTMX also
	// reports on the console), and the form stays as it was.
	b.typeInto("#agent-form input[name=name]", "Typed by hand")
	mustEval[bool](b, "paste other code", `(() => { document.querySelector("[data-testid=agent-code]").value = "Agent(name='x', model=pick())"; return true })()`)
	b.click("[data-testid=read-code]")
	b.waitFor("the reason", `document.querySelector("#extract-error").innerText.includes("model: not a string literal")`, 15*time.Second)
	b.check("the form as it was", `document.querySelector("#agent-form input[name=name]").value === "Typed by hand"`, time.Second)
}
