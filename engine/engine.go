package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"tribunal/llm"
	"tribunal/store"
)

// WarmupPrompt is the first call to each (provider, model) of a run.
const WarmupPrompt = "Hello, World!"

// Config tunes the engine; zero values get defaults.
type Config struct {
	// WorkerID names this process in item leases.
	WorkerID string
	// PollInterval is how often idle engines look for work they were not told about.
	PollInterval time.Duration
	// Lease is how long a claim holds without renewal; renewed every Lease/3.
	Lease time.Duration
	// MaxAttempts is how many times a call is tried before the item FAILS.
	MaxAttempts int
	// BackoffBase is the first retry delay; it doubles per attempt, with jitter.
	BackoffBase time.Duration
	// BackoffMax caps the retry delay.
	BackoffMax time.Duration
}

// Engine claims and runs items.
type Engine struct {
	store  *store.Store
	broker *Broker
	log    *slog.Logger
	cfg    Config
	wake   chan struct{}

	clientFunc func(p *store.Provider) *llm.Client
}

// New builds an engine. clientFunc may be nil (real HTTP clients).
func New(cfg Config, st *store.Store, broker *Broker, logger *slog.Logger) *Engine {
	if cfg.WorkerID == "" {
		host, _ := os.Hostname()
		cfg.WorkerID = fmt.Sprintf("%s-%d-%04x", cmp.Or(host, "worker"), os.Getpid(), rand.IntN(1<<16))
	}
	cfg.PollInterval = cmp.Or(cfg.PollInterval, time.Second)
	cfg.Lease = cmp.Or(cfg.Lease, 30*time.Second)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 3)
	cfg.BackoffBase = cmp.Or(cfg.BackoffBase, 2*time.Second)
	cfg.BackoffMax = cmp.Or(cfg.BackoffMax, 2*time.Minute)
	if logger == nil {
		logger = slog.Default()
	}
	return &Engine{
		store: st, broker: broker, log: logger.With("worker_id", cfg.WorkerID), cfg: cfg,
		wake:       make(chan struct{}, 1),
		clientFunc: func(p *store.Provider) *llm.Client { return llm.New(endpoint(p), nil) },
	}
}

// SetClientFunc replaces how provider clients are built (tests inject fakes' HTTP clients).
func (e *Engine) SetClientFunc(f func(p *store.Provider) *llm.Client) { e.clientFunc = f }

func endpoint(p *store.Provider) llm.Endpoint {
	h := make(map[string]string, len(p.Headers))
	for _, x := range p.Headers {
		h[x.Key] = x.Value
	}
	return llm.Endpoint{BaseURL: p.BaseURL, ModelsEndpoint: p.ModelsEndpoint, InferenceEndpoint: p.InferenceEndpoint,
		Headers: h, Timeout: time.Duration(p.TimeoutSeconds) * time.Second}
}

// Client returns a client for a provider loaded with its secrets.
func (e *Engine) Client(p *store.Provider) *llm.Client { return e.clientFunc(p) }

// Broker returns the engine's change broker.
func (e *Engine) Broker() *Broker { return e.broker }

// Wake makes an idle engine look for work now.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends. Runs left RUNNING by a crash are picked up, and
// their expired leases rescued, like any other.
func (e *Engine) Run(ctx context.Context) error {
	e.log.InfoContext(ctx, "engine started")
	var wg sync.WaitGroup
	wg.Go(func() { e.rescueLoop(ctx) })
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			e.log.InfoContext(context.WithoutCancel(ctx), "engine stopping")
			return nil
		case <-timer.C:
		case <-e.wake:
		}
		busy, err := e.pass(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.ErrorContext(ctx, "engine pass", "err", err)
		}
		next := e.cfg.PollInterval
		if busy {
			next = 0
		}
		timer.Reset(jitter(next))
	}
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + rand.N(d/10+1)
}

