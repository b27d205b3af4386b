package engine

// Pairwise judging (MT-Bench style). A run with Options.Pairwise benchmarks
// as usual, but its items complete without per-item judging. When
// benchmarking is over (with the run option pipeline: as soon as every
// target has answered a task), the judging creates one comparison per
// task, repeat, pair of targets whose answers both COMPLETED, and judge;
// the judge sees both answers and picks one or a tie, asked in both orders
// within one claim. The picks are un-swapped to target A's side; orders that
// disagree are a flip and count as a tie.
//
// Comparison states (store.ComparisonStatus):
//
//	NEW ──claim──▶ JUDGING ──both orders──▶ DONE
//	 ▲                │
//	 └─retry (backoff)┘  (keeps the first order's pick once it is in)
//	                  │
//	                  └── permanent error / attempts used ──▶ FAILED
//
// Claims are leases guarded by a claim token exactly like items' (see
// doc.go), count against the judge's (provider, model) concurrency together
// with items, and take only RUNNING runs; the rescuer returns expired ones
// to NEW. The run finishes once no comparison is NEW or JUDGING.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tribunal/llm"
	"tribunal/rubric"
	"tribunal/store"
)

// dispatchPairwise is dispatchJudging for a pairwise run: it makes the
// run's comparisons once, then has each judge of the panel claim its own, up
// to its provider's concurrency.
func (e *Engine) dispatchPairwise(ctx context.Context, run *store.Run, rs *runState, mayFinish bool) error {
	if err := e.makeComparisons(ctx, run, rs, mayFinish); err != nil {
		return err
	}
	claimed := false
	for pos := range rs.judges {
		pj := &rs.judges[pos]
		n := e.freeSlots()
		if n == 0 {
			return nil
		}
		p, perr := e.provider(ctx, pj.ProviderID)
		if perr != nil && !errors.Is(perr, errProviderDeleted) {
			return perr // a passing database error: the next pass tries again
		}
		params := store.ComparisonClaim{RunID: run.ID, RunJudgeID: pj.ID, WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n,
			SlotKey: store.SlotKey(pj.ProviderID, pj.Model)}
		if perr == nil {
			params.SlotLimit = p.Concurrency
		}
		cs, err := e.store.ClaimComparisons(ctx, params)
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			continue
		}
		claimed = true
		work, err := e.store.WorkComparisons(ctx, cs)
		if err != nil {
			return err // the claims' leases run out and the rescuer frees them
		}
		if perr != nil {
			reason := fmt.Sprintf("judge %s: provider %s: %v", pj.Name, pj.ProviderName, perr)
			for i := range work {
				e.failComparison(ctx, rs, &work[i], reason, 0)
			}
			continue
		}
		client := e.Client(p)
		for i := range work {
			w := &work[i]
			e.start("", func() { e.compare(ctx, rs, pj, p, client, w) })
		}
	}
	if !claimed && mayFinish {
		return e.maybeFinish(ctx, run)
	}
	return nil
}

// comparePeriod is how often a pipelined pairwise run makes the
// comparisons of the tasks answered meanwhile.
const comparePeriod = 250 * time.Millisecond

// makeComparisons creates the run's comparisons: once when benchmarking is
// over (after is set), and while a pipelined run benchmarks, every
// comparePeriod for the tasks whose targets have all answered.
func (e *Engine) makeComparisons(ctx context.Context, run *store.Run, rs *runState, after bool) error {
	if rs.pairwiseReady || (!after && time.Since(rs.comparedAt) < comparePeriod) {
		return nil
	}
	n, err := e.store.CreateComparisons(ctx, run.ID)
	if err != nil {
		return err
	}
	rs.comparedAt, rs.pairwiseReady = time.Now(), after
	if n > 0 && after {
		e.logRun(ctx, run.ID, store.LogInfo, "phase", fmt.Sprintf("Pairwise judging: %d comparison(s), each asked in both orders", n), "")
	}
	return nil
}

// pairwisePending reports whether a pairwise run must wait for comparisons
// before it ends, and how many it holds when every one of them failed.
func (e *Engine) pairwisePending(ctx context.Context, run *store.Run) (wait bool, allFailed int64, err error) {
	c, err := e.store.ComparisonProgress(ctx, run.ID)
	if err != nil {
		return true, 0, err
	}
	if c.Pending() > 0 {
		return true, 0, nil
	}
	if c.Total > 0 && c.Done == 0 {
		return false, c.Total, nil
	}
	return false, 0, nil
}

