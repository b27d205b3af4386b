package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestAgentsAPI: create, read, list, update (a new version), versions,
// duplicate names, the stdio refusal, secrets masked, delete.
func TestAgentsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)

		body := fmt.Sprintf(`{"name":"Docs bot","provider_id":%d,"model":"fake-model","system_prompt":"Use the tools.",
			"settings":{"temperature":0.1,"parallel_tool_calls":true},
			"mcp_servers":[{"name":"docs","url":"https://mcp.example.com/mcp","headers":[{"key":"Authorization","value":"Bearer tok-98765"}],"allowed_tools":["search"]}],
			"tags":["support"]}`, p.ID)
		var ag store.Agent
		a.do(t, call{method: "POST", path: "/api/agents", body: body}, 201, &ag)
		if ag.Version != 1 || ag.MaxTurns != 10 || ag.MCPServers[0].Concurrency != 4 || ag.MCPServers[0].Headers[0].Value != "••••••8765" {
			t.Errorf("created: %+v", ag)
		}
		raw := a.do(t, call{method: "GET", path: "/api/agents"}, 200, nil)
		if strings.Contains(raw, "tok-98765") || !strings.Contains(raw, `"name":"Docs bot"`) {
			t.Errorf("list shows the secret or lacks the agent: %s", raw)
		}
		msg := a.do(t, call{method: "POST", path: "/api/agents", body: body}, 409, nil)
		if !strings.Contains(msg, `an agent named \"Docs bot\" already exists`) {
			t.Errorf("duplicate: %s", msg)
		}

		path := fmt.Sprintf("/api/agents/%d", ag.ID)
		// Sent back as read: the masked secret is kept, the edit is version 2.
		ag.MaxTurns = 5
		b, _ := json.Marshal(ag.AgentInput)
		var ag2 store.Agent
		a.do(t, call{method: "PUT", path: path, body: string(b)}, 200, &ag2)
		if ag2.Version != 2 || ag2.MaxTurns != 5 || ag2.MCPServers[0].Headers[0].Value != "••••••8765" {
			t.Errorf("updated: %+v", ag2)
		}
		var vs []store.AgentVersion
		a.do(t, call{method: "GET", path: path + "/versions"}, 200, &vs)
		if len(vs) != 2 || vs[0].Version != 2 || vs[1].Config.MaxTurns != 10 {
			t.Errorf("versions: %+v", vs)
		}

		stdio := fmt.Sprintf(`{"name":"local","provider_id":%d,"model":"m","mcp_servers":[{"name":"fs","transport":"stdio","command":"npx fs"}]}`, p.ID)
		msg = a.do(t, call{method: "POST", path: "/api/agents", body: stdio}, 422, nil)
		if !strings.Contains(msg, "stdio MCP servers need --allow-mcp-commands") {
			t.Errorf("stdio: %s", msg)
		}
		a.do(t, call{method: "POST", path: "/api/agents", body: `{"name":"x","max_turns":1,"bogus":1}`}, 400, nil)
		msg = a.do(t, call{method: "POST", path: "/api/agents", body: `{"name":"x","executor":"http","http":{"url":"ftp://x"}}`}, 422, nil)
		if !strings.Contains(msg, "http.url") {
			t.Errorf("http url: %s", msg)
		}

		a.do(t, call{method: "DELETE", path: path}, 204, nil)
		a.do(t, call{method: "GET", path: path}, 404, nil)
		a.do(t, call{method: "GET", path: path + "/versions"}, 404, nil)
	})
}

// TestExtractAgentAPI: the config found, unsaved, or 422 naming what could
// not be read.
func TestExtractAgentAPI(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	code := `agent = Agent(name="Doc helper", model="gpt-4.1-mini", instructions="""Answer briefly.""",
    tools=[HostedMCPTool(tool_config={"type": "mcp", "server_label": "gitmcp", "server_url": "https://gitmcp.io/openai/codex",
        "allowed_tools": ["search_codex_documentation"], "headers": {"Authorization": "Bearer abc-1234"}})],
    model_settings=ModelSettings(temperature=0.3, max_tokens=500))`
	b, _ := json.Marshal(map[string]string{"code": code})
	var in store.AgentInput
	raw := a.do(t, call{method: "POST", path: "/api/agents/extract", body: string(b)}, 200, &in)
	if in.Name != "Doc helper" || in.Model != "gpt-4.1-mini" || in.SystemPrompt != "Answer briefly." || len(in.MCPServers) != 1 ||
		in.MCPServers[0].URL != "https://gitmcp.io/openai/codex" || *in.Settings.MaxTokens != 500 || !in.MCPServers[0].Headers[0].IsSecret {
		t.Errorf("extracted: %s", raw)
	}
	var list []store.Agent
	a.do(t, call{method: "GET", path: "/api/agents"}, 200, &list)
	if len(list) != 0 {
		t.Errorf("extract saved an agent: %+v", list)
	}
	msg := a.do(t, call{method: "POST", path: "/api/agents/extract", body: `{"code":"Agent(name=\"a\", model=choose())"}`}, 422, nil)
	if !strings.Contains(msg, "model: not a string literal") {
		t.Errorf("422: %s", msg)
	}
	msg = a.do(t, call{method: "POST", path: "/api/agents/extract", body: `{"code":"print(1)"}`}, 422, nil)
	if !strings.Contains(msg, "no Agent(...) call found") {
		t.Errorf("422: %s", msg)
	}
}