func (e *Engine) rescueLoop(ctx context.Context) {
	t := time.NewTicker(e.cfg.Lease / 2)
	defer t.Stop()
	for {
		if n, err := e.store.RescueExpired(ctx); err != nil && ctx.Err() == nil {
			e.log.ErrorContext(ctx, "rescue expired items", "err", err)
		} else if n > 0 {
			e.log.InfoContext(ctx, "rescued items with expired leases", "items", n)
			e.Wake()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass works on every active run until each has nothing claimable; busy
// reports that work was done, so the caller looks again at once.
func (e *Engine) pass(ctx context.Context) (busy bool, err error) {
	runs, err := e.store.ActiveRuns(ctx)
	if err != nil {
		return false, err
	}
	for i := range runs {
		did, err := e.work(ctx, &runs[i])
		if err != nil {
			return busy, fmt.Errorf("run %d: %w", runs[i].ID, err)
		}
		busy = busy || did
	}
	return busy, nil
}

// work advances one run until it has nothing claimable now.
func (e *Engine) work(ctx context.Context, run *store.Run) (did bool, err error) {
	if run.Status == store.RunPending {
		r, err := e.store.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending)
		if err != nil {
			if errors.Is(err, store.ErrConflict) {
				return false, nil // paused or cancelled meanwhile
			}
			return false, err
		}
		e.logRun(ctx, run.ID, store.LogInfo, "run", fmt.Sprintf("Run started: %d target(s), judge %s", len(r.Targets), judgeName(r)), "")
		*run = *r
	}
	rc := &runContext{run: run, clients: map[int64]*llm.Client{}}
	for ctx.Err() == nil {
		cur, err := e.store.Run(ctx, run.ID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return did, nil // deleted
			}
			return did, err
		}
		if cur.Status != store.RunRunning {
			return did, nil
		}
		rc.run = cur
		var step bool
		if cur.Phase == store.PhaseBenchmarking {
			step, err = e.benchmarkStep(ctx, rc)
		} else {
			step, err = e.judgeStep(ctx, rc)
		}
		if err != nil {
			return did, err
		}
		if !step {
			return did, nil
		}
		did = true
	}
	return did, nil
}

func judgeName(r *store.Run) string {
	if len(r.Judges) == 0 {
		return "(none)"
	}
	return r.Judges[0].Name
}

// runContext caches provider clients for one pass over a run.
type runContext struct {
	run     *store.Run
	clients map[int64]*llm.Client
}

func (e *Engine) client(ctx context.Context, rc *runContext, providerID *int64) (*llm.Client, error) {
	if providerID == nil {
		return nil, errors.New("the provider was deleted")
	}
	if c, ok := rc.clients[*providerID]; ok {
		return c, nil
	}
	p, err := e.store.ProviderWithSecrets(ctx, *providerID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errors.New("the provider was deleted")
		}
		return nil, err
	}
	c := e.clientFunc(p)
	rc.clients[*providerID] = c
	return c, nil
}

// benchmarkStep runs one item of the first target with work left, warming
// the target up first. It moves the run to JUDGING when benchmarking is done.
func (e *Engine) benchmarkStep(ctx context.Context, rc *runContext) (bool, error) {
	run := rc.run
	tg, err := e.store.NextTarget(ctx, run.ID)
	if err != nil {
		return false, err
	}
	if tg == nil {
		prog, err := e.store.RunProgress(ctx, run.ID)
		if err != nil {
			return false, err
		}
		if prog.Count(store.ItemInProgress) > 0 {
			return false, nil // another worker (or a dead one's lease) still holds items
		}
		if err := e.store.SetRunPhase(ctx, run.ID, store.PhaseJudging); err != nil {
			return false, err
		}
		e.logRun(ctx, run.ID, store.LogInfo, "phase", fmt.Sprintf("Benchmarking done (%d answered, %d failed); judging starts", prog.Count(store.ItemWaitingForJudge), prog.Count(store.ItemFailed)), "")
		return true, nil
	}
	client, err := e.client(ctx, rc, tg.ProviderID)
	if err != nil {
		return e.failTarget(ctx, run.ID, tg, "provider "+tg.ProviderName+": "+err.Error())
	}
	if tg.WarmupStatus == store.WarmupPending {
		return e.warmup(ctx, run.ID, tg, client)
	}
	items, err := e.store.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, TargetID: tg.ID, From: store.ItemNew,
		To: store.ItemInProgress, WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: 1})
	if err != nil || len(items) == 0 {
		return false, err // nothing ready: the rest wait for a retry time
	}
	work, err := e.store.WorkItems(ctx, items)
	if err != nil {
		return false, err
	}
	for i := range work {
		e.benchmark(ctx, run, client, &work[i])
	}
	return true, nil
}

func (e *Engine) warmup(ctx context.Context, runID int64, tg *store.RunTarget, client *llm.Client) (bool, error) {
	e.logRun(ctx, runID, store.LogInfo, "warmup", fmt.Sprintf("Warming up %s", tg.Label()), "")
	resp, err := client.Chat(ctx, llm.Request{Model: tg.Model, Messages: []llm.Message{{Role: "user", Content: WarmupPrompt}}})
	if ctx.Err() != nil {
		return false, nil
	}
	if err != nil {
		return e.failTarget(ctx, runID, tg, "warm-up failed: "+err.Error())
	}
	if err := e.store.SetWarmup(ctx, tg.ID, store.WarmupOK, ""); err != nil {
		return false, err
	}
	e.logRun(ctx, runID, store.LogInfo, "warmup", fmt.Sprintf("%s is ready (warm-up took %d ms)", tg.Label(), resp.Duration.Milliseconds()), "")
	return true, nil
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
	Model    string        `json:"model"`
	Messages []llm.Message `json:"messages"`
	Provider string        `json:"provider"`
}

