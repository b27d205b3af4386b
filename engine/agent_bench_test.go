package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"tribunal/llm"
	"tribunal/llm/llmtest"
	"tribunal/mcpclient"
	"tribunal/mcpclient/mcptest"
	"tribunal/store"
)

// threeTools is an agent's plan in the benchmark: search, fetch and add,
// one per turn, then the answer: 4 model calls and 3 tool calls per item.
var threeTools = []llmtest.ToolCall{
	llmtest.Call("c1", "search", `{"query":"answer"}`),
	llmtest.Call("c2", "fetch", `{"url":"/docs/a"}`),
	llmtest.Call("c3", "add", `{"a":40,"b":2}`),
}

// BenchmarkAgentItems: 1,000 agent items × 3 tool calls at concurrency 16,
// on a zero-latency fake model and a real (in-process) MCP server: items/s,
// beside the same 7,000 calls made directly through the clients on 16
// goroutines, and the engine's cost per step — the run's extra time over
// the direct calls divided by the 7,000 steps, which on a small machine at
// this concurrency is CPU time (so it includes the fakes' share of the cores).
func BenchmarkAgentItems(b *testing.B) {
	benchAgent(b, 1000, 16)
}

// BenchmarkAgentLoopOverhead: the same items one at a time (concurrency 1),
// where nothing competes for the cores: the latency the loop adds to each
// step over the bare calls, including the item's share of its claim and
// result write.
func BenchmarkAgentLoopOverhead(b *testing.B) {
	benchAgent(b, 200, 1)
}

func benchAgent(b *testing.B, tasks, conc int) {
	const steps = 7 // 4 model calls and 3 tool calls per item
	eachDB(b, func(b *testing.B, st *store.Store) {
		ctx := context.Background()
		srv := mcptest.Start(b)
		script := func(r llmtest.ChatRequest) llmtest.Reply {
			if len(r.Tools) == 0 || r.Turn() > len(threeTools) {
				return llmtest.Reply{Content: "The answer is 42."}
			}
			return llmtest.Reply{ToolCalls: threeTools[r.Turn()-1 : r.Turn()]}
		}
		env := newBenchEnvScript(b, st, tasks, conc, 1, 64, script)
		servers := []store.MCPServer{{Name: "docs", URL: srv.URL, Concurrency: conc}}
		a, err := st.CreateAgent(ctx, store.AgentInput{Name: "bench agent", ProviderID: &env.provider.ID, Model: "m", MCPServers: servers})
		if err != nil {
			b.Fatal(err)
		}
		var items int64
		var took, direct time.Duration
		for b.Loop() {
			n, d := env.runTargets(b, []store.ModelRef{{AgentID: a.ID}}, []string{"check_contains"})
			items, took = items+n, took+d
			direct += directCalls(b, env.provider.BaseURL, srv.URL, tasks, conc)
		}
		b.ReportMetric(float64(items)/took.Seconds(), "items/s")
		b.ReportMetric(float64(items)/direct.Seconds(), "items/s-direct")
		// Per step of one item's slot: what the loop adds to each call's latency
		// (at concurrency 1), or its share of the machine (at 16, on a small one).
		perStep := float64((took - direct).Microseconds()) / 1000 / float64(items*steps)
		if conc == 1 {
			b.ReportMetric(perStep, "ms/step-overhead")
		} else {
			b.ReportMetric(perStep, "ms/step-cost")
		}
	})
}

// directCalls makes each item's 7 calls straight through the clients, items
// spread over conc goroutines, and says how long all of it took.
func directCalls(b *testing.B, baseURL, mcpURL string, tasks, conc int) time.Duration {
	b.Helper()
	ctx := context.Background()
	client := llm.New(llm.Endpoint{BaseURL: baseURL, InferenceEndpoint: "/v1/chat/completions"}, nil)
	tools, err := mcpclient.Dial(ctx, []mcpclient.Server{{Name: "docs", URL: mcpURL, Concurrency: conc}}, mcpclient.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tools.Close()
	var offered []llm.Tool
	for _, t := range tools.Tools() {
		offered = append(offered, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	start := time.Now()
	var wg sync.WaitGroup
	for g := range conc {
		wg.Go(func() {
			for i := g; i < tasks; i += conc {
				req := llm.Request{Model: "m", Tools: offered, Messages: []llm.Message{{Role: "user", Content: "What is 1+1?"}}}
				for {
					resp, err := client.Chat(ctx, req)
					if err != nil {
						b.Error(err)
						return
					}
					req.Messages = append(req.Messages, llm.Message{Role: "assistant", ToolCalls: resp.ToolCalls})
					if len(resp.ToolCalls) == 0 {
						break
					}
					res, err := tools.Call(ctx, resp.ToolCalls[0].Name, json.RawMessage(resp.ToolCalls[0].Arguments))
					if err != nil {
						b.Error(err)
						return
					}
					req.Messages = append(req.Messages, llm.Message{Role: "tool", ToolCallID: resp.ToolCalls[0].ID, Content: res.Text})
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
