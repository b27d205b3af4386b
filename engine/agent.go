package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"tribunal/llm"
	"tribunal/store"
	"tribunal/trajectory"
)

// agentAnswer is what an agent produced for one item.
type agentAnswer struct {
	answers  []string // the final answer of each user turn
	messages []llm.Message
	total    llm.Response // token and model-time totals over every model call
	trace    store.AgentTrace
	cost     store.CostSum // each call's: reported by the provider or the http executor, else from the price table
}

// errNoFinalAnswer fails an item whose agent still asked for tools on its
// last allowed turn; its trajectory is kept.
type errNoFinalAnswer struct{ turns int }

func (e errNoFinalAnswer) Error() string {
	return fmt.Sprintf("no final answer after %d turns", e.turns)
}

// toolLoop runs the tools executor for one item: the model is offered the
// agent's tools, each call it asks for runs through MCP and its result goes
// back, until it answers without tools. A tool's failure is the model's
// news, not the item's; only a failed model call, a broken MCP session or
// running out of turns ends the item.
func (e *Engine) toolLoop(ctx context.Context, rs *runState, p *store.Provider, client *llm.Client, c *agentConn, w *store.WorkItem) (out agentAnswer, err error) {
	cfg := &c.cfg
	req := llm.Request{Model: w.Target.Model, Temperature: cfg.Settings.Temperature, MaxTokens: cfg.Settings.MaxTokens,
		ReasoningEffort: cfg.Settings.ReasoningEffort, Tools: c.tools, ParallelToolCalls: cfg.Settings.ParallelToolCalls}
	if sp := SystemPrompt(w, rs.options); sp != "" {
		req.Messages = append(req.Messages, llm.Message{Role: "system", Content: sp})
	}
	var reasoning []string
	defer func() { // on every return, the answer's or the error's
		out.messages = req.Messages
		out.trace.Reasoning = strings.Join(reasoning, "\n\n")
	}()
	turns, err := w.Task.SentTurns(ctx)
	if err != nil {
		return out, err
	}
	for _, turn := range turns {
		req.Messages = append(req.Messages, llm.Message{Role: "user", Content: turn})
		for {
			resp, err := e.chat(ctx, p, client, req)
			if err != nil {
				return out, err
			}
			out.trace.Turns++
			out.total.Duration += resp.Duration
			out.total.PromptTokens += resp.PromptTokens
			out.total.CompletionTokens += resp.CompletionTokens
			out.cost.Add(w.Target.Price.CallCost(resp.CostUSD, resp.PromptTokens, resp.CompletionTokens))
			if resp.Reasoning != "" {
				reasoning = append(reasoning, resp.Reasoning)
			}
			req.Messages = append(req.Messages, llm.Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})
			if len(resp.ToolCalls) == 0 {
				out.answers = append(out.answers, resp.Text)
				break
			}
			if out.trace.Turns >= cfg.MaxTurns {
				return out, errNoFinalAnswer{turns: out.trace.Turns}
			}
			calls, err := e.runToolCalls(ctx, c, out.trace.Turns, resp.ToolCalls)
			if err != nil {
				return out, err
			}
			for i, call := range calls {
				req.Messages = append(req.Messages, llm.Message{Role: "tool", ToolCallID: resp.ToolCalls[i].ID, Content: call.Result})
			}
			out.trace.ToolCalls = append(out.trace.ToolCalls, calls...)
		}
	}
	return out, nil
}

// runToolCalls runs the tool calls of one model reply, at once when it
// asked for several, and records them in the order asked.
func (e *Engine) runToolCalls(ctx context.Context, c *agentConn, turn int, asked []llm.ToolCall) ([]trajectory.Call, error) {
	calls := make([]trajectory.Call, len(asked))
	errs := make([]error, len(asked))
	run := func(i int) {
		tc := asked[i]
		res, err := e.callTool(ctx, c, tc.Name, tc.Arguments)
		errs[i] = err
		calls[i] = trajectory.Call{Turn: turn, Server: c.serverOf[tc.Name], Name: tc.Name, Arguments: trajectory.Args(tc.Arguments),
			Result: res.Text, IsError: res.IsError, DurationMs: res.Duration.Milliseconds()}
	}
	if len(asked) == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for i := range asked {
			wg.Go(func() { run(i) })
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return calls, err
		}
	}
	return calls, nil
}