func (e *Engine) benchmark(ctx context.Context, run *store.Run, client *llm.Client, w *store.WorkItem) {
	stop := e.renewLease(ctx, &w.Item)
	defer stop()
	req := llm.Request{Model: w.Target.Model, Messages: []llm.Message{{Role: "user", Content: w.Task.Question}}}
	e.logItem(ctx, w, store.LogInfo, "prompt", fmt.Sprintf("→ %s · %s", w.Target.Label(), w.Task.TaskKey), w.Task.Question)
	resp, err := client.Chat(ctx, req)
	if err != nil {
		e.callFailed(ctx, w, store.PhaseBenchmarking, err, "")
		return
	}
	record, _ := json.Marshal(requestRecord{Model: req.Model, Messages: req.Messages, Provider: w.Target.ProviderName})
	res := store.BenchmarkResult{Request: string(record), Response: resp.Text, TimeMs: resp.Duration.Milliseconds(),
		PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens, TokensPerS: resp.TokensPerSecond()}
	if err := e.store.CompleteBenchmark(context.WithoutCancel(ctx), &w.Item, res); err != nil {
		e.log.ErrorContext(ctx, "store benchmark result", "item_id", w.ID, "err", err)
		return
	}
	e.logItem(ctx, w, store.LogInfo, "response", fmt.Sprintf("← %s · %s (%d ms, %d tokens, %.1f tok/s)",
		w.Target.Label(), w.Task.TaskKey, res.TimeMs, res.CompletionTokens, res.TokensPerS), resp.Text)
}

// judgeStep judges one answered item, or finishes the run when nothing is left.
func (e *Engine) judgeStep(ctx context.Context, rc *runContext) (bool, error) {
	run := rc.run
	items, err := e.store.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemWaitingForJudge,
		To: store.ItemJudging, WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: 1})
	if err != nil {
		return false, err
	}
	if len(items) == 0 {
		return e.maybeFinish(ctx, run)
	}
	if len(run.Judges) == 0 {
		return false, errors.New("run has no judge")
	}
	judge := run.Judges[0]
	work, err := e.store.WorkItems(ctx, items)
	if err != nil {
		return false, err
	}
	client, cerr := e.client(ctx, rc, judge.ProviderID)
	for i := range work {
		if cerr != nil {
			e.failNow(ctx, &work[i], store.PhaseJudging, "judge provider "+judge.ProviderName+": "+cerr.Error())
			continue
		}
		e.judge(ctx, judge, client, &work[i])
	}
	return true, nil
}

func (e *Engine) judge(ctx context.Context, judge store.RunJudge, client *llm.Client, w *store.WorkItem) {
	stop := e.renewLease(ctx, &w.Item)
	defer stop()
	response := ""
	if w.Response != nil {
		response = *w.Response
	}
	req := llm.Request{Model: judge.Model, SchemaName: "verdict", JSONSchema: JudgeSchema, Messages: []llm.Message{
		{Role: "system", Content: judgeSystemPrompt},
		{Role: "user", Content: judgePrompt(w.Task, response)},
	}}
	resp, err := client.Chat(ctx, req)
	var le *llm.Error
	if errors.As(err, &le) && le.StatusCode == 400 {
		// Some OpenAI-compatible servers reject response_format; the prompt
		// asks for the same JSON, and the reply is validated either way.
		req.JSONSchema = nil
		resp, err = client.Chat(ctx, req)
	}
	if err != nil {
		e.callFailed(ctx, w, store.PhaseJudging, err, "")
		return
	}
	v, perr := ParseVerdict(resp.Text)
	if perr != nil {
		e.callFailed(ctx, w, store.PhaseJudging, perr, resp.Text)
		return
	}
	score := store.Score{RunJudgeID: &judge.ID, Source: fmt.Sprintf("judge:%d", judge.ID), Metric: "score",
		Score: float64(v.Score), Reasoning: v.Reasoning, Raw: resp.Text}
	if err := e.store.CompleteJudging(context.WithoutCancel(ctx), &w.Item, []store.Score{score}); err != nil {
		e.log.ErrorContext(ctx, "store verdict", "item_id", w.ID, "err", err)
		return
	}
	e.logItem(ctx, w, store.LogInfo, "verdict", fmt.Sprintf("⚖ %s · %s: score %d/10", w.Target.Label(), w.Task.TaskKey, v.Score), v.Reasoning)
}

