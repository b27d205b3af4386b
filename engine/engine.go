package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tribunal/egress"
	"tribunal/llm"
	"tribunal/store"
)

// WarmupPrompt is the first call to each (provider, model) of a run.
const WarmupPrompt = "Hello, World!"

// Config tunes the engine; zero values get defaults.
type Config struct {
	// WorkerID names this process in item leases.
	WorkerID string
	// PollInterval is how often an idle engine looks for work it was not told about.
	PollInterval time.Duration
	// Lease is how long a claim holds without renewal; renewed every Lease/3.
	Lease time.Duration
	// MaxAttempts is how many times a call is tried before the item fails.
	MaxAttempts int
	// BackoffBase is the first retry delay; it doubles per attempt, with jitter.
	BackoffBase time.Duration
	// BackoffMax caps the retry delay.
	BackoffMax time.Duration
	// MaxInFlight caps this process's concurrent provider calls.
	MaxInFlight int
	// Egress says where provider calls may connect; nil is egress.Default.
	Egress *egress.Policy
	// ObserveCallFunc, when set, sees each provider call: how long it took and its error (nil: success).
	ObserveCallFunc func(provider, model string, took time.Duration, err error)
	// ObserveFailureFunc, when set, sees each failed attempt of an item and whether it will be retried.
	ObserveFailureFunc func(phase store.Phase, retried bool)
}

// Engine claims items and runs them, up to each provider's concurrency.
type Engine struct {
	store  *store.Store
	broker *Broker
	log    *slog.Logger
	cfg    Config
	wake   chan struct{}
	slots  chan struct{} // one token per call in flight in this process

	httpClient *http.Client // shared by every provider's client
	notify     *notifier
	logs       *logBuffer

	mu        sync.Mutex
	providers map[int64]cachedProvider
	runs      map[int64]*runState
	writes    *writeQueues
	// calls counts this process's calls in flight per slot key (see start).
	calls    map[string]int
	inflight sync.WaitGroup

	// active caches the list of runs to work on; a control action clears it.
	active        []store.Run
	activeFetched time.Time
	refresh       atomic.Bool
}

// runState is what the dispatcher remembers about a run between passes.
// Targets and judges never change after creation; the current target is
// re-read whenever it has nothing left to claim.
type runState struct {
	targets map[int64]store.RunTarget
	judges  []panelJudge
	options store.RunOptions
	current *store.RunTarget
	// pairwiseReady: this process has made the pairwise run's comparisons.
	pairwiseReady bool
	tasks         taskCache
}

// activeTTL bounds how stale the cached list of active runs may be; claims
// themselves check the run is RUNNING, so a pause takes effect at once.
const activeTTL = 250 * time.Millisecond

// cachedProvider spares a query per call; edits apply within providerTTL,
// and at once in the process that made them (see Refresh).
type cachedProvider struct {
	p       *store.Provider
	fetched time.Time
}

const providerTTL = time.Second

// New builds an engine.
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
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, 64)
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("worker_id", cfg.WorkerID)
	e := &Engine{
		store: st, broker: broker, log: logger, cfg: cfg,
		wake:       make(chan struct{}, 1),
		slots:      make(chan struct{}, cfg.MaxInFlight),
		httpClient: llm.NewHTTPClient(10*time.Second, cfg.Egress),
		notify:     newNotifier(st, logger),
		providers:  map[int64]cachedProvider{},
		runs:       map[int64]*runState{},
		calls:      map[string]int{},
		writes:     newWriteQueues(dialect(st)),
	}
	e.logs = newLogBuffer(st, logger, e.changed)
	return e
}

// dialect is the store's; a store-less engine (tribunal models --file) only makes clients.
func dialect(st *store.Store) store.Dialect {
	if st == nil {
		return ""
	}
	return st.Dialect()
}

