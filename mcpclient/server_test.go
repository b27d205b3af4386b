package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServerArg makes the test binary an MCP server on stdin/stdout, so a
// stdio server can be tested without building anything.
const stdioServerArg = "mcpclient-stdio-server"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == stdioServerArg {
		srv := newTestServer(newToolbox())
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// toolbox is what the tools of a test server record and wait on.
type toolbox struct {
	calls     sync.Map // tool name → *atomic.Int32
	inFlight  atomic.Int32
	peak      atomic.Int32
	entered   chan struct{} // "hold" sends here on entry (when not nil)
	release   chan struct{} // "hold" returns on a receive from here
	bigOutput string        // what "big" answers

	mu   sync.Mutex
	auth []string // the Authorization header of every HTTP request

	quitOnce sync.Once
	quit     chan struct{} // ends "hang" and "hold" when the test is over
}

func newToolbox() *toolbox { return &toolbox{quit: make(chan struct{})} }

// stop ends the tools still running, so the HTTP servers can close.
func (b *toolbox) stop() { b.quitOnce.Do(func() { close(b.quit) }) }

func (b *toolbox) count(name string) int {
	n, ok := b.calls.Load(name)
	if !ok {
		return 0
	}
	return int(n.(*atomic.Int32).Load())
}

func (b *toolbox) called(name string) {
	n, _ := b.calls.LoadOrStore(name, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

type addIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" jsonschema:"the second number"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type echoIn struct {
	Text string `json:"text"`
}

type empty struct{}

func text(s ...string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	for _, t := range s {
		res.Content = append(res.Content, &mcp.TextContent{Text: t})
	}
	return res
}

// newTestServer is an MCP server with a tool for each behaviour under test.
func newTestServer(b *toolbox) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Adds two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			b.called("add")
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Says the text back, twice"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			b.called("echo")
			return text(in.Text, strings.ToUpper(in.Text)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			b.called("fail")
			return nil, nil, errors.New("no such city: Atlantis")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Never answers"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			b.called("hang")
			select {
			case <-ctx.Done():
			case <-b.quit:
			}
			return nil, nil, errors.New("stopped")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", Description: "Answers when the test lets it"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			b.called("hold")
			n := b.inFlight.Add(1)
			defer b.inFlight.Add(-1)
			for p := b.peak.Load(); n > p && !b.peak.CompareAndSwap(p, n); p = b.peak.Load() {
			}
			if b.entered != nil {
				b.entered <- struct{}{}
			}
			select {
			case <-b.release:
			case <-ctx.Done():
			case <-b.quit:
			}
			return text("released"), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says the Authorization header it got"},
		func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			b.called("whoami")
			got := "(none)"
			if req.Extra != nil && req.Extra.Header.Get("Authorization") != "" {
				got = req.Extra.Header.Get("Authorization")
			}
			return text(got), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Answers a lot of text"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			b.called("big")
			return text(b.bigOutput), nil, nil
		})
	// A low-level handler's error is a JSON-RPC error, not a tool result.
	srv.AddTool(&mcp.Tool{Name: "crash", Description: "Fails at the protocol level", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b.called("crash")
			return nil, errors.New("database is locked")
		})
	return srv
}

// recordAuth notes the Authorization header of every request to h.
func (b *toolbox) recordAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.auth = append(b.auth, r.Header.Get("Authorization"))
		b.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (b *toolbox) authSeen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.auth)
}

// serveStreamable serves a test server over streamable HTTP.
func serveStreamable(t testing.TB, b *toolbox) string {
	t.Helper()
	srv := newTestServer(b)
	ts := httptest.NewServer(b.recordAuth(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(ts.Close)
	t.Cleanup(b.stop) // runs first
	return ts.URL
}

// serveSSE serves a test server over the older SSE transport.
func serveSSE(t testing.TB, b *toolbox) string {
	t.Helper()
	srv := newTestServer(b)
	ts := httptest.NewServer(b.recordAuth(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(ts.Close)
	t.Cleanup(b.stop) // runs first
	return ts.URL
}

// downURL is the address of a server that has stopped.
func downURL(t testing.TB) string {
	t.Helper()
	ts := httptest.NewServer(http.NotFoundHandler())
	ts.Close()
	return ts.URL
}
