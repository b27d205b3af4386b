package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"tribunal/mcpclient"
)

func dial(t *testing.T, servers []mcpclient.Server, opts mcpclient.Options) *mcpclient.Client {
	t.Helper()
	c, err := mcpclient.Dial(context.Background(), servers, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func call(t *testing.T, c *mcpclient.Client, name, args string) mcpclient.Result {
	t.Helper()
	res, err := c.Call(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Call(%s, %s): %v", name, args, err)
	}
	return res
}

func toolNames(tools []mcpclient.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Server+"/"+t.Name)
	}
	return names
}

func TestToolsListedAndFiltered(t *testing.T) {
	b := newToolbox()
	url := serveStreamable(t, b)
	c := dial(t, []mcpclient.Server{
		{Name: "maths", URL: url, AllowedTools: []string{"echo", "add"}},
	}, mcpclient.Options{})

	tools := c.Tools()
	if got, want := toolNames(tools), []string{"maths/add", "maths/echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v (allowed only, by name)", got, want)
	}
	add := tools[0]
	if add.Description != "Adds two numbers" {
		t.Errorf("description = %q", add.Description)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(add.InputSchema, &schema); err != nil {
		t.Fatalf("input schema %s: %v", add.InputSchema, err)
	}
	if schema.Type != "object" || schema.Properties["a"] == nil || schema.Properties["b"] == nil {
		t.Errorf("input schema = %s, want an object with a and b", add.InputSchema)
	}

	// Tools returns a copy: the caller cannot change what Call allows.
	tools[0].Name = "changed"
	if c.Tools()[0].Name != "add" {
		t.Error("Tools shares its slice with the client")
	}
}

func TestAllToolsWhenNoneAllowedExplicitly(t *testing.T) {
	c := dial(t, []mcpclient.Server{{Name: "all", URL: serveStreamable(t, newToolbox())}}, mcpclient.Options{})
	want := []string{"all/add", "all/big", "all/crash", "all/echo", "all/fail", "all/hang", "all/hold", "all/whoami"}
	if got := toolNames(c.Tools()); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
}

func TestCallStructuredAndTextResults(t *testing.T) {
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, newToolbox())}}, mcpclient.Options{})

	res := call(t, c, "add", `{"a": 2, "b": 40}`)
	if res.IsError || res.Truncated {
		t.Fatalf("add: %+v", res)
	}
	// The structured content, once: not again as the text copy the SDK adds.
	if res.Text != `{"sum":42}` {
		t.Errorf("add text = %q, want the structured content as JSON", res.Text)
	}
	if res.Duration <= 0 {
		t.Errorf("add duration = %v", res.Duration)
	}

	res = call(t, c, "echo", `{"text": "héllo"}`)
	if res.IsError || res.Text != "héllo\nHÉLLO" {
		t.Errorf("echo = %+v, want both text blocks joined", res)
	}
}

func TestCallToolError(t *testing.T) {
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, newToolbox())}}, mcpclient.Options{})
	res := call(t, c, "fail", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "no such city: Atlantis") {
		t.Errorf("fail = %+v, want an error result with the tool's message", res)
	}
	// So is an error the server answers instead of a result.
	res = call(t, c, "crash", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "database is locked") {
		t.Errorf("crash = %+v, want an error result with the server's message", res)
	}
	// A tool error leaves the session usable.
	if res := call(t, c, "add", `{"a":1,"b":1}`); res.IsError {
		t.Errorf("add after a tool error = %+v", res)
	}
}

func TestCallRefusedWithoutContactingServer(t *testing.T) {
	b := newToolbox()
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, b), AllowedTools: []string{"add"}}}, mcpclient.Options{})
	for _, name := range []string{"fail", "no_such_tool"} {
		res := call(t, c, name, `{}`)
		if !res.IsError || res.Text != "tool "+name+" is not available" {
			t.Errorf("%s = %+v, want not available", name, res)
		}
	}
	if n := b.count("fail"); n != 0 {
		t.Errorf("the server ran fail %d times; a tool not allowed must not be called", n)
	}
}

