package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/mcpclient/mcptest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestAgentToolFaultsGoBackToTheModel: a failing tool, a tool the agent may
// not call, arguments that are not JSON, a tool that hangs past its timeout
// and output over 16 KB all reach the model as error (or truncated) results
// and are counted, while the item completes; an agent that never stops
// calling tools fails with its trajectory kept.
func TestAgentToolFaultsGoBackToTheModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		mcp := mcptest.Start(t)
		byTask := map[string][]llmtest.ToolCall{
			"What is 0+0?": {llmtest.Call("a", "fail", `{}`)},
			"What is 1+1?": {llmtest.Call("b", "delete_everything", `{}`)},
			"What is 2+2?": {llmtest.Call("c", "search", `{"query": "unterminated`)},
			"What is 3+3?": {llmtest.Call("d", "hang", `{}`)},
			"What is 4+4?": {llmtest.Call("e", "big", ``)},
			"What is 5+5?": {llmtest.Call("f", "search", `{"query":"1"}`), llmtest.Call("g", "search", `{"query":"2"}`),
				llmtest.Call("h", "search", `{"query":"3"}`), llmtest.Call("i", "search", `{"query":"4"}`)},
		}
		b := setup(t, st, 6, agentScript(func(r llmtest.ChatRequest) []llmtest.ToolCall { return byTask[r.Question()] }, "Done."))
		run := b.startAgentRun(t, store.AgentInput{MaxTurns: 3, ToolTimeoutSeconds: 1,
			MCPServers: docsServer(mcp.URL, "search", "fail", "hang", "big")})
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		wantResult := map[string]string{
			"What is 0+0?": "no such city: Atlantis",
			"What is 1+1?": "tool delete_everything is not available",
			"What is 2+2?": "arguments are not valid JSON",
			"What is 3+3?": "timed out after 1s",
			"What is 4+4?": "truncated",
		}
		for _, w := range workItems(t, st, run.ID) {
			calls := trajectoryOf(t, w.Item)
			q := w.Task.Question
			if q == "What is 5+5?" {
				if w.Status != store.ItemFailed || w.Error != "no final answer after 3 turns" || len(calls) != 2 || calls[1].Arguments != `{"query":"2"}` {
					t.Errorf("endless agent: %s %q, calls %+v", w.Status, w.Error, calls)
				}
				continue
			}
			if w.Status != store.ItemCompleted || len(calls) != 1 {
				t.Errorf("%s: %s %q with %d calls, want completed after 1", q, w.Status, w.Error, len(calls))
				continue
			}
			c := calls[0]
			if !strings.Contains(c.Result, wantResult[q]) || c.IsError != (q != "What is 4+4?") {
				t.Errorf("%s: call %+v, want a result saying %q", q, c, wantResult[q])
			}
			if q == "What is 2+2?" && c.Arguments != `{"query": "unterminated` {
				t.Errorf("broken arguments stored as %q, want as sent", c.Arguments)
			}
			if q == "What is 4+4?" && len(c.Result) > 17<<10 {
				t.Errorf("a 40 KB result kept %d bytes", len(c.Result))
			}
		}
		if mcp.Count("delete_everything") != 0 || mcp.Count("search") != 2 {
			t.Errorf("server calls: search %d (want 2: the broken one never reaches it)", mcp.Count("search"))
		}
	})
}

// TestAgentServerDownFailsWarmup: an MCP server that cannot be reached fails
// the group's warm-up after its retries, and every item with the reason.
func TestAgentServerDownFailsWarmup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		b := setup(t, st, 2, nil)
		run := b.startAgentRun(t, store.AgentInput{MCPServers: docsServer(down.URL)})
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFailed {
			t.Fatalf("run ended %s, want FAILED", final.Status)
		}
		for _, v := range items(t, st, run.ID) {
			if v.Status != store.ItemFailed || !strings.Contains(v.Error, "warm-up failed after 3 attempt(s)") || !strings.Contains(v.Error, `server "docs"`) {
				t.Errorf("item %d: %s %q", v.ID, v.Status, v.Error)
			}
		}
		for _, c := range b.fake.Calls() {
			if !c.IsJudge() {
				t.Fatalf("the model was called though its tools are down: %q", c.Last())
			}
		}
	})
}

