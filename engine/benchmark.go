package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"tribunal/llm"
	"tribunal/store"
)

func (e *Engine) warmup(ctx context.Context, runID int64, tg *store.RunTarget, p *store.Provider, client *llm.Client) {
	stop := e.renew(ctx, func(ctx context.Context) error { return e.store.RenewWarmup(ctx, tg.ID, e.cfg.WorkerID, e.cfg.Lease) })
	defer stop()
	e.logRun(ctx, runID, store.LogInfo, "warmup", fmt.Sprintf("Group %s started: warming up", tg.Label()), "")
	attempt := func() (time.Duration, error) {
		resp, err := e.chat(ctx, p, client, llm.Request{Model: tg.Model, Messages: []llm.Message{{Role: "user", Content: WarmupPrompt}}})
		return resp.Duration, err
	}
	var conn *agentConn
	if tg.IsAgent() {
		attempt = func() (time.Duration, error) {
			c, took, err := e.warmupAgent(ctx, tg, p, client)
			if err == nil {
				conn = c
			}
			return took, err
		}
	}
	// Tried like an item's call, so one passing 500 or 429 does not fail the whole group.
	took, err := attempt()
	tries := 1
	for ; err != nil && ctx.Err() == nil; tries++ {
		delay, retry := e.retryDelay(err, tries)
		if !retry {
			break
		}
		e.logRun(ctx, runID, store.LogWarn, "retry", fmt.Sprintf("Warm-up of %s: attempt %d failed, retry in %s: %s",
			tg.Label(), tries, delay.Round(time.Millisecond), err), "")
		select {
		case <-ctx.Done():
		case <-time.After(delay):
			took, err = attempt()
		}
	}
	if ctx.Err() != nil {
		if conn != nil {
			conn.close()
		}
		return // the warm-up lease runs out and another start warms up again
	}
	wctx := context.WithoutCancel(ctx)
	if err != nil {
		reason := fmt.Sprintf("warm-up failed after %d attempt(s): %v", tries, err)
		if _, ferr := e.failTarget(wctx, runID, tg, reason); ferr != nil {
			e.log.ErrorContext(ctx, "fail target", "target_id", tg.ID, "err", ferr)
		}
		return
	}
	if conn != nil {
		if err := e.store.SetTargetTools(wctx, tg.ID, conn.frozen); err != nil {
			conn.close()
			e.log.ErrorContext(ctx, "freeze agent tools", "target_id", tg.ID, "err", err)
			return
		}
		e.keepAgent(tg.ID, conn)
	}
	if err := e.store.SetWarmup(wctx, tg.ID, store.WarmupOK, ""); err != nil {
		e.log.ErrorContext(ctx, "store warm-up", "target_id", tg.ID, "err", err)
		return
	}
	msg := fmt.Sprintf("%s is ready (warm-up took %d ms)", tg.Label(), took.Milliseconds())
	if conn != nil && conn.mcp != nil {
		msg = fmt.Sprintf("%s is ready with %d tool(s): %s (warm-up took %d ms)", tg.Label(), len(conn.tools), toolNames(conn), took.Milliseconds())
	}
	e.logRun(ctx, runID, store.LogInfo, "warmup", msg, "")
}

// warmupAgent connects to an agent's MCP servers and lists their tools (an
// unreachable server fails the attempt), then makes the model's warm-up
// call; the http executor's warm-up is one question to the user's agent.
func (e *Engine) warmupAgent(ctx context.Context, tg *store.RunTarget, p *store.Provider, client *llm.Client) (*agentConn, time.Duration, error) {
	start := time.Now()
	fresh := *tg
	fresh.Tools = nil // list what the servers offer now, and freeze that
	c, err := e.dialAgent(ctx, &fresh)
	if err != nil {
		return nil, time.Since(start), err
	}
	if c.cfg.Executor == store.ExecutorHTTP {
		_, _, err = e.postHTTPAgent(ctx, &c.cfg, HTTPAgentRequest{Input: WarmupPrompt, Turns: []string{WarmupPrompt},
			Metadata: map[string]any{"run_id": tg.RunID, "warmup": true}})
	} else {
		_, err = e.chat(ctx, p, client, llm.Request{Model: tg.Model, Messages: []llm.Message{{Role: "user", Content: WarmupPrompt}}})
	}
	if err != nil {
		c.close()
		return nil, time.Since(start), err
	}
	return c, time.Since(start), nil
}

