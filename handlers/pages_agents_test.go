package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestAgentPages: paste code fills the form, the form creates the agent
// (secret sealed, shown masked), the edit page keeps the secret and makes
// a version, clone and delete redirect with a flash, and what a user wrote
// is escaped.
func TestAgentPages(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL})
	if err != nil {
		t.Fatal(err)
	}

	res, doc, _ := a.get(t, "/agents")
	if res.StatusCode != 200 || doc.Find("h1").Text() != "Agents" || doc.Find("[data-testid=agent-code]").Length() != 1 ||
		doc.Find("#agent-form").Length() != 1 || doc.Find("nav a[aria-current=page]").Text() != "Agents" {
		t.Fatalf("GET /agents: status %d, h1 %q", res.StatusCode, doc.Find("h1").Text())
	}

	// Read code: the form comes back filled.
	code := `agent = Agent(name="Docs <bot>", model="gpt-4.1", instructions="Be brief.",
    tools=[HostedMCPTool(tool_config={"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example.com/mcp",
        "allowed_tools": ["search"], "headers": {"Authorization": "Bearer tok-5678"}}), WebSearchTool()])`
	res, doc = a.post(t, "/agents/extract", url.Values{"code": {code}}, map[string]string{"HX-Request": "true"})
	if res.StatusCode != 200 || doc.Find("input[name=name]").AttrOr("value", "") != "Docs <bot>" ||
		doc.Find("input[name=server_0_url]").AttrOr("value", "") != "https://mcp.example.com/mcp" ||
		doc.Find("input[name=server_0_header_value]").AttrOr("value", "") != "Bearer tok-5678" ||
		!strings.Contains(doc.Find("[data-testid=extract-notes]").Text(), "WebSearchTool") {
		h, _ := doc.Html()
		t.Fatalf("read code: status %d\n%s", res.StatusCode, h)
	}
	res, doc = a.post(t, "/agents/extract", url.Values{"code": {"print(1)"}}, map[string]string{"HX-Request": "true"})
	if res.StatusCode != 422 || res.Header.Get("HX-Retarget") != "#extract-error" || !strings.Contains(doc.Text(), "no Agent(...) call found") {
		t.Errorf("unreadable code: status %d, retarget %q, %s", res.StatusCode, res.Header.Get("HX-Retarget"), doc.Text())
	}

	form := url.Values{"name": {"Docs <bot>"}, "executor": {"tools"}, "provider_id": {fmt.Sprint(p.ID)}, "model": {"gpt-4.1"},
		"system_prompt": {"Be brief."}, "temperature": {"0.2"}, "parallel_tool_calls": {"false"}, "max_turns": {"8"}, "tags": {"docs, beta"},
		"server_index": {"0", "3"}, "server_0_name": {"docs"}, "server_0_url": {"https://mcp.example.com/mcp"}, "server_0_transport": {"streamable_http"},
		"server_0_allowed_tools": {"search, fetch"}, "server_0_concurrency": {"2"},
		"server_0_header_key": {"Authorization"}, "server_0_header_value": {"Bearer tok-5678"}, "server_0_header_secret": {"secret"},
		"server_3_name": {""}} // a row added and left empty
	res, _ = a.post(t, "/agents", form, nil)
	if res.StatusCode != 303 || res.Header.Get("Location") != "/agents" {
		t.Fatalf("create: status %d", res.StatusCode)
	}
	agents, _ := st.Agents(ctx)
	if len(agents) != 1 {
		t.Fatalf("agents: %+v", agents)
	}
	ag := agents[0]
	srv := ag.MCPServers[0]
	if ag.MaxTurns != 8 || *ag.Settings.Temperature != 0.2 || *ag.Settings.ParallelToolCalls || len(ag.MCPServers) != 1 ||
		srv.Concurrency != 2 || strings.Join(srv.AllowedTools, ",") != "search,fetch" || strings.Join(ag.Tags, ",") != "docs,beta" {
		t.Errorf("saved: %+v", ag)
	}
	_, doc, body := a.get(t, "/agents")
	row := doc.Find("[data-testid=agent-row]")
	if row.Length() != 1 || !strings.Contains(row.Text(), "Docs <bot>") || !strings.Contains(row.Text(), "Tool loop (Tribunal)") ||
		!strings.Contains(row.Text(), "Streamable HTTP") || !strings.Contains(row.Text(), "search, fetch") || !strings.Contains(row.Text(), "v1") {
		t.Errorf("row: %s", row.Text())
	}
	if strings.Contains(body, "<bot>") || strings.Contains(body, "tok-5678") {
		t.Error("the page holds the name unescaped or the secret")
	}

	// Edit: the secret shows masked, an empty value keeps it, the save is version 2.
	edit := fmt.Sprintf("/agents/%d", ag.ID)
	_, doc, body = a.get(t, edit+"/edit")
	if ph := doc.Find("input[name=server_0_header_value]").AttrOr("placeholder", ""); ph != "••••••5678 (unchanged)" || strings.Contains(body, "tok-5678") {
		t.Errorf("edit page secret placeholder %q", ph)
	}
	form.Set("server_0_header_value", "")
	form.Set("model", "gpt-4.1-mini")
	if res, _ := a.post(t, edit, form, nil); res.StatusCode != 303 {
		t.Fatalf("update: status %d", res.StatusCode)
	}
	got, _ := st.Agent(ctx, ag.ID)
	if got.Version != 2 || got.Model != "gpt-4.1-mini" || got.MCPServers[0].Headers[0].Value != "••••••5678" {
		t.Errorf("updated: %+v", got)
	}
	// A bad edit answers the edit page with the problem and the form as sent.
	form.Set("max_turns", "99")
	res, doc = a.post(t, edit, form, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "max_turns") ||
		doc.Find("input[name=max_turns]").AttrOr("value", "") != "99" {
		t.Errorf("bad edit: status %d, %s", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
	}

	res, _ = a.post(t, edit+"/clone", nil, nil)
	clones, _ := st.Agents(ctx)
	if res.StatusCode != 303 || len(clones) != 2 || res.Header.Get("Location") != fmt.Sprintf("/agents/%d/edit", clones[1].ID) {
		t.Errorf("clone: status %d, location %q, agents %d", res.StatusCode, res.Header.Get("Location"), len(clones))
	}
	if res, _ := a.post(t, edit+"/delete", nil, nil); res.StatusCode != 303 {
		t.Errorf("delete: status %d", res.StatusCode)
	}
	if _, err := st.Agent(ctx, ag.ID); err == nil {
		t.Error("the agent is still there")
	}
	// New server rows number after the existing ones; header rows name their list.
	_, doc, _ = a.get(t, "/agents/server-row?server_index=0&server_index=4")
	if doc.Find("input[name=server_5_name]").Length() != 1 {
		t.Errorf("server row: %s", doc.Text())
	}
	if res, _, _ := a.get(t, "/agents/header-row?prefix=evil\"><"); res.StatusCode != 400 {
		t.Errorf("header row with a bad prefix: status %d", res.StatusCode)
	}
}
