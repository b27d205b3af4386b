package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"tribunal/llm"
	"tribunal/mcpclient"
	"tribunal/store"
)

// agentConn is this process's connection to an agent target's tools: one
// MCP session per server (mcpclient), the tool list the run froze, and the
// config with its secrets open. Items of the target share it; it closes
// when its run is no longer worked on and no call uses it.
type agentConn struct {
	runID    int64
	cfg      store.AgentInput
	mcp      *mcpclient.Client // nil without servers (or for the http executor)
	tools    []llm.Tool
	frozen   []mcpclient.Tool  // the tools as the run records them
	serverOf map[string]string // tool name → server name

	mu    sync.Mutex
	users int
	stale bool // its run left this process, or the session broke: close when unused
}

// release ends one use, closing the connection if it went stale meanwhile.
func (c *agentConn) release() {
	c.mu.Lock()
	c.users--
	closeNow := c.stale && c.users == 0
	c.mu.Unlock()
	if closeNow {
		c.close()
	}
}

// retire marks the connection stale; it closes now if unused.
func (c *agentConn) retire() {
	c.mu.Lock()
	c.stale = true
	closeNow := c.users == 0
	c.mu.Unlock()
	if closeNow {
		c.close()
	}
}

func (c *agentConn) close() {
	if c.mcp != nil {
		c.mcp.Close()
	}
}

// mcpOptions are how the engine dials an agent's servers: through the
// egress-checked client providers use, with the agent's tool timeout.
func (e *Engine) mcpOptions(cfg *store.AgentInput) mcpclient.Options {
	return mcpclient.Options{HTTPClient: e.httpClient, ToolTimeout: time.Duration(cfg.ToolTimeoutSeconds) * time.Second,
		AllowCommands: e.store.AllowsMCPCommands()}
}

// dialAgent opens a fresh connection to a target's tools. Without frozen
// tools (the warm-up) it uses those the servers offer now.
func (e *Engine) dialAgent(ctx context.Context, tg *store.RunTarget) (*agentConn, error) {
	if tg.Agent == nil {
		return nil, fmt.Errorf("target %d is not an agent", tg.ID)
	}
	cfg := *tg.Agent
	if err := e.store.OpenAgentSecrets(&cfg); err != nil {
		return nil, err
	}
	c := &agentConn{runID: tg.RunID, cfg: cfg, serverOf: map[string]string{}}
	if cfg.Executor == store.ExecutorHTTP || len(cfg.MCPServers) == 0 {
		return c, nil
	}
	servers := make([]mcpclient.Server, len(cfg.MCPServers))
	for i, s := range cfg.MCPServers {
		servers[i] = s.ClientServer()
	}
	client, err := mcpclient.Dial(ctx, servers, e.mcpOptions(&cfg))
	if err != nil {
		return nil, fmt.Errorf("MCP: %w", err)
	}
	c.mcp = client
	tools := tg.Tools
	if tools == nil {
		tools = client.Tools()
	}
	c.frozen = tools
	for _, t := range tools {
		c.tools = append(c.tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		c.serverOf[t.Name] = t.Server
	}
	return c, nil
}

// agent returns this process's connection to a target's tools, dialling
// it the first time (outside the lock: a slow server holds up only its own
// items); the caller releases it.
func (e *Engine) agent(ctx context.Context, tg *store.RunTarget) (*agentConn, error) {
	if c := e.cachedAgent(tg.ID); c != nil {
		return c, nil
	}
	fresh := tg
	if tg.Tools == nil {
		// The target was read before its warm-up froze the tools (runState).
		var err error
		if fresh, err = e.store.RunTarget(ctx, tg.ID); err != nil {
			return nil, err
		}
	}
	c, err := e.dialAgent(ctx, fresh)
	if err != nil {
		return nil, err
	}
	if other := e.cachedAgent(tg.ID); other != nil {
		c.close() // another item dialled first
		return other, nil
	}
	c.users = 1
	e.keepAgent(tg.ID, c)
	return c, nil
}

// cachedAgent takes a use of the target's live connection, if there is one.
func (e *Engine) cachedAgent(targetID int64) *agentConn {
	e.agentsMu.Lock()
	defer e.agentsMu.Unlock()
	c := e.agents[targetID]
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale {
		return nil
	}
	c.users++
	return c
}

// keepAgent caches a connection the warm-up dialled, for the items after it.
func (e *Engine) keepAgent(targetID int64, c *agentConn) {
	e.agentsMu.Lock()
	old := e.agents[targetID]
	e.agents[targetID] = c
	e.agentsMu.Unlock()
	if old != nil {
		old.retire()
	}
}

// dropAgent retires a target's connection (its session broke), so the next
// item dials again.
func (e *Engine) dropAgent(targetID int64, c *agentConn) {
	e.agentsMu.Lock()
	if e.agents[targetID] == c {
		delete(e.agents, targetID)
	}
	e.agentsMu.Unlock()
	c.retire()
}

// retireAgents closes the connections of runs this process no longer works
// on (live nil: all of them, at shutdown).
func (e *Engine) retireAgents(live map[int64]bool) {
	e.agentsMu.Lock()
	var gone []*agentConn
	for id, c := range e.agents {
		if live == nil || !live[c.runID] {
			gone = append(gone, c)
			delete(e.agents, id)
		}
	}
	e.agentsMu.Unlock()
	for _, c := range gone {
		c.retire()
	}
}

// callTool runs one tool call, holding one of its server's call slots
// across processes when several may share the database (PostgreSQL); on
// SQLite the one process's own limit is the limit.
func (e *Engine) callTool(ctx context.Context, c *agentConn, name, args string) (mcpclient.Result, error) {
	if c.mcp == nil {
		return mcpclient.Result{Text: fmt.Sprintf("tool %s is not available", name), IsError: true}, nil
	}
	server, ok := c.serverOf[name]
	if ok && e.store.Dialect() == store.Postgres {
		release, err := e.callSlot(ctx, c, server)
		if err != nil {
			return mcpclient.Result{}, err
		}
		defer release()
	}
	return c.mcp.Call(ctx, name, []byte(args))
}

// callSlotPoll is how often a call waiting for a busy server looks again.
const callSlotPoll = 20 * time.Millisecond

// callSlot waits for a free call slot of an MCP server (named by its URL or
// command, so agents sharing a server share its limit). The slot is leased
// like an item and renewed while the call runs, so a dead worker's slots
// free up as soon as its items do.
func (e *Engine) callSlot(ctx context.Context, c *agentConn, server string) (release func(), err error) {
	var s store.MCPServer
	for _, x := range c.cfg.MCPServers {
		if x.Name == server {
			s = x
		}
	}
	key := "mcp:" + strings.TrimSpace(s.URL+s.Command)
	holder := fmt.Sprintf("%s/%d", e.cfg.WorkerID, e.callSeq.Add(1))
	for {
		slot, ok, err := e.store.AcquireCallSlot(ctx, key, s.Concurrency, holder, e.cfg.Lease)
		if err != nil {
			return nil, err
		}
		if ok {
			stop := e.renew(ctx, func(ctx context.Context) error {
				return e.store.RenewCallSlot(ctx, key, slot, holder, e.cfg.Lease)
			})
			return func() {
				stop()
				if err := e.store.ReleaseCallSlot(context.WithoutCancel(ctx), key, slot, holder); err != nil {
					e.log.WarnContext(ctx, "release MCP call slot", "server", server, "err", err)
				}
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(jitter(callSlotPoll)):
		}
	}
}