func toolNames(c *agentConn) string {
	names := make([]string, len(c.tools))
	for i, t := range c.tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// failTarget fails every NEW item of a target with the reason, as seed 000 asks when its warm-up fails.
func (e *Engine) failTarget(ctx context.Context, runID int64, tg *store.RunTarget, reason string) (bool, error) {
	if err := e.store.SetWarmup(ctx, tg.ID, store.WarmupFailed, reason); err != nil {
		return false, err
	}
	n, err := e.store.FailTargetItems(ctx, tg.ID, reason)
	if err != nil {
		return false, err
	}
	e.logRun(ctx, runID, store.LogError, "warmup", fmt.Sprintf("%s: %s; %d item(s) failed", tg.Label(), reason, n), "")
	return true, nil
}

// requestRecord is what the item stores about the call it made.
type requestRecord struct {
	Model    string               `json:"model"`
	Messages []llm.Message        `json:"messages"`
	Provider string               `json:"provider"`
	Settings store.TargetSettings `json:"settings"`
}

// SystemPrompt is the system prompt an item's target is sent (SystemPromptFor).
func SystemPrompt(w *store.WorkItem, opts store.RunOptions) string {
	return SystemPromptFor(w.Task.SystemPrompt, &w.Target, opts.SystemPrompt)
}

// SystemPromptFor is the one rule for the system prompt a target is sent
// for a task: for an agent, its instructions, then the task's own (else the
// run's); for a model, the task's own, else the target's, else the run's.
func SystemPromptFor(task string, tg *store.RunTarget, run string) string {
	if tg.IsAgent() {
		return strings.TrimSpace(tg.Agent.SystemPrompt + "\n\n" + cmp.Or(strings.TrimSpace(task), run))
	}
	return cmp.Or(strings.TrimSpace(task), strings.TrimSpace(tg.Settings.SystemPrompt), run)
}

// benchmark asks the target for the item's answer and stores it; it returns
// the successor claimed with the result, if any (see chain).
func (e *Engine) benchmark(ctx context.Context, rs *runState, p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
	switch {
	case w.Target.IsAgent():
		return e.benchmarkAgent(ctx, rs, p, client, w)
	case w.Target.Imported:
		return e.scoreImported(ctx, rs, p, w)
	}
	stop := e.renewLease(ctx, &w.Item)
	defer stop()
	set := w.Target.Settings
	req := llm.Request{Model: w.Target.Model, Temperature: set.Temperature, MaxTokens: set.MaxTokens, ReasoningEffort: set.ReasoningEffort}
	if sp := SystemPrompt(w, rs.options); sp != "" {
		req.Messages = append(req.Messages, llm.Message{Role: "system", Content: sp})
	}
	// A multi-turn task is one conversation: each turn sees the answers before it.
	var total llm.Response
	var cost store.CostSum
	turns, err := w.Task.SentTurns(ctx)
	if err != nil {
		e.failNow(ctx, w, store.PhaseBenchmarking, err.Error(), false) // the same template fails every time
		return nil
	}
	answers := make([]string, 0, len(turns))
	for _, turn := range turns {
		req.Messages = append(req.Messages, llm.Message{Role: "user", Content: turn})
		resp, err := e.chat(ctx, p, client, req)
		if err != nil {
			e.callFailed(ctx, w, store.PhaseBenchmarking, err, "")
			return nil
		}
		req.Messages = append(req.Messages, llm.Message{Role: "assistant", Content: resp.Text})
		answers = append(answers, resp.Text)
		total.Text = resp.Text
		total.Duration += resp.Duration
		total.PromptTokens += resp.PromptTokens
		total.CompletionTokens += resp.CompletionTokens
		e.recordVersion(ctx, &w.Target, resp.Model)
		cost.Add(w.Target.Price.CallCost(resp.CostUSD, resp.PromptTokens, resp.CompletionTokens))
	}
	record, _ := json.Marshal(requestRecord{Model: req.Model, Messages: req.Messages[:len(req.Messages)-1], Provider: w.Target.ProviderName, Settings: set})
	res := store.BenchmarkResult{Request: string(record), Response: total.Text, TimeMs: total.Duration.Milliseconds(),
		PromptTokens: total.PromptTokens, CompletionTokens: total.CompletionTokens, TokensPerS: total.TokensPerSecond(),
		CostUSD: cost.USD, CostSource: cost.Source, Judged: len(rs.judges) > 0 && !rs.options.Pairwise, Weights: rs.weights}
	if len(turns) > 1 {
		b, _ := json.Marshal(answers)
		list := string(b)
		res.Answers = &list
	}
	res.Scores = append(e.runChecks(w, rs.options, total.Text, nil), measures(rs.options, res)...)
	entry := itemLog(w, store.LogInfo, "answer", fmt.Sprintf("%s · %s answered (%d ms, %d tokens, %.1f tok/s)",
		w.Target.Label(), w.Task.TaskKey, res.TimeMs, res.CompletionTokens, res.TokensPerS),
		"PROMPT\n"+strings.Join(turns, "\n---\n")+"\n\nRESPONSE\n"+strings.Join(answers, "\n---\n"))
	return e.storeAnswer(ctx, w, p, res, entry)
}

// recordVersion freezes the model id a provider reports as the target's
// version when the user named none, once per target in this process.
func (e *Engine) recordVersion(ctx context.Context, tg *store.RunTarget, reported string) {
	if tg.Version != "" || reported == "" {
		return
	}
	if _, done := e.versioned.LoadOrStore(tg.ID, true); done {
		return
	}
	if err := e.store.ReportTargetVersion(context.WithoutCancel(ctx), tg.ID, reported); err != nil {
		e.versioned.Delete(tg.ID) // the next answer tries again
		e.log.WarnContext(ctx, "record model version", "target_id", tg.ID, "err", err)
	}
}

// storeAnswer writes an item's answer, claiming its successor with it, and
// logs the entry once the answer is stored.
func (e *Engine) storeAnswer(ctx context.Context, w *store.WorkItem, p *store.Provider, res store.BenchmarkResult, entry *store.RunLog) *store.Item {
	c := store.BenchmarkCompletion(&w.Item, res)
	e.complete(ctx, c, e.successor(ctx, w, p))
	if c.Err != nil {
		e.notStored(ctx, w, store.PhaseBenchmarking, c.Err)
		return nil
	}
	if res.Judged {
		e.markJudgeWork(w.RunID, 0)
	}
	e.logs.add(entry)
	return c.Successor
}

func decodeAnswers(s string) ([]string, error) {
	var list []string
	err := json.Unmarshal([]byte(s), &list)
	return list, err
}
