// Package mcpclient is Tribunal's client of MCP servers, the tools of an
// agent: it connects to every server of an agent once per run group, lists
// the tools the agent may call, and runs each tool call the model makes,
// turning whatever happens (a tool error, a tool the agent may not call,
// arguments that are not a JSON object, a tool that hangs) into a Result the
// model can read. Only a broken session is an error, so the engine can tell
// "the tool failed, tell the model" from "the server went away, retry".
//
// It is built on the official SDK, github.com/modelcontextprotocol/go-sdk,
// and speaks streamable HTTP, SSE and (when the operator allows commands)
// stdio.
package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// The transports a server may use.
const (
	StreamableHTTP = "streamable_http"
	SSE            = "sse"
	Stdio          = "stdio"
)

// Defaults of Server and Options.
const (
	DefaultConcurrency    = 4
	DefaultToolTimeout    = 30 * time.Second
	DefaultConnectTimeout = 15 * time.Second
	DefaultMaxOutput      = 16 << 10
)

// Server is one MCP server of an agent, as configured.
type Server struct {
	Name         string
	URL          string   // streamable_http and sse
	Transport    string   // "streamable_http" (default), "sse", "stdio"
	Command      string   // stdio only (argv split by shell-like rules, no shell)
	Headers      []Header // sent on every HTTP request to the server (secrets already opened)
	AllowedTools []string // empty: all tools
	Concurrency  int      // calls at once on this server (default 4)
}

// Header is one HTTP header sent to a server.
type Header struct{ Key, Value string }

// Options are what all servers of a Client share.
type Options struct {
	HTTPClient     *http.Client  // the egress-checked client to use (nil: a default with timeouts)
	ToolTimeout    time.Duration // per tools/call (default 30s)
	ConnectTimeout time.Duration // per server, to connect and list its tools (default 15s)
	AllowCommands  bool          // stdio servers refused unless true
	MaxOutput      int           // bytes of tool output kept (default 16 KiB), then a truncation note
}

func (o Options) withDefaults() Options {
	o.ToolTimeout = cmp.Or(o.ToolTimeout, DefaultToolTimeout)
	o.ConnectTimeout = cmp.Or(o.ConnectTimeout, DefaultConnectTimeout)
	o.MaxOutput = cmp.Or(o.MaxOutput, DefaultMaxOutput)
	if o.HTTPClient == nil {
		o.HTTPClient = defaultHTTPClient
	}
	return o
}

// Tool is a tool an agent may call: the server it lives on and its schema.
type Tool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Result is one tool call's outcome as the model will see it.
type Result struct {
	Text      string        // text content joined; structured content as JSON
	IsError   bool          // the tool said it failed, or the call was refused/timed out (Text says why)
	Truncated bool          // Text was cut to Options.MaxOutput (a note says how much)
	Duration  time.Duration // the tools/call round trip, not the wait for a free slot
}

// Client holds sessions to all of an agent's servers (one per run group).
// It is safe for concurrent use.
type Client struct {
	opts    Options
	servers []*session
	tools   []Tool
	byName  map[string]*session
}

// session is one connected server and its share of the calls.
type session struct {
	name   string
	cs     *mcp.ClientSession
	cancel context.CancelFunc // ends the session's context (an SSE stream)
	slots  chan struct{}      // one token per call in flight
	tools  []Tool
}

// Dial connects to every server at once and lists their tools. It fails,
// naming the server, when one cannot be reached, offers none of a tool it
// was told to allow, or offers a tool another server offers too (the model
// calls tools by name alone).
func Dial(ctx context.Context, servers []Server, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	if err := checkNames(servers); err != nil {
		return nil, err
	}
	sessions := make([]*session, len(servers))
	g, gctx := errgroup.WithContext(ctx)
	for i, s := range servers {
		g.Go(func() error {
			sess, err := open(gctx, s, opts)
			if err != nil {
				return fmt.Errorf("mcpclient: server %q: %w", s.Name, err)
			}
			sessions[i] = sess
			return nil
		})
	}
	c := &Client{opts: opts, servers: sessions, byName: map[string]*session{}}
	if err := g.Wait(); err != nil {
		c.Close()
		return nil, err
	}
	for _, sess := range sessions {
		for _, t := range sess.tools {
			if other, ok := c.byName[t.Name]; ok {
				c.Close()
				return nil, fmt.Errorf("mcpclient: server %q: %s", sess.name, clash(t.Name, other.name))
			}
			c.byName[t.Name] = sess
			c.tools = append(c.tools, t)
		}
	}
	return c, nil
}

