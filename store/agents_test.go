package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// agentFixture is a tools agent on a fresh provider with one MCP server
// holding a secret header.
func agentFixture(t *testing.T, st *store.Store) store.AgentInput {
	t.Helper()
	p, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: "openai", BaseURL: "https://api.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return agentInput(p.ID)
}

func agentInput(providerID int64) store.AgentInput {
	return store.AgentInput{Name: "Support bot", ProviderID: &providerID, Model: "gpt-4.1", SystemPrompt: "Be brief.",
		MCPServers: []store.MCPServer{{Name: "docs", URL: "https://mcp.example.com/mcp", AllowedTools: []string{"search", " ", "search", "fetch"},
			Headers: []store.Header{{Key: "Authorization", Value: "Bearer mcp-secret-4242"}, {Key: "X-Team", Value: "blue"}}}},
		Tags: []string{"support", "Support", " beta "}}
}

// TestAgentDefaultsAndVersions: defaults are filled, every edit makes a new
// version with the config frozen, and an unchanged save makes none.
func TestAgentDefaultsAndVersions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		in := agentFixture(t, st)
		a, err := st.CreateAgent(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		srv := a.MCPServers[0]
		switch {
		case a.Executor != store.ExecutorTools || a.MaxTurns != 10 || a.ToolTimeoutSeconds != 30 || a.Version != 1:
			t.Errorf("defaults: executor %q, max_turns %d, tool_timeout %d, version %d", a.Executor, a.MaxTurns, a.ToolTimeoutSeconds, a.Version)
		case srv.Transport != store.TransportStreamableHTTP || srv.Concurrency != 4:
			t.Errorf("server defaults: transport %q, concurrency %d", srv.Transport, srv.Concurrency)
		case strings.Join(srv.AllowedTools, ",") != "search,fetch":
			t.Errorf("allowed_tools = %q, want search,fetch", srv.AllowedTools)
		case strings.Join(a.Tags, ",") != "support,beta":
			t.Errorf("tags = %q", a.Tags)
		case a.HTTP != nil:
			t.Errorf("a tools agent has http %+v", a.HTTP)
		}

		// Sent back as shown (secret masked): nothing changed, no new version.
		same := a.AgentInput
		if a2, err := st.UpdateAgent(ctx, a.ID, same); err != nil || a2.Version != 1 {
			t.Fatalf("unchanged save: version %v, err %v", a2, err)
		}
		edit := a.AgentInput
		edit.MaxTurns, edit.Model = 20, "gpt-4.1-mini"
		a3, err := st.UpdateAgent(ctx, a.ID, edit)
		if err != nil || a3.Version != 2 || a3.Model != "gpt-4.1-mini" {
			t.Fatalf("edit: %+v, %v", a3, err)
		}
		vs, err := st.AgentVersions(ctx, a.ID)
		if err != nil || len(vs) != 2 {
			t.Fatalf("versions: %+v, %v", vs, err)
		}
		if vs[0].Version != 2 || vs[0].Config.MaxTurns != 20 || vs[1].Version != 1 || vs[1].Config.Model != "gpt-4.1" || vs[1].Config.MaxTurns != 10 {
			t.Errorf("versions hold %+v", vs)
		}
		if v := vs[1].Config.MCPServers[0].Headers[0].Value; !strings.HasPrefix(v, "••") || !strings.HasSuffix(v, "4242") {
			t.Errorf("a version shows the secret as %q, want it masked", v)
		}

		if _, err := st.AgentVersions(ctx, a.ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("versions of a missing agent: %v", err)
		}
		if err := st.DeleteAgent(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Agent(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := st.DeleteAgent(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

// TestAgentSecrets: secret header values are sealed at rest (in the row and
// in its versions), masked in every reply, kept when sent back masked, and
// dropped (422) when the server's URL moves to another origin.
func TestAgentSecrets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, err := st.CreateAgent(ctx, agentFixture(t, st))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := st.RawAgentColumns(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "mcp-secret-4242") || strings.Count(raw, `v1:`) != 2 || !strings.Contains(raw, "blue") {
			t.Errorf("at rest the secret is not sealed in both the row and its version (plain headers stay plain):\n%s", raw)
		}
		hs := a.MCPServers[0].Headers
		if !hs[0].IsSecret || hs[0].Value != "••••••4242" || hs[1].IsSecret || hs[1].Value != "blue" {
			t.Errorf("reply headers = %+v", hs)
		}
		list, err := st.Agents(ctx)
		if err != nil || len(list) != 1 || list[0].MCPServers[0].Headers[0].Value != "••••••4242" {
			t.Errorf("list: %+v, %v", list, err)
		}

		// Kept: a path change is the same origin.
		edit := a.AgentInput
		edit.MCPServers = []store.MCPServer{a.MCPServers[0]}
		edit.MCPServers[0].URL = "https://mcp.example.com/v2/mcp"
		if _, err := st.UpdateAgent(ctx, a.ID, edit); err != nil {
			t.Fatalf("path change: %v", err)
		}
		raw2, _ := st.RawAgentColumns(ctx, a.ID)
		if sealedOf(raw2) != sealedOf(raw) {
			t.Errorf("the kept secret was not kept as stored:\n%s\n%s", raw, raw2)
		}

		// Dropped: another host needs the value again.
		edit.MCPServers[0].URL = "https://attacker.example/mcp"
		_, err = st.UpdateAgent(ctx, a.ID, edit)
		wantInvalid(t, "moved server", err, "mcp_servers[0].headers[0].value", `the URL of MCP server "docs" changed, so enter the secret value again`)
		// A renamed server is a new one: its secrets are entered anew.
		edit.MCPServers[0].URL, edit.MCPServers[0].Name = "https://mcp.example.com/mcp", "docs2"
		_, err = st.UpdateAgent(ctx, a.ID, edit)
		wantInvalid(t, "renamed server", err, "mcp_servers[0].headers[0].value", "no secret value is stored")
		// A new value may go anywhere.
		edit.MCPServers[0].URL, edit.MCPServers[0].Headers[0].Value = "https://attacker.example/mcp", "Bearer fresh-9999"
		a2, err := st.UpdateAgent(ctx, a.ID, edit)
		if err != nil || a2.MCPServers[0].Headers[0].Value != "••••••9999" {
			t.Fatalf("move with a new value: %+v, %v", a2, err)
		}

		// The http executor's headers follow the same rule.
		h, err := st.CreateAgent(ctx, store.AgentInput{Name: "deployed", Executor: store.ExecutorHTTP,
			HTTP: &store.AgentHTTP{URL: "https://agent.example.com/run", Headers: []store.Header{{Key: "X-Api-Key", Value: "key-abcd1234"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if v := h.HTTP.Headers[0].Value; v != "••••••1234" {
			t.Errorf("http header shows %q", v)
		}
		hin := h.AgentInput
		hin.HTTP = &store.AgentHTTP{URL: "https://elsewhere.example/run", Headers: h.HTTP.Headers}
		_, err = st.UpdateAgent(ctx, h.ID, hin)
		wantInvalid(t, "moved http agent", err, "http.headers[0].value", "the agent's URL changed")

		// A clone carries the sealed secrets to the same servers.
		c, err := st.CloneAgent(ctx, h.ID)
		if err != nil || c.Name != "deployed (copy)" || c.HTTP.Headers[0].Value != "••••••1234" {
			t.Fatalf("clone: %+v, %v", c, err)
		}
		if c2, err := st.CloneAgent(ctx, h.ID); err != nil || c2.Name != "deployed (copy 2)" {
			t.Errorf("second clone: %+v, %v", c2, err)
		}
	})
}

// sealedOf returns the first sealed value in raw column text.
func sealedOf(raw string) string {
	i := strings.Index(raw, "v1:")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(raw[i:], '"')
	if j < 0 {
		return raw[i:]
	}
	return raw[i : i+j]
}

// TestAgentValidation: each rule answers a ValidationError on its field,
// a duplicate name a conflict, and stdio servers only with the flag.
func TestAgentValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		base := agentFixture(t, st)
		if _, err := st.CreateAgent(ctx, base); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateAgent(ctx, base); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), `"Support bot" already exists`) {
			t.Errorf("duplicate name: %v", err)
		}
		missing := int64(9999)
		for _, tc := range []struct {
			name, field, want string
			edit              func(in *store.AgentInput)
		}{
			{"no name", "name", "is required", func(in *store.AgentInput) { in.Name = " " }},
			{"bad executor", "executor", "tools or http", func(in *store.AgentInput) { in.Executor = "lambda" }},
			{"no provider", "provider_id", "is required", func(in *store.AgentInput) { in.ProviderID = nil }},
			{"unknown provider", "provider_id", "no provider with id 9999", func(in *store.AgentInput) { in.ProviderID = &missing }},
			{"no model", "model", "is required", func(in *store.AgentInput) { in.Model = "" }},
			{"turns too many", "max_turns", "between 1 and 50", func(in *store.AgentInput) { in.MaxTurns = 51 }},
			{"turns negative", "max_turns", "between 1 and 50", func(in *store.AgentInput) { in.MaxTurns = -1 }},
			{"timeout", "tool_timeout_seconds", "between 1 and 600", func(in *store.AgentInput) { in.ToolTimeoutSeconds = 601 }},
			{"temperature", "settings.temperature", "0…2", func(in *store.AgentInput) { tt := 3.0; in.Settings.Temperature = &tt }},
			{"effort", "settings.reasoning_effort", "minimal, low", func(in *store.AgentInput) { in.Settings.ReasoningEffort = "max" }},
			{"server name", "mcp_servers[0].name", "is required", func(in *store.AgentInput) { in.MCPServers[0].Name = "" }},
			{"server twice", "mcp_servers[1].name", `"docs" appears twice`, func(in *store.AgentInput) {
				in.MCPServers = append(in.MCPServers, store.MCPServer{Name: "docs", URL: "https://b.example"})
			}},
			{"server url", "mcp_servers[0].url", "http:// or https://", func(in *store.AgentInput) { in.MCPServers[0].URL = "ftp://x" }},
			{"server creds", "mcp_servers[0].url", "credentials", func(in *store.AgentInput) { in.MCPServers[0].URL = "https://u:p@x.example" }},
			{"transport", "mcp_servers[0].transport", "streamable_http, sse or stdio", func(in *store.AgentInput) { in.MCPServers[0].Transport = "ws" }},
			{"stdio refused", "mcp_servers[0].transport", "stdio MCP servers need --allow-mcp-commands", func(in *store.AgentInput) {
				in.MCPServers[0] = store.MCPServer{Name: "local", Transport: store.TransportStdio, Command: "npx server"}
			}},
			{"concurrency", "mcp_servers[0].concurrency", "between 1 and 64", func(in *store.AgentInput) { in.MCPServers[0].Concurrency = 65 }},
			{"header twice", "mcp_servers[0].headers[1].key", "appears twice", func(in *store.AgentInput) { in.MCPServers[0].Headers[1].Key = "authorization" }},
			{"http without url", "http.url", "is required", func(in *store.AgentInput) { in.Executor = store.ExecutorHTTP; in.MCPServers = nil }},
			{"http with servers", "mcp_servers", "tools executor", func(in *store.AgentInput) {
				in.Executor, in.HTTP = store.ExecutorHTTP, &store.AgentHTTP{URL: "https://a.example"}
			}},
		} {
			in := agentInput(*base.ProviderID)
			in.Name = "v " + tc.name
			tc.edit(&in)
			_, err := st.CreateAgent(ctx, in)
			wantInvalid(t, tc.name, err, tc.field, tc.want)
		}
	})
}

// TestAgentStdioWithFlag: with --allow-mcp-commands, a stdio server with
// its command is saved (and needs one).
func TestAgentStdioWithFlag(t *testing.T) {
	storetest.EachWith(t, store.Config{AllowMCPCommands: true}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		in := agentFixture(t, st)
		in.MCPServers = []store.MCPServer{{Name: "local", Transport: store.TransportStdio}}
		_, err := st.CreateAgent(ctx, in)
		wantInvalid(t, "stdio without command", err, "mcp_servers[0].command", "is required")
		in.MCPServers[0].Command = "uvx mcp-server-time"
		a, err := st.CreateAgent(ctx, in)
		if err != nil || a.MCPServers[0].Command != "uvx mcp-server-time" {
			t.Fatalf("stdio with the flag: %+v, %v", a, err)
		}
	})
}
