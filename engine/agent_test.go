package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/mcpclient/mcptest"
	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/trajectory"
)

// agentScript is a fake model that works like an agent: on its first turns
// it asks for the calls in plan (one per turn), then answers.
func agentScript(plan func(r llmtest.ChatRequest) []llmtest.ToolCall, answer string) func(llmtest.ChatRequest) llmtest.Reply {
	return func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() || len(r.Tools) == 0 {
			return llmtest.DefaultReply(r)
		}
		calls := plan(r)
		if r.Turn() <= len(calls) {
			return llmtest.Reply{ToolCalls: calls[r.Turn()-1 : r.Turn()], Reasoning: fmt.Sprintf("step %d", r.Turn())}
		}
		return llmtest.Reply{Content: answer, Reasoning: "done"}
	}
}

// startAgentRun saves an agent on the bundle's provider with one MCP server
// and starts a run of it.
func (b *bundle) startAgentRun(t *testing.T, in store.AgentInput, metrics ...string) *store.Run {
	t.Helper()
	ctx := context.Background()
	if in.Name == "" {
		in.Name = "docs agent"
	}
	in.ProviderID, in.Model = &b.provider.ID, "fake-small"
	a, err := b.st.CreateAgent(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	run, err := b.eng.StartRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"},
		CollectionIDs: []int64{b.coll.ID}, Targets: []store.ModelRef{{AgentID: a.ID}}, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func docsServer(url string, allowed ...string) []store.MCPServer {
	return []store.MCPServer{{Name: "docs", URL: url, AllowedTools: allowed}}
}

// workItems loads every item of a run whole (with its trajectory).
func workItems(t *testing.T, st *store.Store, runID int64) []*store.WorkItem {
	t.Helper()
	var out []*store.WorkItem
	for _, v := range items(t, st, runID) {
		w, err := st.ItemWork(context.Background(), v.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	return out
}

// compact is the arguments as stored: valid JSON is kept compacted.
func compact(t *testing.T, a trajectory.Args) trajectory.Args {
	b, err := a.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return trajectory.Args(b)
}

func trajectoryOf(t *testing.T, it store.Item) trajectory.Calls {
	t.Helper()
	if it.ToolCalls == nil {
		t.Fatalf("item %d has no trajectory", it.ID)
	}
	var calls trajectory.Calls
	if err := json.Unmarshal([]byte(*it.ToolCalls), &calls); err != nil {
		t.Fatal(err)
	}
	return calls
}

// TestAgentTrajectoryStoredExactly: a three-call trajectory through a real
// MCP server is stored call by call, the results go back to the model, the
// run freezes the tools it saw, and tokens add up over the four model calls.
func TestAgentTrajectoryStoredExactly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		mcp := mcptest.Start(t)
		plan := func(llmtest.ChatRequest) []llmtest.ToolCall {
			return []llmtest.ToolCall{
				llmtest.Call("c1", "search", `{"query":"answer"}`),
				llmtest.Call("c2", "fetch", `{"url": "/docs/a"}`),
				llmtest.Call("c3", "add", `{"a":40,"b":2}`),
			}
		}
		b := setup(t, st, 2, agentScript(plan, "The answer is 42."))
		run := b.startAgentRun(t, store.AgentInput{SystemPrompt: "Use the docs.", MCPServers: docsServer(mcp.URL, "search", "fetch", "add")})
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		tg, err := st.RunTarget(context.Background(), run.Targets[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var frozen []string
		for _, tool := range tg.Tools {
			frozen = append(frozen, tool.Server+"."+tool.Name)
		}
		if strings.Join(frozen, " ") != "docs.add docs.fetch docs.search" {
			t.Errorf("frozen tools = %v, want the three allowed", frozen)
		}
		want := trajectory.Calls{
			{Turn: 1, Server: "docs", Name: "search", Arguments: `{"query":"answer"}`, Result: "3 results for answer: /docs/a, /docs/b, /docs/c"},
			{Turn: 2, Server: "docs", Name: "fetch", Arguments: `{"url": "/docs/a"}`, Result: "Page /docs/a: the answer is 42."},
			{Turn: 3, Server: "docs", Name: "add", Arguments: `{"a":40,"b":2}`, Result: `{"sum":42}`},
		}
		for _, w := range workItems(t, st, run.ID) {
			if w.Status != store.ItemCompleted || w.Response == nil || *w.Response != "The answer is 42." {
				t.Fatalf("item %d: %s %v", w.ID, w.Status, w.Response)
			}
			got := trajectoryOf(t, w.Item)
			if len(got) != len(want) {
				t.Fatalf("item %d: %d calls, want 3: %+v", w.ID, len(got), got)
			}
			for i := range want {
				g := got[i]
				g.DurationMs = 0
				want[i].Arguments = compact(t, want[i].Arguments)
				if g != want[i] {
					t.Errorf("call %d = %+v, want %+v", i, g, want[i])
				}
			}
			if w.Turns == nil || *w.Turns != 4 {
				t.Errorf("turns = %v, want 4", w.Turns)
			}
			if w.Reasoning == nil || *w.Reasoning != "step 1\n\nstep 2\n\nstep 3\n\ndone" {
				t.Errorf("reasoning = %v", w.Reasoning)
			}
			if w.CompletionTokens == nil || *w.CompletionTokens != 4 { // "The answer is 42." is 4 words; tool-call replies count 0
				t.Errorf("completion tokens = %v, want the sum over the model calls", w.CompletionTokens)
			}
		}
		if n := mcp.Count("search") + mcp.Count("fetch") + mcp.Count("add"); n != 6 {
			t.Errorf("the MCP server ran %d calls, want 6", n)
		}
		// The model saw the tools as functions, its instructions, and each result.
		var last llmtest.ChatRequest
		for _, c := range b.fake.Calls() {
			if len(c.Tools) > 0 && c.Turn() == 4 {
				last = c
			}
		}
		if len(last.Tools) != 3 || last.Tools[0].Type != "function" || last.Messages[0].Content != "Use the docs." {
			t.Fatalf("last agent request: tools %+v, first message %+v", last.Tools, last.Messages[0])
		}
		judged := false
		for _, c := range b.fake.Calls() {
			if c.IsJudge() && strings.Contains(c.Last(), `search({"query":"answer"})`) && strings.Contains(c.Last(), `add({"a":40,"b":2})`) {
				judged = true
			}
		}
		if !judged {
			t.Error("no judge saw the trajectory")
		}
		results := last.ToolResults()
		if len(results) != 1 || results[0].ToolCallID != "c3" || results[0].Content != `{"sum":42}` {
			t.Errorf("tool results sent back = %+v", results)
		}
	})
}

// TestTrajectoryChecksInARun: the five trajectory checks, set on a task,
// score an agent's stored trajectory in a run — each right and each wrong.
func TestTrajectoryChecksInARun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		mcp := mcptest.Start(t)
		plan := func(llmtest.ChatRequest) []llmtest.ToolCall {
			return []llmtest.ToolCall{llmtest.Call("c1", "search", `{"query":"answer"}`), llmtest.Call("c2", "add", `{"a":40,"b":2}`)}
		}
		b := setup(t, st, 0, agentScript(plan, "42"))
		task := func(key string, cs ...store.Check) store.TaskRef {
			tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: key, Category: "tools", Question: "Q " + key, Checks: cs})
			if err != nil {
				t.Fatal(err)
			}
			return store.TaskRef{ID: tk.ID}
		}
		right := task("right", store.Check{Type: "tool_called", Value: "search"}, store.Check{Type: "tool_not_called", Value: "fail"},
			store.Check{Type: "tool_args", Value: `{"tool":"add","args":{"a":40}}`}, store.Check{Type: "tool_sequence", Value: `["search","add"]`},
			store.Check{Type: "max_tool_calls", Value: "2"})
		wrong := task("wrong", store.Check{Type: "tool_called", Value: "fetch"}, store.Check{Type: "tool_not_called", Value: "add"},
			store.Check{Type: "tool_args", Value: `{"tool":"add","args":{"a":41}}`}, store.Check{Type: "tool_sequence", Value: `["add","search"]`},
			store.Check{Type: "max_tool_calls", Value: "1"})
		refs := []store.TaskRef{right, wrong}
		coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "tools", TaskIDs: &refs})
		if err != nil {
			t.Fatal(err)
		}
		b.coll = coll
		metrics := []string{"check_tool_called", "check_tool_not_called", "check_tool_args", "check_tool_sequence", "check_max_tool_calls"}
		run := b.startAgentRun(t, store.AgentInput{MCPServers: docsServer(mcp.URL, "search", "add")}, metrics...)
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		for _, w := range workItems(t, st, run.ID) {
			rows, err := st.ItemScoreRows(ctx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			var scores []store.Score // the checks' (the judge scores too)
			for _, sc := range rows {
				if strings.HasPrefix(sc.Source, "check:") {
					scores = append(scores, sc)
				}
			}
			want := map[string]float64{"right": 1, "wrong": 0}[w.Task.TaskKey]
			if len(scores) != 5 {
				t.Fatalf("%s: %d scores, want the 5 checks: %+v", w.Task.TaskKey, len(scores), scores)
			}
			for _, sc := range scores {
				if sc.Score != want {
					t.Errorf("%s: %s scored %v (%s), want %v", w.Task.TaskKey, sc.Metric, sc.Score, sc.Reasoning, want)
				}
			}
		}
	})
}
