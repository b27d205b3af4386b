// Package mcptest is an MCP server for tests of agents: the official SDK's
// server on streamable HTTP (httptest), with a few tools that behave like
// real ones and a few that misbehave on purpose.
//
//	search {query}      → "3 results for <query>: …"
//	fetch {url}         → the page's text
//	add {a, b}          → {"sum": a+b}
//	fail {}             → a tool error ("no such city: Atlantis")
//	hang {}             → never answers (until the call's timeout)
//	big {}              → 40 KB of text (more than a result may keep)
//	slow {}             → "ok" after 30 ms (to see how many calls overlap)
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a running test MCP server.
type Server struct {
	// URL is the server's streamable HTTP endpoint.
	URL string

	calls    sync.Map // tool name → *atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64
	quit     chan struct{}
}

type searchIn struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

type fetchIn struct {
	URL string `json:"url" jsonschema:"the page to read"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type empty struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Start serves the test tools until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{quit: make(chan struct{})}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcptest"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "Searches the docs"},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			defer s.enter("search")()
			return text(fmt.Sprintf("3 results for %s: /docs/a, /docs/b, /docs/c", in.Query)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fetch", Description: "Reads a page of the docs"},
		func(_ context.Context, _ *mcp.CallToolRequest, in fetchIn) (*mcp.CallToolResult, any, error) {
			defer s.enter("fetch")()
			return text("Page " + in.URL + ": the answer is 42."), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Adds two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			defer s.enter("add")()
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			defer s.enter("fail")()
			return nil, nil, errors.New("no such city: Atlantis")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Never answers"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			defer s.enter("hang")()
			select {
			case <-ctx.Done():
			case <-s.quit:
			}
			return nil, nil, errors.New("stopped")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Answers a lot of text"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			defer s.enter("big")()
			return text(strings.Repeat("0123456789", 4000)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "Answers after a while"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			defer s.enter("slow")()
			time.Sleep(30 * time.Millisecond)
			return text("ok"), nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(s.quit) }) // runs first: hanging tools return
	s.URL = ts.URL
	return s
}

// enter counts a call and tracks how many run at once; the result ends it.
func (s *Server) enter(name string) (done func()) {
	n, _ := s.calls.LoadOrStore(name, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	cur := s.inFlight.Add(1)
	for p := s.peak.Load(); cur > p && !s.peak.CompareAndSwap(p, cur); p = s.peak.Load() {
	}
	return func() { s.inFlight.Add(-1) }
}

// Count is how many times a tool was called.
func (s *Server) Count(name string) int {
	n, ok := s.calls.Load(name)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int64).Load())
}

// InFlight is how many calls are running now.
func (s *Server) InFlight() int { return int(s.inFlight.Load()) }

// Peak is the most calls that ran at once.
func (s *Server) Peak() int { return int(s.peak.Load()) }