// compare asks the judge about one comparison in both orders and stores the
// outcome once. A pick from an earlier attempt's first order is reused.
func (e *Engine) compare(ctx context.Context, rs *runState, pj *panelJudge, p *store.Provider, client *llm.Client, w *store.WorkComparison) {
	stop := e.renew(ctx, func(ctx context.Context) error { return e.store.RenewComparisonLease(ctx, &w.Comparison, e.cfg.Lease) })
	defer stop()
	a, b := answers(&store.WorkItem{Item: w.A}), answers(&store.WorkItem{Item: w.B})
	var cost float64
	ask := func(first, second []string) (store.PairHalf, error) {
		req, err := pairwiseRequest(ctx, pj, &w.Task, first, second)
		if err != nil {
			return store.PairHalf{}, err
		}
		resp, err := e.judgeChat(ctx, p, client, req)
		if err != nil {
			return store.PairHalf{}, err
		}
		if c, _ := pj.Price.CallCost(resp.CostUSD, resp.PromptTokens, resp.CompletionTokens); c != nil {
			cost += *c
		}
		v, err := rubric.ParsePairwise(resp.Text)
		if err != nil {
			return store.PairHalf{Raw: resp.Text}, err
		}
		return store.PairHalf{Pick: v.Winner, Reasoning: v.Reasoning, Raw: resp.Text}, nil
	}
	ab := store.PairHalf{Pick: w.VerdictAB, Reasoning: w.ReasoningAB, Raw: w.RawAB}
	if ab.Pick == "" {
		var err error
		if ab, err = ask(a, b); err != nil {
			e.comparisonFailed(ctx, rs, pj, w, err, ab.Raw, nil, cost)
			return
		}
	}
	ba, err := ask(b, a)
	if err != nil {
		e.comparisonFailed(ctx, rs, pj, w, err, ba.Raw, &ab, cost)
		return
	}
	ba.Pick = rubric.SwapPick(ba.Pick) // the judge saw target B as "A"
	winner, flipped := store.PairOutcome(ab.Pick, ba.Pick)
	outcome := "tie"
	switch winner {
	case rubric.PickA:
		outcome = e.targetLabel(rs, w.TargetA) + " wins"
	case rubric.PickB:
		outcome = e.targetLabel(rs, w.TargetB) + " wins"
	}
	if flipped {
		outcome = fmt.Sprintf("tie (the orders disagree: %s, then %s)", ab.Pick, ba.Pick)
	}
	// The prompts are made again for the log: the first order's may come from an earlier attempt.
	reqAB, _ := pairwiseRequest(ctx, pj, &w.Task, a, b)
	reqBA, _ := pairwiseRequest(ctx, pj, &w.Task, b, a)
	entry := pairLog(w, store.LogInfo, "verdict", fmt.Sprintf("⚖ %s · %s: %s vs %s → %s", pj.Name, w.Task.TaskKey,
		e.targetLabel(rs, w.TargetA), e.targetLabel(rs, w.TargetB), outcome),
		"A FIRST\n"+judgeLogDetail(ab.Reasoning, reqAB, ab.Raw)+"\n\nB FIRST\n"+judgeLogDetail(ba.Reasoning, reqBA, ba.Raw))
	if err := e.store.CompleteComparison(context.WithoutCancel(ctx), &w.Comparison, store.PairResult{AB: ab, BA: ba, CostUSD: cost}); err != nil {
		e.log.ErrorContext(ctx, "store pairwise verdict", "comparison_id", w.ID, "err", err)
		return
	}
	e.logs.add(entry)
}