// maybeFinish ends the run once every item is COMPLETED or FAILED.
func (e *Engine) maybeFinish(ctx context.Context, run *store.Run) (bool, error) {
	prog, err := e.store.RunProgress(ctx, run.ID)
	if err != nil {
		return false, err
	}
	if prog.Done() < prog.Total {
		return false, nil // items wait for a retry time or another worker
	}
	status, msg := store.RunFinished, fmt.Sprintf("Run finished: %d completed, %d failed", prog.Count(store.ItemCompleted), prog.Count(store.ItemFailed))
	if prog.Count(store.ItemCompleted) == 0 && prog.Total > 0 {
		status = store.RunFailed
		msg = fmt.Sprintf("Run failed: all %d item(s) failed", prog.Total)
		if err := e.store.FailRun(ctx, run.ID, "every item failed; see the failed items for reasons"); err != nil {
			return false, err
		}
	} else if _, err := e.store.SetRunStatus(ctx, run.ID, status, store.RunRunning); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return false, nil
		}
		return false, err
	}
	level := store.LogInfo
	if status == store.RunFailed {
		level = store.LogError
	}
	e.logRun(ctx, run.ID, level, "run", msg, "")
	return false, nil
}

// callFailed retries the item later, or fails it when retrying cannot help
// or its attempts are used up. raw keeps a judge's unusable reply.
func (e *Engine) callFailed(ctx context.Context, w *store.WorkItem, phase store.Phase, err error, raw string) {
	wctx := context.WithoutCancel(ctx)
	back := store.ItemNew
	if phase == store.PhaseJudging {
		back = store.ItemWaitingForJudge
	}
	if ctx.Err() != nil {
		// Shutting down: hand the item back untouched by this attempt.
		if rerr := e.store.RetryItem(wctx, &w.Item, back, time.Now().UTC(), "interrupted by shutdown"); rerr != nil {
			e.log.ErrorContext(wctx, "release item", "item_id", w.ID, "err", rerr)
		}
		return
	}
	reason := err.Error()
	if raw != "" {
		reason += "\nraw judge output: " + raw
	}
	var le *llm.Error
	permanent := errors.As(err, &le) && !le.Retryable()
	if permanent || w.Attempts >= e.cfg.MaxAttempts {
		e.failNow(ctx, w, phase, reason)
		return
	}
	delay := backoff(e.cfg.BackoffBase, e.cfg.BackoffMax, w.Attempts)
	if le != nil && le.RetryAfter > 0 {
		delay = le.RetryAfter
	}
	if rerr := e.store.RetryItem(wctx, &w.Item, back, time.Now().UTC().Add(delay), reason); rerr != nil {
		e.log.ErrorContext(wctx, "schedule retry", "item_id", w.ID, "err", rerr)
		return
	}
	e.logItem(ctx, w, store.LogWarn, "retry", fmt.Sprintf("%s · %s: attempt %d failed, retry in %s: %s",
		w.Target.Label(), w.Task.TaskKey, w.Attempts, delay.Round(time.Millisecond), err), raw)
}

func (e *Engine) failNow(ctx context.Context, w *store.WorkItem, phase store.Phase, reason string) {
	wctx := context.WithoutCancel(ctx)
	if err := e.store.FailItem(wctx, &w.Item, phase, reason); err != nil {
		e.log.ErrorContext(wctx, "fail item", "item_id", w.ID, "err", err)
		return
	}
	e.logItem(ctx, w, store.LogError, "failed", fmt.Sprintf("✗ %s · %s failed in %s", w.Target.Label(), w.Task.TaskKey, phase), reason)
}

// backoff is base·2^(attempt-1), capped, with up to 25% jitter.
func backoff(base, maxDelay time.Duration, attempt int) time.Duration {
	d := base << max(attempt-1, 0)
	if d <= 0 || d > maxDelay {
		d = maxDelay
	}
	return d + rand.N(d/4+1)
}

// renewLease extends the item's lease every Lease/3 while its call runs.
func (e *Engine) renewLease(ctx context.Context, it *store.Item) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(e.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := e.store.RenewLease(ctx, it, e.cfg.Lease); err != nil && ctx.Err() == nil {
					e.log.WarnContext(ctx, "renew lease", "item_id", it.ID, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (e *Engine) logRun(ctx context.Context, runID int64, level store.LogLevel, kind, msg, detail string) {
	e.appendLog(ctx, &store.RunLog{RunID: runID, Level: level, Kind: kind, Message: msg, Detail: detail})
}

func (e *Engine) logItem(ctx context.Context, w *store.WorkItem, level store.LogLevel, kind, msg, detail string) {
	id := w.ID
	e.appendLog(ctx, &store.RunLog{RunID: w.RunID, ItemID: &id, Level: level, Kind: kind, Message: msg, Detail: detail})
}

func (e *Engine) appendLog(ctx context.Context, entry *store.RunLog) {
	if err := e.store.AppendLog(context.WithoutCancel(ctx), entry); err != nil {
		e.log.ErrorContext(ctx, "append run log", "run_id", entry.RunID, "err", err)
	}
	e.broker.Publish(entry.RunID)
}