func TestCallBadArguments(t *testing.T) {
	b := newToolbox()
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, b)}}, mcpclient.Options{})
	for _, tc := range []struct{ args, want string }{
		{`{"a": 1,`, "arguments are not valid JSON"},
		{`[1, 2]`, "arguments must be a JSON object, not an array"},
		{`"two"`, "arguments must be a JSON object, not a string"},
		{`null`, "arguments must be a JSON object, not null"},
	} {
		res := call(t, c, "add", tc.args)
		if !res.IsError || !strings.Contains(res.Text, tc.want) || !strings.HasPrefix(res.Text, "tool add: ") {
			t.Errorf("args %s: %+v, want an error naming %q", tc.args, res, tc.want)
		}
	}
	if n := b.count("add"); n != 0 {
		t.Errorf("the server ran add %d times with bad arguments", n)
	}
	// No arguments at all is an empty object (tools without parameters).
	if res := call(t, c, "whoami", ``); res.IsError {
		t.Errorf("whoami without arguments = %+v", res)
	}
	// Arguments the tool's schema refuses come back from the server as an error for the model.
	if res := call(t, c, "add", `{"a": "one"}`); !res.IsError {
		t.Errorf("add with a string = %+v, want an error result", res)
	}
}

func TestCallHangingToolTimesOut(t *testing.T) {
	b := newToolbox()
	timeout := 200 * time.Millisecond
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, b)}}, mcpclient.Options{ToolTimeout: timeout})
	res := call(t, c, "hang", `{}`)
	if !res.IsError || res.Text != "tool hang timed out after "+timeout.String() {
		t.Fatalf("hang = %+v, want a timeout result", res)
	}
	if res := call(t, c, "add", `{"a":1,"b":2}`); res.IsError || res.Text != `{"sum":3}` {
		t.Errorf("add after a timeout = %+v; the session must survive a hung tool", res)
	}
}

func TestCallCancelledIsAnError(t *testing.T) {
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, newToolbox())}}, mcpclient.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Call(ctx, "add", json.RawMessage(`{}`)); err == nil {
		t.Error("Call with an ended context succeeded")
	}
}

func TestHeadersReachServer(t *testing.T) {
	b := newToolbox()
	url := serveStreamable(t, b)
	c := dial(t, []mcpclient.Server{
		{Name: "secret", URL: url, Headers: []mcpclient.Header{{Key: "Authorization", Value: "Bearer sk-test-123"}}},
	}, mcpclient.Options{})
	if res := call(t, c, "whoami", `{}`); res.Text != "Bearer sk-test-123" {
		t.Errorf("whoami = %+v, want the configured header", res)
	}
	if auth := b.authSeen(); slices.Contains(auth, "") {
		t.Errorf("Authorization of each request = %q, want it on all", auth)
	}
}

func TestOutputTruncated(t *testing.T) {
	b := newToolbox()
	// 12,000 × "é€" (2 + 3 bytes) is 60,000 bytes; 16,384 falls inside a
	// "€", so the cut goes back to 16,382, the end of the "é" before it.
	b.bigOutput = strings.Repeat("é€", 12000)
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, b)}}, mcpclient.Options{})
	res := call(t, c, "big", `{}`)
	if !res.Truncated || res.IsError {
		t.Fatalf("big: truncated=%v error=%v", res.Truncated, res.IsError)
	}
	note := "\n[truncated: 60,000 bytes, 16,382 kept]"
	kept, ok := strings.CutSuffix(res.Text, note)
	if !ok {
		t.Fatalf("big ends %q, want the note %q", res.Text[max(0, len(res.Text)-60):], note)
	}
	if !utf8.ValidString(kept) || !strings.HasPrefix(b.bigOutput, kept) || len(kept) != 16382 {
		t.Errorf("kept %d bytes (valid UTF-8: %v), want the first 16,382", len(kept), utf8.ValidString(kept))
	}

	small := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, b)}}, mcpclient.Options{MaxOutput: 100_000})
	if res := call(t, small, "big", `{}`); res.Truncated || res.Text != b.bigOutput {
		t.Errorf("with room to spare: truncated=%v, %d bytes", res.Truncated, len(res.Text))
	}
}

func TestConcurrencyLimit(t *testing.T) {
	const limit, calls = 3, 12
	b := newToolbox()
	b.entered = make(chan struct{})
	b.release = make(chan struct{})
	c := dial(t, []mcpclient.Server{{Name: "s", URL: serveStreamable(t, b), Concurrency: limit}}, mcpclient.Options{})

	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if res := call(t, c, "hold", `{}`); res.IsError {
				t.Errorf("hold = %+v", res)
			}
		})
	}
	// Let the calls finish one at a time, each after a call has started, so
	// that any call over the limit has every chance to get in.
	for range limit {
		<-b.entered
	}
	for range calls - limit {
		b.release <- struct{}{}
		<-b.entered
	}
	for range limit {
		b.release <- struct{}{}
	}
	wg.Wait()
	if got := b.peak.Load(); got != limit {
		t.Errorf("at most %d calls ran at once, want %d", got, limit)
	}
}