// pairwiseRequest builds the judge call showing first as answer A and second as answer B.
func pairwiseRequest(ctx context.Context, pj *panelJudge, t *store.RunTask, first, second []string) (llm.Request, error) {
	in := rubric.PairInput{Question: t.Question, Turns: t.AllTurns(), AnswersA: first, AnswersB: second,
		ResponseA: first[len(first)-1], ResponseB: second[len(second)-1],
		Reference: t.Reference, Excellent: t.Excellent, Good: t.Good, Pass: t.Pass,
		IncorrectAnswerDirection: t.IncorrectAnswerDirection, Constraints: t.Constraints, JudgeInstructions: t.JudgeInstructions,
		UseCase: t.JudgeUseCase()}
	prompt, err := rubric.RenderPairwise(ctx, in)
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{Model: pj.Model, SchemaName: "pairwise_verdict", JSONSchema: rubric.PairwiseSchema(),
		Temperature: pj.Settings.Temperature, MaxTokens: pj.Settings.MaxTokens, ReasoningEffort: pj.Settings.ReasoningEffort,
		Messages: []llm.Message{
			{Role: "system", Content: rubric.PairwiseSystemPrompt(pj.PersonalityName, pj.PersonalityDescription)},
			{Role: "user", Content: prompt},
		}}, nil
}

// judgeChat is chat for a judge: a server that rejects response_format (400)
// is asked again without it, since the prompt asks for the same JSON.
func (e *Engine) judgeChat(ctx context.Context, p *store.Provider, client *llm.Client, req llm.Request) (llm.Response, error) {
	resp, err := e.chat(ctx, p, client, req)
	var le *llm.Error
	if errors.As(err, &le) && le.StatusCode == 400 && req.JSONSchema != nil {
		req.JSONSchema = nil
		resp, err = e.chat(ctx, p, client, req)
	}
	return resp, err
}

// comparisonFailed retries the comparison later, keeping the first order's
// pick when it is in, or fails it when retrying cannot help or its attempts
// are used up. raw keeps a judge's unusable reply.
func (e *Engine) comparisonFailed(ctx context.Context, rs *runState, pj *panelJudge, w *store.WorkComparison, err error, raw string, ab *store.PairHalf, cost float64) {
	wctx := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		// Shutting down: hand the comparison back for the next worker.
		r := store.ComparisonRetry{At: time.Now().UTC(), Reason: "interrupted by shutdown", AB: ab, CostUSD: cost}
		if rerr := e.store.RetryComparison(wctx, &w.Comparison, r); rerr != nil {
			e.log.ErrorContext(wctx, "release comparison", "comparison_id", w.ID, "err", rerr)
		}
		return
	}
	reason := fmt.Sprintf("judge %s: %v", pj.Name, err)
	if raw != "" {
		reason += "\nraw judge output: " + raw
	}
	delay, retry := e.retryDelay(err, w.Failures+1)
	if !retry {
		e.failComparison(ctx, rs, w, reason, cost)
		return
	}
	entry := pairLog(w, store.LogWarn, "retry", fmt.Sprintf("%s · %s: %s vs %s: attempt %d failed, retry in %s: %v", pj.Name, w.Task.TaskKey,
		e.targetLabel(rs, w.TargetA), e.targetLabel(rs, w.TargetB), w.Failures+1, delay.Round(time.Millisecond), err), raw)
	r := store.ComparisonRetry{At: time.Now().UTC().Add(delay), Reason: reason, Failed: true, AB: ab, CostUSD: cost}
	if rerr := e.store.RetryComparison(wctx, &w.Comparison, r); rerr != nil {
		e.log.ErrorContext(wctx, "schedule comparison retry", "comparison_id", w.ID, "err", rerr)
		return
	}
	e.logs.add(entry)
}

func (e *Engine) failComparison(ctx context.Context, rs *runState, w *store.WorkComparison, reason string, cost float64) {
	wctx := context.WithoutCancel(ctx)
	entry := pairLog(w, store.LogError, "failed", fmt.Sprintf("✗ %s · %s vs %s: comparison failed", w.Task.TaskKey,
		e.targetLabel(rs, w.TargetA), e.targetLabel(rs, w.TargetB)), reason)
	if err := e.store.FailComparison(wctx, &w.Comparison, reason, cost); err != nil {
		e.log.ErrorContext(wctx, "fail comparison", "comparison_id", w.ID, "err", err)
		return
	}
	e.logs.add(entry)
}

func (e *Engine) targetLabel(rs *runState, id int64) string {
	if t, ok := rs.targets[id]; ok {
		return t.Label()
	}
	return fmt.Sprintf("target %d", id)
}

// pairLog is a live-log entry about a comparison, written with its outcome.
func pairLog(w *store.WorkComparison, level store.LogLevel, kind, msg, detail string) *store.RunLog {
	return &store.RunLog{RunID: w.RunID, Level: level, Kind: kind, Message: msg, Detail: detail}
}
