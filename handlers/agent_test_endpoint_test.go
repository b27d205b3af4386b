package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

type lookupIn struct {
	Query string `json:"query"`
}

// mcpServer is a real MCP server (go-sdk, streamable HTTP) with two tools,
// recording the Authorization header of every request.
func mcpServer(t *testing.T) (url string, auth func() []string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	for _, name := range []string{"search", "fetch"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "The docs' " + name},
			func(context.Context, *mcp.CallToolRequest, lookupIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
	}
	var mu sync.Mutex
	var seen []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// TestAgentTest connects to an agent's servers the way a run would: the
// one that is up lists the tools the agent may call, with the secret
// header in clear on the wire; the one that is down says why; the page's
// button shows the same.
func TestAgentTest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		url, auth := mcpServer(t)
		down := httptest.NewServer(http.NotFoundHandler())
		downURL := down.URL
		down.Close()

		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		var ag store.Agent
		a.do(t, call{method: "POST", path: "/api/agents", body: fmt.Sprintf(`{"name":"Docs bot","provider_id":%d,"model":"fake-small",
			"mcp_servers":[{"name":"docs","url":%q,"headers":[{"key":"Authorization","value":"Bearer mcp-secret-4242","is_secret":true}],"allowed_tools":["search"]},
				{"name":"gone","url":%q}]}`, p.ID, url+"/mcp", downURL+"/mcp")}, 201, &ag)

		var res handlers.AgentTestJSON
		raw := a.do(t, call{method: "POST", path: fmt.Sprintf("/api/agents/%d/test", ag.ID)}, 200, &res)
		if len(res.Servers) != 2 {
			t.Fatalf("test: %s", raw)
		}
		docs, gone := res.Servers[0], res.Servers[1]
		if docs.Name != "docs" || !docs.OK || len(docs.Tools) != 1 || docs.Tools[0].Name != "search" || docs.Error != "" {
			t.Errorf("docs server: %+v", docs)
		}
		if gone.Name != "gone" || gone.OK || gone.Error == "" || len(gone.Tools) != 0 {
			t.Errorf("server down: %+v", gone)
		}
		if strings.Contains(raw, "mcp-secret-4242") {
			t.Errorf("the test reply shows the secret: %s", raw)
		}
		sent := auth()
		if len(sent) == 0 || sent[0] != "Bearer mcp-secret-4242" {
			t.Errorf("the server got Authorization %q, want the secret in clear", sent)
		}

		res2, doc := a.post(t, fmt.Sprintf("/agents/%d/test", ag.ID), nil, map[string]string{"HX-Request": "true"})
		if res2.StatusCode != 200 || doc.Find("[data-testid=agent-test-server][data-ok=true]").Length() != 1 ||
			doc.Find("[data-testid=agent-test-server][data-ok=false]").Length() != 1 || !strings.Contains(doc.Text(), "search") {
			t.Errorf("test page fragment (%d): %s", res2.StatusCode, doc.Text())
		}
		a.do(t, call{method: "POST", path: "/api/agents/999999/test"}, 404, nil)
	})
}