func TestSSEServer(t *testing.T) {
	b := newToolbox()
	c := dial(t, []mcpclient.Server{{
		Name: "legacy", URL: serveSSE(t, b), Transport: mcpclient.SSE,
		AllowedTools: []string{"add", "whoami"},
		Headers:      []mcpclient.Header{{Key: "Authorization", Value: "Bearer sse"}},
	}}, mcpclient.Options{})
	if got := toolNames(c.Tools()); !slices.Equal(got, []string{"legacy/add", "legacy/whoami"}) {
		t.Errorf("tools = %v", got)
	}
	if res := call(t, c, "add", `{"a":20,"b":22}`); res.Text != `{"sum":42}` {
		t.Errorf("add over SSE = %+v", res)
	}
	// The SSE transport gives tools no request headers: look at the HTTP
	// requests themselves, the stream and every message posted.
	auth := b.authSeen()
	if len(auth) < 3 || slices.ContainsFunc(auth, func(a string) bool { return a != "Bearer sse" }) {
		t.Errorf("Authorization of each request = %q, want the configured header on all", auth)
	}
}

func TestTwoServers(t *testing.T) {
	a, b := newToolbox(), newToolbox()
	c := dial(t, []mcpclient.Server{
		{Name: "first", URL: serveStreamable(t, a), AllowedTools: []string{"echo"}},
		{Name: "second", URL: serveStreamable(t, b), AllowedTools: []string{"add"}},
	}, mcpclient.Options{})
	if got := toolNames(c.Tools()); !slices.Equal(got, []string{"first/echo", "second/add"}) {
		t.Fatalf("tools = %v, want servers in the order given", got)
	}
	call(t, c, "add", `{"a":1,"b":2}`)
	if a.count("add") != 0 || b.count("add") != 1 {
		t.Errorf("add ran %d times on first, %d on second; want it on second only", a.count("add"), b.count("add"))
	}
}

func TestDialFails(t *testing.T) {
	up := serveStreamable(t, newToolbox())
	for _, tc := range []struct {
		name    string
		servers []mcpclient.Server
		opts    mcpclient.Options
		want    []string
	}{
		{"server down", []mcpclient.Server{{Name: "up", URL: up}, {Name: "gone", URL: downURL(t)}}, mcpclient.Options{},
			[]string{`server "gone"`, "connect"}},
		{"tool name clash", []mcpclient.Server{{Name: "one", URL: up}, {Name: "two", URL: serveStreamable(t, newToolbox()), AllowedTools: []string{"add"}}}, mcpclient.Options{},
			[]string{`server "two"`, `tool "add" is also offered by server "one"`}},
		{"allowed tool missing", []mcpclient.Server{{Name: "typo", URL: up, AllowedTools: []string{"add", "ad"}}}, mcpclient.Options{},
			[]string{`server "typo"`, "allowed tools not offered by the server: ad"}},
		{"stdio refused", []mcpclient.Server{{Name: "local", Transport: mcpclient.Stdio, Command: "mcp-server-fs /tmp"}}, mcpclient.Options{},
			[]string{`server "local"`, "--allow-mcp-commands"}},
		{"unknown transport", []mcpclient.Server{{Name: "ws", URL: up, Transport: "websocket"}}, mcpclient.Options{},
			[]string{`server "ws"`, `unknown transport "websocket"`}},
		{"not a URL", []mcpclient.Server{{Name: "bad", URL: "localhost:8080"}}, mcpclient.Options{},
			[]string{`server "bad"`, "not an http(s) URL"}},
		{"same name twice", []mcpclient.Server{{Name: "x", URL: up}, {Name: "x", URL: up}}, mcpclient.Options{},
			[]string{`two servers are named "x"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := mcpclient.Dial(context.Background(), tc.servers, tc.opts)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestStdioServer(t *testing.T) {
	server := mcpclient.Server{Name: "local", Transport: mcpclient.Stdio, Command: fmt.Sprintf("'%s' %s", os.Args[0], stdioServerArg), AllowedTools: []string{"add"}}
	c := dial(t, []mcpclient.Server{server}, mcpclient.Options{AllowCommands: true})
	if res := call(t, c, "add", `{"a":3,"b":4}`); res.Text != `{"sum":7}` {
		t.Errorf("add over stdio = %+v", res)
	}
}

func TestCallOnBrokenSessionIsAnError(t *testing.T) {
	b := newToolbox()
	srv := newTestServer(b)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	c := dial(t, []mcpclient.Server{{Name: "flaky", URL: ts.URL}}, mcpclient.Options{})
	ts.Close()

	res, err := c.Call(context.Background(), "add", json.RawMessage(`{"a":1,"b":2}`))
	if err == nil || !strings.Contains(err.Error(), `server "flaky"`) {
		t.Errorf("Call on a server that went away = %+v, %v; want an error naming it", res, err)
	}
}