func endpoint(p *store.Provider) llm.Endpoint {
	h := make(map[string]string, len(p.Headers))
	for _, x := range p.Headers {
		h[x.Key] = x.Value
	}
	return llm.Endpoint{BaseURL: p.BaseURL, ModelsEndpoint: p.ModelsEndpoint, InferenceEndpoint: p.InferenceEndpoint,
		Headers: h, Timeout: time.Duration(p.TimeoutSeconds) * time.Second,
		ConnectTimeout: time.Duration(p.ConnectTimeoutSeconds) * time.Second}
}

// Client returns a client for a provider loaded with its secrets.
func (e *Engine) Client(p *store.Provider) *llm.Client { return llm.New(endpoint(p), e.httpClient) }

// HTTPClient is the engine's client for the servers runs call (providers,
// agents' MCP servers): connections go only where the egress policy lets
// providers go, and redirects stay on their origin.
func (e *Engine) HTTPClient() *http.Client { return e.httpClient }

// Broker returns the engine's change broker.
func (e *Engine) Broker() *Broker { return e.broker }

// Refresh makes the engine re-read which runs are active and the providers'
// settings, then look for work.
func (e *Engine) Refresh() {
	e.mu.Lock()
	clear(e.providers)
	e.mu.Unlock()
	e.refresh.Store(true)
	e.Wake()
}