// benchmarkAgent asks an agent target for the item's answer: its tool loop,
// or the user's own agent over HTTP.
func (e *Engine) benchmarkAgent(ctx context.Context, rs *runState, p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
	stop := e.renewLease(ctx, &w.Item)
	defer stop()
	c, err := e.agent(ctx, &w.Target)
	if err != nil {
		e.callFailed(ctx, w, store.PhaseBenchmarking, err, "")
		return nil
	}
	defer c.release()
	start := time.Now()
	var out agentAnswer
	if c.cfg.Executor == store.ExecutorHTTP {
		out, err = e.callHTTPAgent(ctx, c, w)
	} else {
		out, err = e.toolLoop(ctx, rs, p, client, c, w)
	}
	if nf, ok := err.(errNoFinalAnswer); ok {
		e.failAgentItem(ctx, w, nf.Error(), &out.trace)
		return nil
	}
	if err != nil {
		if _, model := err.(*llm.Error); !model && ctx.Err() == nil {
			e.dropAgent(w.Target.ID, c) // a broken MCP session: dial again for the retry
		}
		e.callFailed(ctx, w, store.PhaseBenchmarking, err, "")
		return nil
	}
	record, _ := json.Marshal(requestRecord{Model: w.Target.Model, Messages: out.messages[:max(len(out.messages)-1, 0)],
		Provider: w.Target.ProviderName, Settings: w.Target.Settings})
	final := out.answers[len(out.answers)-1]
	res := store.BenchmarkResult{Request: string(record), Response: final, TimeMs: time.Since(start).Milliseconds(),
		PromptTokens: out.total.PromptTokens, CompletionTokens: out.total.CompletionTokens, TokensPerS: out.total.TokensPerSecond(),
		CostUSD: out.cost.USD, CostSource: out.cost.Source,
		Judged: len(rs.judges) > 0 && !rs.options.Pairwise, Agent: &out.trace, Weights: rs.weights}
	if len(out.answers) > 1 {
		b, _ := json.Marshal(out.answers)
		list := string(b)
		res.Answers = &list
	}
	res.Scores = append(e.runChecks(w, rs.options, final, out.trace.ToolCalls), measures(rs.options, res)...)
	entry := itemLog(w, store.LogInfo, "answer", fmt.Sprintf("%s · %s answered after %d turn(s) and %d tool call(s), %d failed (%d ms, %d tokens)",
		w.Target.Label(), w.Task.TaskKey, out.trace.Turns, len(out.trace.ToolCalls), out.trace.ToolCalls.Errors(), res.TimeMs, res.CompletionTokens),
		"PROMPT\n"+strings.Join(w.Task.AllTurns(), "\n---\n")+"\n\nTOOL CALLS\n"+out.trace.ToolCalls.Compact()+"\n\nRESPONSE\n"+strings.Join(out.answers, "\n---\n"))
	return e.storeAnswer(ctx, w, p, res, entry)
}

// failAgentItem fails an agent's item at once, keeping what it did.
func (e *Engine) failAgentItem(ctx context.Context, w *store.WorkItem, reason string, trace *store.AgentTrace) {
	wctx := context.WithoutCancel(ctx)
	entry := itemLog(w, store.LogError, "failed", fmt.Sprintf("✗ %s · %s failed: %s", w.Target.Label(), w.Task.TaskKey, reason),
		"TOOL CALLS\n"+trace.ToolCalls.Compact())
	if err := e.store.FailAgentItem(wctx, &w.Item, reason, trace); err != nil {
		e.log.ErrorContext(wctx, "fail item", "item_id", w.ID, "err", err)
		return
	}
	e.logs.add(entry)
}