// TestHTTPExecutor: the user's own agent gets each question with its turns
// and metadata, and what it answers — output, tool calls, usage, cost — is
// stored as the item's; a reply without output is retried, then fails.
func TestHTTPExecutor(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		var seen []map[string]any
		agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			raw, _ := io.ReadAll(r.Body)
			json.Unmarshal(raw, &body)
			mu.Lock()
			seen = append(seen, body)
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer agent-key" {
				http.Error(w, "who are you", http.StatusUnauthorized)
				return
			}
			input, _ := body["input"].(string)
			if input == "What is 1+1?" {
				w.Write([]byte(`{"answer": "forgot the field"}`))
				return
			}
			w.Write([]byte(`{"output": "It is ` + input + `", "tool_calls": [{"name": "calc", "arguments": "{\"x\": 1}", "result": "2"}],
				"usage": {"input_tokens": 10, "output_tokens": 5}, "cost_usd": 0.25}`))
		}))
		t.Cleanup(agent.Close)
		b := setup(t, st, 2, nil)
		run := b.startAgentRun(t, store.AgentInput{Executor: store.ExecutorHTTP,
			HTTP: &store.AgentHTTP{URL: agent.URL, Headers: []store.Header{{Key: "Authorization", Value: "Bearer agent-key", IsSecret: true}}}})
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		for _, w := range workItems(t, st, run.ID) {
			if w.Task.Question == "What is 1+1?" {
				if w.Status != store.ItemFailed || !strings.Contains(w.Error, `no "output"`) {
					t.Errorf("reply without output: %s %q", w.Status, w.Error)
				}
				continue
			}
			calls := trajectoryOf(t, w.Item)
			if w.Status != store.ItemCompleted || *w.Response != "It is What is 0+0?" || len(calls) != 1 || calls[0].Name != "calc" ||
				calls[0].Arguments != `{"x":1}` || calls[0].Result != "2" || *w.CostUSD != 0.25 || *w.PromptTokens != 10 || *w.CompletionTokens != 5 {
				t.Errorf("item: %s %v calls %+v cost %v tokens %v/%v", w.Status, *w.Response, calls, *w.CostUSD, *w.PromptTokens, *w.CompletionTokens)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		var asked bool
		for _, body := range seen {
			md, _ := body["metadata"].(map[string]any)
			if body["input"] == "What is 0+0?" && md["task_key"] == "t000" && md["run_id"] != nil {
				turns, _ := body["turns"].([]any)
				asked = len(turns) == 1 && turns[0] == "What is 0+0?"
			}
		}
		if !asked {
			t.Errorf("the agent never got t000 with its turns and metadata: %v", seen)
		}
	})
}

// TestMCPConcurrencyAcrossEngines: two engines (two worker processes) on one
// PostgreSQL share an MCP server's concurrency of 2, though the provider
// would take 8 calls at once. (SQLite has one process, whose own limit is
// the limit.)
func TestMCPConcurrencyAcrossEngines(t *testing.T) {
	st := storetest.Postgres(t)
	mcp := mcptest.Start(t)
	// Each engine alone would run 3 calls, its own limit of 2 of them on the server.
	cfg := testConfig()
	cfg.MaxInFlight = 3
	b := setupWith(t, st, 16, agentScript(func(llmtest.ChatRequest) []llmtest.ToolCall {
		return []llmtest.ToolCall{llmtest.Call("s", "slow", `{}`)}
	}, "ok"), cfg)
	ctx := context.Background()
	if _, err := st.UpdateProvider(ctx, b.provider.ID, store.ProviderInput{Name: "fake", BaseURL: b.fake.URL, Concurrency: 8, TimeoutSeconds: 5}); err != nil {
		t.Fatal(err)
	}
	second := engine.New(cfg, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { second.Run(runCtx) })
	defer func() { cancel(); wg.Wait() }()

	servers := docsServer(mcp.URL, "slow")
	servers[0].Concurrency = 2
	run := b.startAgentRun(t, store.AgentInput{MCPServers: servers})
	if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
		t.Fatalf("run %s: %s", final.Status, final.Error)
	}
	if n := mcp.Count("slow"); n != 16 {
		t.Errorf("slow was called %d times, want 16", n)
	}
	if p := mcp.Peak(); p != 2 {
		t.Errorf("the server had %d calls at once, want exactly its concurrency 2", p)
	}
}
