package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"tribunal/llm"
	"tribunal/store"
	"tribunal/trajectory"
)

// httpAgentConcurrency is how many questions Tribunal puts to a user's own
// agent (the http executor) at once.
const httpAgentConcurrency = 4

// HTTPAgentRequest is what the http executor POSTs to a user's agent.
type HTTPAgentRequest struct {
	Input    string         `json:"input"`
	Turns    []string       `json:"turns"`
	Metadata map[string]any `json:"metadata"`
}

// HTTPAgentReply is what the user's agent answers; only Output is required.
type HTTPAgentReply struct {
	Output    *string           `json:"output"`
	ToolCalls []trajectory.Call `json:"tool_calls"`
	Usage     struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	CostUSD *float64 `json:"cost_usd"`
	// Turns, when the agent says, is how many model calls it made.
	Turns     int    `json:"turns"`
	Reasoning string `json:"reasoning"`
}

// maxHTTPAgentReply bounds the reply read from a user's agent.
const maxHTTPAgentReply = 8 << 20

// httpAgentTimeout bounds one question: as long as the agent's own loop may
// take by its config, every turn a tool's timeout.
func httpAgentTimeout(cfg *store.AgentInput) time.Duration {
	return time.Duration(cfg.MaxTurns*cfg.ToolTimeoutSeconds) * time.Second
}

// callHTTPAgent puts the item's question to the user's own agent.
func (e *Engine) callHTTPAgent(ctx context.Context, c *agentConn, w *store.WorkItem) (agentAnswer, error) {
	turns, err := w.Task.SentTurns(ctx)
	if err != nil {
		return agentAnswer{}, err
	}
	body := HTTPAgentRequest{Input: turns[0], Turns: turns, Metadata: map[string]any{
		"run_id": w.RunID, "item_id": w.ID, "task_key": w.Task.TaskKey, "category": w.Task.Category, "repeat": w.RepeatIndex}}
	rep, took, err := e.postHTTPAgent(ctx, &c.cfg, body)
	out := agentAnswer{messages: []llm.Message{{Role: "user", Content: strings.Join(turns, "\n\n")}}}
	if err != nil {
		return out, err
	}
	out.answers = []string{*rep.Output}
	out.total = llm.Response{PromptTokens: rep.Usage.InputTokens, CompletionTokens: rep.Usage.OutputTokens, Duration: took}
	out.cost.Add(w.Target.Price.CallCost(rep.CostUSD, rep.Usage.InputTokens, rep.Usage.OutputTokens))
	calls := trajectory.Calls(rep.ToolCalls)
	for i := range calls {
		calls[i].Turn = max(calls[i].Turn, 1)
	}
	out.trace = store.AgentTrace{ToolCalls: calls, Turns: max(rep.Turns, 1), Reasoning: rep.Reasoning}
	out.messages = append(out.messages, llm.Message{Role: "assistant", Content: *rep.Output})
	return out, nil
}

// postHTTPAgent makes one call of the http executor. Its errors are
// llm.Errors, so they are retried (or not) like a provider's.
func (e *Engine) postHTTPAgent(ctx context.Context, cfg *store.AgentInput, body HTTPAgentRequest) (*HTTPAgentReply, time.Duration, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, 0, err
	}
	timeout := httpAgentTimeout(cfg)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.HTTP.URL, bytes.NewReader(b))
	if err != nil {
		return nil, 0, &llm.Error{Kind: llm.KindPermanent, Message: "agent URL: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for _, h := range cfg.HTTP.Headers {
		req.Header.Set(h.Key, h.Value)
	}
	start := time.Now()
	resp, err := e.httpClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded {
			return nil, time.Since(start), &llm.Error{Kind: llm.KindTimeout, Message: fmt.Sprintf("the agent did not answer within %s", timeout)}
		}
		return nil, time.Since(start), &llm.Error{Kind: llm.KindTransient, Message: "agent: " + err.Error()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPAgentReply+1))
	took := time.Since(start)
	if err != nil {
		return nil, took, &llm.Error{Kind: llm.KindTransient, Message: "agent: reading the reply: " + err.Error()}
	}
	if resp.StatusCode/100 != 2 {
		return nil, took, llm.StatusError(resp.StatusCode, resp.Header, strings.TrimSpace(string(raw)))
	}
	if len(raw) > maxHTTPAgentReply {
		return nil, took, &llm.Error{Kind: llm.KindMalformed, Message: "the agent's reply is larger than 8 MiB"}
	}
	var rep HTTPAgentReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, took, &llm.Error{Kind: llm.KindMalformed, Message: "the agent's reply is not the expected JSON ({\"output\": text, …}): " + err.Error()}
	}
	if rep.Output == nil {
		return nil, took, &llm.Error{Kind: llm.KindMalformed, Message: "the agent's reply has no \"output\""}
	}
	return &rep, took, nil
}