func clash(tool, server string) string {
	return fmt.Sprintf("tool %q is also offered by server %q (tool names must be unique across an agent's servers: narrow allowed tools)", tool, server)
}

// checkNames refuses servers without a name or with the same name, which
// results and trajectories could not tell apart.
func checkNames(servers []Server) error {
	seen := map[string]bool{}
	for i, s := range servers {
		name := strings.TrimSpace(s.Name)
		if name == "" {
			return fmt.Errorf("mcpclient: server %d has no name", i+1)
		}
		if seen[name] {
			return fmt.Errorf("mcpclient: two servers are named %q", name)
		}
		seen[name] = true
	}
	return nil
}

// Tools lists the tools the agent may call: servers in the order they were
// configured, each server's tools by name.
func (c *Client) Tools() []Tool { return slices.Clone(c.tools) }

// Call runs one tool call, waiting for a free slot on its server. Its error
// is only for a broken session (the server unreachable or gone: Dial again)
// or ctx ended; anything the model should hear about — a tool error, a tool
// not offered, arguments that are not a JSON object, a timeout, an error
// the server answered — is a Result with IsError.
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	sess, ok := c.byName[name]
	if !ok {
		return refused(fmt.Sprintf("tool %s is not available", name)), nil
	}
	args, problem := objectArgs(args)
	if problem != "" {
		return refused(fmt.Sprintf("tool %s: %s", name, problem)), nil
	}
	select {
	case sess.slots <- struct{}{}:
		defer func() { <-sess.slots }()
	case <-ctx.Done():
		return Result{}, fmt.Errorf("mcpclient: call %s on server %q: %w", name, sess.name, ctx.Err())
	}

	callCtx, cancel := context.WithTimeout(ctx, c.opts.ToolTimeout)
	defer cancel()
	start := time.Now()
	res, err := sess.cs.CallTool(callCtx, &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		out := resultOf(res, c.opts.MaxOutput)
		out.Duration = took
		return out, nil
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("mcpclient: call %s on server %q: %w", name, sess.name, ctx.Err())
	case callCtx.Err() != nil:
		return Result{Text: fmt.Sprintf("tool %s timed out after %s", name, c.opts.ToolTimeout), IsError: true, Duration: took}, nil
	case errors.As(err, &rpcErr) && rpcErr.Code != codeRejected:
		// The server answered with a protocol error (unknown tool, invalid
		// params): the session is fine and the model may do better.
		return Result{Text: fmt.Sprintf("tool %s failed: %s", name, rpcErr.Message), IsError: true, Duration: took}, nil
	}
	return Result{}, fmt.Errorf("mcpclient: call %s on server %q: %w", name, sess.name, err)
}

// codeRejected is the SDK's (internal) jsonrpc2.ErrRejected: the request
// never got an answer (the server is unreachable, or answered 5xx or 429),
// which is no news for the model but a reason for the caller to retry.
const codeRejected = -32005

func refused(why string) Result { return Result{Text: why, IsError: true} }

// objectArgs checks that args are a JSON object; none at all means no
// arguments, as models send for tools without parameters.
func objectArgs(args json.RawMessage) (json.RawMessage, string) {
	trimmed := strings.TrimSpace(string(args))
	if trimmed == "" {
		return json.RawMessage("{}"), ""
	}
	var v any
	if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
		return nil, "arguments are not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Sprintf("arguments must be a JSON object, not %s", jsonKind(v))
	}
	return json.RawMessage(trimmed), ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "an object"
}

// Close ends every session; stdio servers' processes are stopped.
func (c *Client) Close() error {
	var errs []error
	for _, sess := range c.servers {
		if sess == nil {
			continue
		}
		// A server already gone cannot be told the session ends: no news.
		var urlErr *url.Error
		if err := sess.cs.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.As(err, &urlErr) {
			errs = append(errs, fmt.Errorf("mcpclient: close server %q: %w", sess.name, err))
		}
		sess.cancel()
	}
	return errors.Join(errs...)
}
