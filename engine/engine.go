package engine

import (
	"cmp"
	"context"
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
	// RunEndedFunc, when set, is called in the background with each run this
	// process ends (FINISHED or FAILED) and the item counts read as it
	// ended it (counting a million items takes a second; read just before
	// the run ended, they may lag a retried verdict: they stamp what is
	// stored, and give its item total, while every figure is read from the
	// items), e.g. to store the run's summary so that its first view reads
	// it instead of scanning the run.
	// Run waits for the calls under way; they get the engine's context.
	RunEndedFunc func(ctx context.Context, runID int64, counts store.Progress) error
	// ItemWeightsFunc, when set, gives a run's weights (runs.ItemWeights),
	// with which the engine keeps each item's overall as it writes its
	// scores; without it, overalls are computed from the scores when read.
	ItemWeightsFunc func(run *store.Run) []store.SourceWeight
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
	// ending holds the RunEndedFunc calls under way.
	ending sync.WaitGroup

	// versioned holds the targets whose reported model version this process
	// has recorded (or found set), so it is written once, not per answer.
	versioned sync.Map

	// agents holds this process's connections to agent targets' tools, by target.
	agentsMu sync.Mutex
	agents   map[int64]*agentConn
	callSeq  atomic.Int64 // names each MCP call slot's holder

	// active caches the list of runs to work on; a control action clears it.
	active        []store.Run
	activeFetched time.Time
	refresh       atomic.Bool
}

// runState is what the dispatcher remembers about a run between passes.
// Targets and judges never change after creation; the groups benchmarking
// now (lanes) are re-read whenever one of them has nothing left to claim.
type runState struct {
	targets map[int64]store.RunTarget
	judges  []panelJudge
	options store.RunOptions
	// weights weigh the scores written into each item's overall (see
	// Config.ItemWeightsFunc); nil when not known.
	weights []store.SourceWeight
	// lanes holds the current target of each lane (store.LaneHeads); nil:
	// read them again.
	lanes []store.RunTarget
	// split caps this process's calls per slot key while lanes run at
	// once (see lanes.go); guarded by Engine.mu.
	split split
	// pairwiseReady: this process has made the pairwise run's comparisons
	// after benchmarking; comparedAt is when a pipelined run last made those
	// of its answered tasks.
	pairwiseReady bool
	comparedAt    time.Time
	tasks         taskCache
}

// activeTTL bounds how stale the cached list of active runs may be; claims
// themselves check the run is RUNNING, so a pause takes effect at once.
const activeTTL = 250 * time.Millisecond

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
		agents:     map[int64]*agentConn{},
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
	defer e.ending.Wait()
	defer e.logs.flush(ctx) // after the calls in flight have logged their outcome
	defer e.retireAgents(nil)
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
	e.retireAgents(live)
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
	if e.cfg.ItemWeightsFunc != nil {
		withJudges := *run
		withJudges.Judges = judges
		rs.weights = e.cfg.ItemWeightsFunc(&withJudges)
	}
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
// judge). There is none when the engine stops, when this process alone
// holds more of the slot than the provider now allows (its limit was
// lowered), so that the slot shrinks back, or more than the slot's fair
// share of this process's slots (another lane started).
func (e *Engine) successor(ctx context.Context, w *store.WorkItem, p *store.Provider) *store.ClaimParams {
	if ctx.Err() != nil || e.overShare(w.RunID, w.SlotKey) {
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
func (e *Engine) chain(ctx context.Context, rs *runState, lookup providerLookup, p *store.Provider, client *llm.Client, w *store.WorkItem,
	call func(p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item) {
	for {
		next := call(p, client, w)
		if next == nil {
			return
		}
		// A successor claimed with the finished item waits while the run is at its budget.
		if over, err := e.overBudget(ctx, &store.Run{ID: next.RunID, Options: rs.options}); over || err != nil {
			e.handBack(ctx, next, errBudget)
			return
		}
		cur, err := lookup(ctx)
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

// errBudget is the reason an item is handed back when its run reaches its budget.
var errBudget = errors.New("budget reached")

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
	e.refresh.Store(true) // the next pass no longer claims for it from the cached list
	e.changed(run.ID)
	e.runEnded(ctx, run.ID, prog)
	return nil
}

// endedGrace is how long a stopping engine lets a Config.RunEndedFunc call
// under way go on: a run that ended just before the stop still gets its
// statistics stored, and the stop is not held up for long. While the
// engine runs, the call has no time limit.
const endedGrace = 30 * time.Second

// runEnded hands a run this process ended to Config.RunEndedFunc, off the
// dispatch path: what it does (a large run's summary) may take seconds.
func (e *Engine) runEnded(ctx context.Context, runID int64, counts store.Progress) {
	f := e.cfg.RunEndedFunc
	if f == nil {
		return
	}
	e.ending.Go(func() {
		call, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		go func() { // the stop's grace
			select {
			case <-call.Done():
			case <-ctx.Done():
				grace := time.NewTimer(endedGrace)
				defer grace.Stop()
				select {
				case <-call.Done():
				case <-grace.C:
					cancel()
				}
			}
		}()
		if err := f(call, runID, counts); err != nil {
			e.log.ErrorContext(ctx, "run ended", "run_id", runID, "err", err)
		}
	})
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
