package mcpclient_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tribunal/mcpclient"
)

func TestTestReportsEachServer(t *testing.T) {
	up, other := serveStreamable(t, newToolbox()), serveStreamable(t, newToolbox())
	got := mcpclient.Test(context.Background(), []mcpclient.Server{
		{Name: "up", URL: up, AllowedTools: []string{"add", "echo"}},
		{Name: "down", URL: downURL(t)},
		{Name: "clash", URL: other, AllowedTools: []string{"echo"}},
		{Name: "local", Transport: mcpclient.Stdio, Command: "mcp-server-fs"},
		{Name: "up", URL: other},
		{Name: "empty", URL: other, AllowedTools: []string{"add"}},
	}, mcpclient.Options{})

	if len(got) != 6 {
		t.Fatalf("%d statuses for 6 servers", len(got))
	}
	want := []struct {
		name  string
		ok    bool
		tools string
		err   string
	}{
		{"up", true, "add,echo", ""},
		{"down", false, "", "connect"},
		{"clash", false, "echo", `tool "echo" is also offered by server "up"`},
		{"local", false, "", "--allow-mcp-commands"},
		{"up", false, "", "another server has this name"},
		{"empty", false, "add", `tool "add" is also offered by server "up"`},
	}
	for i, w := range want {
		s := got[i]
		var names []string
		for _, tool := range s.Tools {
			names = append(names, tool.Name)
		}
		if s.Name != w.name || s.OK != w.ok || strings.Join(names, ",") != w.tools {
			t.Errorf("server %d = %+v, want name %s ok %v tools %q", i, s, w.name, w.ok, w.tools)
		}
		if (w.err == "") != (s.Error == "") || !strings.Contains(s.Error, w.err) {
			t.Errorf("server %d error = %q, want %q", i, s.Error, w.err)
		}
	}
	if got[0].Tools[0].Description != "Adds two numbers" {
		t.Errorf("tool description = %q", got[0].Tools[0].Description)
	}
}

func TestTestJSON(t *testing.T) {
	got := mcpclient.Test(context.Background(), []mcpclient.Server{{Name: "down", URL: downURL(t)}}, mcpclient.Options{})
	b, err := json.Marshal(map[string]any{"servers": got})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Servers []map[string]any `json:"servers"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	s := back.Servers[0]
	if s["name"] != "down" || s["ok"] != false || s["error"] == nil {
		t.Errorf("JSON = %s", b)
	}
	// An empty list, not null, so the page and API clients need no special case.
	if tools, ok := s["tools"].([]any); !ok || len(tools) != 0 {
		t.Errorf("tools = %v, want []", s["tools"])
	}
}