// Wake makes an idle engine look for work now.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends, then waits for the calls in flight, which hand
// their items back. Runs left RUNNING by a crash are picked up, and their
// expired leases rescued, like any other.
func (e *Engine) Run(ctx context.Context) error {
	e.log.InfoContext(ctx, "engine started", "max_in_flight", e.cfg.MaxInFlight)
	var bg sync.WaitGroup
	bg.Go(func() { e.rescueLoop(ctx) })
	bg.Go(func() { e.notify.run(ctx) })
	bg.Go(func() { e.logs.run(ctx) })
	bg.Go(func() { e.purgeLoop(ctx) })
	defer bg.Wait()
	defer e.logs.flush(ctx) // after the calls in flight have logged their outcome
	defer e.inflight.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastPass time.Time
	for {
		select {
		case <-ctx.Done():
			e.log.InfoContext(context.WithoutCancel(ctx), "engine stopping")
			return nil
		case <-timer.C:
		case <-e.wake:
			if len(e.slots) > 0 && time.Since(lastPass) < 2*passBatchWindow {
				// Calls are finishing in quick succession: gather a few more
				// before claiming, so one pass refills several slots.
				select {
				case <-ctx.Done():
				case <-time.After(passBatchWindow):
				}
			}
		}
		lastPass = time.Now()
		if err := e.pass(ctx); err != nil && ctx.Err() == nil {
			e.log.ErrorContext(ctx, "engine pass", "err", err)
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(jitter(e.cfg.PollInterval))
	}
}

// passBatchWindow is how long a busy engine waits after a wake-up before claiming.
const passBatchWindow = 2 * time.Millisecond

func jitter(d time.Duration) time.Duration { return d + rand.N(d/10+1) }

// A deleted run's rows are removed a batch at a time, with a pause between
// batches in which requests get SQLite's one connection; runs deleted before
// a restart are picked up on the next tick.
const (
	purgeInterval = time.Second
	purgePause    = 50 * time.Millisecond
)

func (e *Engine) purgeLoop(ctx context.Context) {
	t := time.NewTicker(purgeInterval)
	defer t.Stop()
	for {
		more, err := e.store.PurgeDeletedRuns(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.ErrorContext(ctx, "purge deleted runs", "err", err)
		}
		next := t.C
		if more && err == nil {
			next = time.After(purgePause)
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

func (e *Engine) rescueLoop(ctx context.Context) {
	t := time.NewTicker(max(e.cfg.Lease/2, 10*time.Millisecond))
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

// pass starts whatever work the active runs allow now.
func (e *Engine) pass(ctx context.Context) error {
	runs, err := e.activeRuns(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i := range runs {
		if err := e.dispatch(ctx, &runs[i]); err != nil {
			errs = append(errs, fmt.Errorf("run %d: %w", runs[i].ID, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) activeRuns(ctx context.Context) ([]store.Run, error) {
	if !e.refresh.Swap(false) && e.active != nil && time.Since(e.activeFetched) < activeTTL {
		return e.active, nil
	}
	runs, err := e.store.ActiveRuns(ctx)
	if err != nil {
		return nil, err
	}
	e.active, e.activeFetched = runs, time.Now()
	live := map[int64]bool{}
	for _, r := range runs {
		live[r.ID] = true
	}
	e.mu.Lock()
	for id := range e.runs {
		if !live[id] {
			delete(e.runs, id) // finished, paused or deleted: forget its cache
		}
	}
	e.mu.Unlock()
	return runs, nil
}

// state returns the dispatcher's memory of a run, loading its targets and judges once.
func (e *Engine) state(ctx context.Context, run *store.Run) (*runState, error) {
	runID := run.ID
	e.mu.Lock()
	rs := e.runs[runID]
	e.mu.Unlock()
	if rs != nil {
		return rs, nil
	}
	targets, err := e.store.RunTargets(ctx, runID)
	if err != nil {
		return nil, err
	}
	judges, err := e.store.RunJudges(ctx, runID)
	if err != nil {
		return nil, err
	}
	rs = &runState{targets: map[int64]store.RunTarget{}, options: run.Options}
	for _, j := range judges {
		rs.judges = append(rs.judges, newPanelJudge(ctx, j, run.Options))
	}
	for _, t := range targets {
		rs.targets[t.ID] = t
	}
	e.mu.Lock()
	e.runs[runID] = rs
	e.mu.Unlock()
	return rs, nil
}

func (e *Engine) freeSlots() int { return cap(e.slots) - len(e.slots) }

// start runs fn in the background on one in-flight slot. slot names the
// (provider, model) the calls go to ("" for calls outside the concurrency
// limit).
func (e *Engine) start(slot string, fn func()) {
	e.slots <- struct{}{}
	e.mu.Lock()
	e.calls[slot]++
	e.mu.Unlock()
	e.inflight.Go(func() {
		defer func() {
			e.mu.Lock()
			e.calls[slot]--
			e.mu.Unlock()
			<-e.slots
			e.Wake() // a slot is free, and the run may be done
		}()
		fn()
	})
}

// slotFull reports whether this process alone already makes limit calls to
// a (provider, model): a claim could then take nothing, so it is not tried.
func (e *Engine) slotFull(slot string, limit int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return limit > 0 && e.calls[slot] >= limit
}

// successor is what a call's result write claims to take its place on the
// slot: an item of the same run in the same state, for the same target (or
// judge). There is none when the engine stops, or when this process alone
// holds more of the slot than the provider now allows (its limit was
// lowered), so that the slot shrinks back.
func (e *Engine) successor(ctx context.Context, w *store.WorkItem, p *store.Provider) *store.ClaimParams {
	if ctx.Err() != nil {
		return nil
	}
	e.mu.Lock()
	over := p.Concurrency > 0 && e.calls[w.SlotKey] > p.Concurrency
	e.mu.Unlock()
	if over {
		return nil
	}
	next := &store.ClaimParams{RunID: w.RunID, From: store.ItemNew, To: store.ItemInProgress, TargetID: w.RunTargetID,
		WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: 1, SlotKey: w.SlotKey, SlotLimit: p.Concurrency}
	if w.Status == store.ItemJudging {
		pos := w.JudgePos
		next.From, next.To, next.TargetID, next.JudgePos = store.ItemWaitingForJudge, store.ItemJudging, 0, &pos
	}
	return next
}

// chain runs an item's call and then, for as long as the store hands one
// back with the result, its successor's, on the same slot with no claim
// round trip in between. The provider is looked up again (cached) for each
// call, so an edit reaches a long chain too.
func (e *Engine) chain(ctx context.Context, rs *runState, providerID *int64, p *store.Provider, client *llm.Client, w *store.WorkItem,
	call func(p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item) {
	for {
		next := call(p, client, w)
		if next == nil {
			return
		}
		cur, err := e.provider(ctx, providerID)
		if errors.Is(err, errProviderDeleted) {
			e.handBack(ctx, next, err) // the dispatcher fails the provider's items
			return
		}
		if err == nil && cur != p {
			p, client = cur, e.Client(cur)
		}
		nw, err := e.workItems(ctx, rs, []store.Item{*next})
		if err != nil {
			e.log.ErrorContext(ctx, "load successor", "item_id", next.ID, "err", err)
			e.handBack(ctx, next, err)
			return
		}
		w = &nw[0]
	}
}

// errShutdown is the reason an item is handed back when its worker stops.
var errShutdown = errors.New("interrupted by shutdown")

// handBack returns a claimed item unworked, to be claimed again at once.
func (e *Engine) handBack(ctx context.Context, it *store.Item, reason error) {
	back := store.ItemNew
	if it.Status == store.ItemJudging {
		back = store.ItemWaitingForJudge
	}
	if err := e.store.RetryItem(context.WithoutCancel(ctx), it, back, time.Now().UTC(), reason.Error(), false); err != nil {
		e.log.ErrorContext(ctx, "hand back item", "item_id", it.ID, "err", err)
	}
}

// dispatch claims what one run may start now and starts it.
func (e *Engine) dispatch(ctx context.Context, run *store.Run) error {
	if run.Status == store.RunPending {
		r, err := e.store.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending)
		if err != nil {
			if errors.Is(err, store.ErrConflict) {
				return nil // paused or cancelled meanwhile
			}
			return err
		}
		e.logRun(ctx, run.ID, store.LogInfo, "run", fmt.Sprintf("Run started: %d target(s), judges: %s", len(r.Targets), judgeName(r)), "")
		run.Status = r.Status
	}
	rs, err := e.state(ctx, run)
	if err != nil {
		return err
	}
	if run.Phase == store.PhaseBenchmarking {
		done, err := e.dispatchBenchmark(ctx, run, rs)
		if err != nil || !done {
			return err
		}
		run.Phase = store.PhaseJudging
	}
	if run.Options.Pairwise {
		return e.dispatchPairwise(ctx, run, rs)
	}
	return e.dispatchJudging(ctx, run, rs)
}

// dispatchBenchmark starts the current target's items; done reports that
// benchmarking is over and the run has moved to JUDGING.
func (e *Engine) dispatchBenchmark(ctx context.Context, run *store.Run, rs *runState) (done bool, err error) {
	tg := rs.current
	if tg == nil || tg.WarmupStatus != store.WarmupOK {
		if tg, err = e.store.NextTarget(ctx, run.ID); err != nil {
			return false, err
		}
		rs.current = tg
	}
	if tg == nil {
		prog, err := e.store.RunProgress(ctx, run.ID)
		if err != nil {
			return false, err
		}
		if err := e.store.SetRunPhase(ctx, run.ID, store.PhaseJudging); err != nil {
			return false, err
		}
		e.logRun(ctx, run.ID, store.LogInfo, "phase", fmt.Sprintf("Benchmarking done (%d answered, %d failed); judging starts",
			prog.Count(store.ItemWaitingForJudge), prog.Count(store.ItemFailed)), "")
		return true, nil
	}
	p, err := e.provider(ctx, tg.ProviderID)
	if errors.Is(err, errProviderDeleted) {
		rs.current = nil
		_, ferr := e.failTarget(ctx, run.ID, tg, "provider "+tg.ProviderName+": "+err.Error())
		return false, ferr
	}
	if err != nil {
		return false, err // a passing database error: the next pass tries again
	}
	switch tg.WarmupStatus {
	case store.WarmupFailed:
		// Items a rescuer returned after the warm-up failed fail the same way.
		_, err := e.store.FailTargetItems(ctx, tg.ID, tg.WarmupError)
		return false, err
	case store.WarmupPending:
		if e.freeSlots() == 0 {
			return false, nil
		}
		ok, err := e.store.ClaimWarmup(ctx, tg.ID, e.cfg.WorkerID, e.cfg.Lease)
		if err != nil || !ok {
			return false, err // another worker is warming it up
		}
		client := e.Client(p)
		target := *tg
		e.start("", func() { e.warmup(ctx, run.ID, &target, p, client) })
		return false, nil
	}
	n := e.freeSlots()
	slot := store.SlotKey(tg.ProviderID, tg.Model)
	if n == 0 || e.slotFull(slot, p.Concurrency) {
		return false, nil
	}
	items, err := e.store.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, TargetID: tg.ID, From: store.ItemNew,
		To: store.ItemInProgress, WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n,
		SlotKey: slot, SlotLimit: p.Concurrency})
	if err != nil || len(items) == 0 {
		rs.current = nil // look again which target is current
		return false, err
	}
	work, err := e.workItems(ctx, rs, items)
	if err != nil {
		return false, err
	}
	client := e.Client(p)
	for i := range work {
		w := &work[i]
		e.start(slot, func() {
			e.chain(ctx, rs, tg.ProviderID, p, client, w, func(p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
				return e.benchmark(ctx, rs, p, client, w)
			})
		})
	}
	return false, nil
}

// dispatchJudging starts judge calls: each judge of the panel takes the
// items waiting for it, up to its own provider's concurrency.
func (e *Engine) dispatchJudging(ctx context.Context, run *store.Run, rs *runState) error {
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
		params := store.ClaimParams{RunID: run.ID, From: store.ItemWaitingForJudge, To: store.ItemJudging,
			WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n, SlotKey: store.SlotKey(pj.ProviderID, pj.Model), JudgePos: &pos}
		if perr == nil {
			if e.slotFull(params.SlotKey, p.Concurrency) {
				claimed = true // this judge's calls are all in flight: the run is not done
				continue
			}
			params.SlotLimit = p.Concurrency
		}
		items, err := e.store.ClaimItems(ctx, params)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			continue
		}
		claimed = true
		work, err := e.workItems(ctx, rs, items)
		if err != nil {
			return err
		}
		if perr != nil || pj.err != nil {
			reason := fmt.Sprintf("judge %s: ", pj.Name)
			if perr != nil {
				reason += "provider " + pj.ProviderName + ": " + perr.Error()
			} else {
				reason += pj.err.Error()
			}
			for i := range work {
				e.failNow(ctx, &work[i], store.PhaseJudging, reason, false)
			}
			continue
		}
		client := e.Client(p)
		last := pos == len(rs.judges)-1
		for i := range work {
			w := &work[i]
			e.start(params.SlotKey, func() {
				e.chain(ctx, rs, pj.ProviderID, p, client, w, func(p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
					return e.judge(ctx, pj, last, p, client, w)
				})
			})
		}
	}
	if !claimed {
		return e.maybeFinish(ctx, run)
	}
	return nil
}

func judgeName(r *store.Run) string {
	if len(r.Judges) == 0 {
		return "none (reference checks only)"
	}
	names := make([]string, len(r.Judges))
	for i, j := range r.Judges {
		names[i] = j.Name
	}
	return strings.Join(names, ", ")
}

// errProviderDeleted means a run's provider no longer exists: its items cannot run.
var errProviderDeleted = errors.New("the provider was deleted")

func (e *Engine) provider(ctx context.Context, id *int64) (*store.Provider, error) {
	if id == nil {
		return nil, errProviderDeleted
	}
	e.mu.Lock()
	c, ok := e.providers[*id]
	e.mu.Unlock()
	if ok && time.Since(c.fetched) < providerTTL {
		return c.p, nil
	}
	p, err := e.store.ProviderWithSecrets(ctx, *id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errProviderDeleted
	}
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.providers[*id] = cachedProvider{p: p, fetched: time.Now()}
	e.mu.Unlock()
	return p, nil
}

// waitRate blocks until the provider's requests-per-minute allow a call.
// The reservation lives in the database, so the rate holds for all
// processes together; calls are spread evenly, never in bursts.
func (e *Engine) waitRate(ctx context.Context, p *store.Provider) error {
	if p.RequestsPerMinute <= 0 {
		return nil
	}
	at, err := e.store.ReserveRate(ctx, p.ID, time.Minute/time.Duration(p.RequestsPerMinute))
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(at)):
		return nil
	}
}

func (e *Engine) chat(ctx context.Context, p *store.Provider, client *llm.Client, req llm.Request) (llm.Response, error) {
	if err := e.waitRate(ctx, p); err != nil {
		return llm.Response{}, err
	}
	start := time.Now()
	resp, err := client.Chat(ctx, req)
	if f := e.cfg.ObserveCallFunc; f != nil {
		f(p.Name, req.Model, time.Since(start), err)
	}
	return resp, err
}

func (e *Engine) warmup(ctx context.Context, runID int64, tg *store.RunTarget, p *store.Provider, client *llm.Client) {
	stop := e.renew(ctx, func(ctx context.Context) error { return e.store.RenewWarmup(ctx, tg.ID, e.cfg.WorkerID, e.cfg.Lease) })
	defer stop()
	e.logRun(ctx, runID, store.LogInfo, "warmup", fmt.Sprintf("Warming up %s", tg.Label()), "")
	req := llm.Request{Model: tg.Model, Messages: []llm.Message{{Role: "user", Content: WarmupPrompt}}}
	// Tried like an item's call, so one passing 500 or 429 does not fail the whole group.
	resp, err := e.chat(ctx, p, client, req)
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
			resp, err = e.chat(ctx, p, client, req)
		}
	}
	if ctx.Err() != nil {
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
	if err := e.store.SetWarmup(wctx, tg.ID, store.WarmupOK, ""); err != nil {
		e.log.ErrorContext(ctx, "store warm-up", "target_id", tg.ID, "err", err)
		return
	}
	e.logRun(ctx, runID, store.LogInfo, "warmup", fmt.Sprintf("%s is ready (warm-up took %d ms)", tg.Label(), resp.Duration.Milliseconds()), "")
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

// SystemPrompt is the system prompt an item's model is sent: the task's own, else the target's, else the run's.
func SystemPrompt(w *store.WorkItem, opts store.RunOptions) string {
	return cmp.Or(strings.TrimSpace(w.Task.SystemPrompt), strings.TrimSpace(w.Target.Settings.SystemPrompt), opts.SystemPrompt)
}

// benchmark asks the target for the item's answer and stores it; it returns
// the successor claimed with the result, if any (see chain).
func (e *Engine) benchmark(ctx context.Context, rs *runState, p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
	stop := e.renewLease(ctx, &w.Item)
	defer stop()
	set := w.Target.Settings
	req := llm.Request{Model: w.Target.Model, Temperature: set.Temperature, MaxTokens: set.MaxTokens, ReasoningEffort: set.ReasoningEffort}
	if sp := SystemPrompt(w, rs.options); sp != "" {
		req.Messages = append(req.Messages, llm.Message{Role: "system", Content: sp})
	}
	// A multi-turn task is one conversation: each turn sees the answers before it.
	var total llm.Response
	turns := w.Task.AllTurns()
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
	}
	record, _ := json.Marshal(requestRecord{Model: req.Model, Messages: req.Messages[:len(req.Messages)-1], Provider: w.Target.ProviderName, Settings: set})
	res := store.BenchmarkResult{Request: string(record), Response: total.Text, TimeMs: total.Duration.Milliseconds(),
		PromptTokens: total.PromptTokens, CompletionTokens: total.CompletionTokens, TokensPerS: total.TokensPerSecond(),
		CostUSD: w.Target.Price.Cost(total.PromptTokens, total.CompletionTokens), Judged: len(rs.judges) > 0 && !rs.options.Pairwise}
	if len(turns) > 1 {
		b, _ := json.Marshal(answers)
		list := string(b)
		res.Answers = &list
	}
	res.Scores = append(e.runChecks(w, rs.options, total.Text), measures(rs.options, res)...)
	entry := itemLog(w, store.LogInfo, "answer", fmt.Sprintf("%s · %s answered (%d ms, %d tokens, %.1f tok/s)",
		w.Target.Label(), w.Task.TaskKey, res.TimeMs, res.CompletionTokens, res.TokensPerS),
		"PROMPT\n"+strings.Join(turns, "\n---\n")+"\n\nRESPONSE\n"+strings.Join(answers, "\n---\n"))
	c := store.BenchmarkCompletion(&w.Item, res)
	e.complete(ctx, c, e.successor(ctx, w, p))
	if c.Err != nil {
		e.notStored(ctx, w, store.PhaseBenchmarking, c.Err)
		return nil
	}
	e.logs.add(entry)
	return c.Successor
}

func decodeAnswers(s string) ([]string, error) {
	var list []string
	err := json.Unmarshal([]byte(s), &list)
	return list, err
}

// maybeFinish ends the run once every item is COMPLETED or FAILED.
func (e *Engine) maybeFinish(ctx context.Context, run *store.Run) error {
	prog, err := e.store.RunProgress(ctx, run.ID)
	if err != nil {
		return err
	}
	if prog.Done() < prog.Total {
		return nil // items wait for a retry time, or are in flight
	}
	var failedComparisons int64
	if run.Options.Pairwise {
		wait, n, err := e.pairwisePending(ctx, run)
		if err != nil || wait {
			return err
		}
		failedComparisons = n
	}
	// Entries of the run's last items go first, so the closing entry is the last.
	e.logs.flush(ctx)
	// The store ends the run only if no item went back meanwhile (retry judging).
	to, reason := store.RunFinished, ""
	entry := &store.RunLog{RunID: run.ID, Level: store.LogInfo, Kind: "run", Message: fmt.Sprintf("Run finished: %d completed, %d failed",
		prog.Count(store.ItemCompleted), prog.Count(store.ItemFailed))}
	switch {
	case prog.Count(store.ItemCompleted) == 0 && prog.Total > 0:
		to, reason = store.RunFailed, "every item failed; see the failed items for reasons"
		entry = &store.RunLog{RunID: run.ID, Level: store.LogError, Kind: "run", Message: fmt.Sprintf("Run failed: all %d item(s) failed", prog.Total)}
	case failedComparisons > 0:
		to, reason = store.RunFailed, "every pairwise comparison failed; see the run log for reasons"
		entry = &store.RunLog{RunID: run.ID, Level: store.LogError, Kind: "run", Message: fmt.Sprintf("Run failed: all %d comparison(s) failed", failedComparisons)}
	}
	ended, err := e.store.EndRun(ctx, run.ID, to, reason, entry)
	if err != nil || !ended {
		return err // not ended: another worker finished it, the user paused it, or work went back
	}
	e.changed(run.ID)
	return nil
}

// notStored handles a result the store refused: unless another worker owns
// the item now, storing counts as a failed attempt, so a result that can
// never be stored fails the item instead of being asked for forever.
func (e *Engine) notStored(ctx context.Context, w *store.WorkItem, phase store.Phase, err error) {
	if errors.Is(err, store.ErrLeaseLost) {
		e.log.WarnContext(ctx, "result not stored: the item's lease was lost", "item_id", w.ID)
		return
	}
	e.log.ErrorContext(ctx, "store result", "item_id", w.ID, "phase", phase, "err", err)
	e.callFailed(ctx, w, phase, fmt.Errorf("storing the result: %w", err), "")
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
		e.handBack(ctx, &w.Item, errShutdown) // for the next worker
		return
	}
	reason := err.Error()
	if raw != "" {
		reason += "\nraw judge output: " + raw
	}
	delay, retry := e.retryDelay(err, w.Failures+1)
	if f := e.cfg.ObserveFailureFunc; f != nil {
		f(phase, retry)
	}
	if !retry {
		e.failNow(ctx, w, phase, reason, true)
		return
	}
	entry := itemLog(w, store.LogWarn, "retry", fmt.Sprintf("%s · %s: attempt %d failed, retry in %s: %s",
		w.Target.Label(), w.Task.TaskKey, w.Failures+1, delay.Round(time.Millisecond), err), raw)
	if rerr := e.store.RetryItem(wctx, &w.Item, back, time.Now().UTC().Add(delay), reason, true); rerr != nil {
		e.log.ErrorContext(wctx, "schedule retry", "item_id", w.ID, "err", rerr)
		return
	}
	e.logs.add(entry)
}

// failNow fails a claimed item; called says whether its provider call was made.
func (e *Engine) failNow(ctx context.Context, w *store.WorkItem, phase store.Phase, reason string, called bool) {
	wctx := context.WithoutCancel(ctx)
	entry := itemLog(w, store.LogError, "failed", fmt.Sprintf("✗ %s · %s failed in %s", w.Target.Label(), w.Task.TaskKey, phase), reason)
	if err := e.store.FailItem(wctx, &w.Item, phase, reason, called); err != nil {
		e.log.ErrorContext(wctx, "fail item", "item_id", w.ID, "err", err)
		return
	}
	e.logs.add(entry)
}

// retryDelay is how long to wait before calling again after the failures-th
// failed call (the items' policy, which comparisons and warm-ups share):
// the backoff, or the provider's Retry-After. retry is false when trying
// again cannot help (400, 401, 403, 404…) or the attempts are used up.
func (e *Engine) retryDelay(err error, failures int) (delay time.Duration, retry bool) {
	var le *llm.Error
	if errors.As(err, &le) && !le.Retryable() || failures >= e.cfg.MaxAttempts {
		return 0, false
	}
	if le != nil && le.RetryAfter > 0 {
		return le.RetryAfter, true
	}
	return backoff(e.cfg.BackoffBase, e.cfg.BackoffMax, failures), true
}

// backoff is base·2^(attempt-1), capped, with up to 25% jitter.
func backoff(base, maxDelay time.Duration, attempt int) time.Duration {
	d := base << max(attempt-1, 0)
	if d <= 0 || d > maxDelay {
		d = maxDelay
	}
	return d + rand.N(d/4+1)
}

// renewLease extends the item's lease while its call runs.
func (e *Engine) renewLease(ctx context.Context, it *store.Item) (stop func()) {
	return e.renew(ctx, func(ctx context.Context) error { return e.store.RenewLease(ctx, it, e.cfg.Lease) })
}

// renew calls renewFunc every Lease/3 until stopped.
func (e *Engine) renew(ctx context.Context, renewFunc func(context.Context) error) (stop func()) {
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
				if err := renewFunc(ctx); err != nil && ctx.Err() == nil {
					e.log.WarnContext(ctx, "renew lease", "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (e *Engine) logRun(ctx context.Context, runID int64, level store.LogLevel, kind, msg, detail string) {
	e.appendLog(ctx, &store.RunLog{RunID: runID, Level: level, Kind: kind, Message: msg, Detail: detail})
}

// itemLog is a live-log entry about an item, written with its outcome.
func itemLog(w *store.WorkItem, level store.LogLevel, kind, msg, detail string) *store.RunLog {
	id := w.ID
	return &store.RunLog{RunID: w.RunID, ItemID: &id, Level: level, Kind: kind, Message: msg, Detail: detail}
}

// logRun records a run-level event; state changes are signalled at once,
// the entry itself lands with the next log flush.
func (e *Engine) appendLog(_ context.Context, entry *store.RunLog) {
	e.logs.add(entry)
}

// changed tells this process's subscribers, and other processes, that a run changed.
func (e *Engine) changed(runID int64) {
	e.broker.Publish(runID)
	e.notify.add(runID)
}
