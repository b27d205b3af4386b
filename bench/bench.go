package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"tribunal/engine"
	"tribunal/runs"
	"tribunal/secret"
	"tribunal/store"
)

// The scale targets: what a million-item run must meet. A 200k-item run on
// SQLite must meet the page and memory targets (postgresOnly).
const (
	createTarget    = 10.0  // s, the run and its items (its tasks and collection made before, timed apart)
	pageTarget      = 150.0 // ms, each page
	statsTarget     = 3.0   // s, each statistics endpoint
	rssTarget       = 300.0 // MB, each process throughout
	exportTarget    = 100e3 // rows/s
	exportGrowthCap = 100.0 // MB the server may grow by while exporting: flat, not the run's size
)

// Config is one bench.
type Config struct {
	// DatabaseURL is postgres://… (name a scratch database: the bench's
	// tasks and run stay in it), or empty for a SQLite file in Dir.
	DatabaseURL string
	// Dir holds the processes' logs and the SQLite database; required.
	Dir string
	// Exe is the tribunal binary the worker and server processes run.
	Exe string
	// Tasks × Models × Repeats is the run's size.
	Tasks, Models, Repeats int
	// Workers is how many `tribunal worker` processes share the run on
	// PostgreSQL; SQLite has one process, a server.
	Workers int
	// Concurrency is the fake provider's concurrency per model.
	Concurrency int
	// Latency is the fake LLM's reply time.
	Latency time.Duration
	// Duration is how long the workers run before the bulk fill completes the rest.
	Duration time.Duration
	// Progress, when set, receives a line as each phase starts.
	Progress func(string)
}

func (c *Config) postgres() bool { return c.DatabaseURL != "" }

// Run builds the run, works it, completes it and measures it, and returns
// every figure; an error means a phase could not be carried out, not that a
// target was missed.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Exe == "" || cfg.Dir == "" || cfg.Tasks < 1 || cfg.Models < 1 || cfg.Repeats < 1 {
		return nil, errors.New("bench: Exe, Dir, Tasks, Models and Repeats are required")
	}
	cfg.Workers, cfg.Concurrency = max(cfg.Workers, 1), cmp.Or(cfg.Concurrency, 64)
	if !cfg.postgres() {
		cfg.Workers = 1
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	key := randomHex(32)
	box, err := secret.NewBox(key)
	if err != nil {
		return nil, err
	}
	items := cfg.Tasks * cfg.Models * cfg.Repeats
	st, err := store.Open(ctx, store.Config{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.Dir, Box: box,
		MaxActiveRuns: 1 << 20, MaxRunItems: max(items, store.DefaultMaxRunItems)})
	if err != nil {
		return nil, fmt.Errorf("bench: open database: %w", err)
	}
	defer st.Close()
	fake, err := startFake(cfg.Latency)
	if err != nil {
		return nil, err
	}
	defer fake.Close()

	b := &bencher{cfg: cfg, st: st, fake: fake, progress: progress, rep: &Report{Dialect: string(st.Dialect())},
		env: []string{"TRIBUNAL_MASTER_KEY=" + key, "TRIBUNAL_AUTH_TOKEN=", "TRIBUNAL_LOG_LEVEL=warn",
			fmt.Sprintf("TRIBUNAL_MAX_RUN_ITEMS=%d", max(items, store.DefaultMaxRunItems))}}
	progress(fmt.Sprintf("creating %d tasks and a run of %d items on %s", cfg.Tasks, items, st.Dialect()))
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler)) // not run: the workers do the work
	c, err := create(ctx, st, eng, cfg, fake.URL, "bench-"+time.Now().UTC().Format("20060102-150405"))
	if err != nil {
		return nil, err
	}
	b.rep.RunID, b.rep.Items = c.runID, c.items
	progress(fmt.Sprintf("created in %.1f s (tasks %.1f s, collection %.1f s, run %.1f s)",
		(c.tasks + c.collection + c.run).Seconds(), c.tasks.Seconds(), c.collection.Seconds(), c.run.Seconds()))
	b.rep.add(info("create tasks", c.tasks.Seconds(), "s"), info("create collection", c.collection.Seconds(), "s"),
		postgresOnly(cfg.postgres(), below("create run (items)", c.run.Seconds(), "s", createTarget)),
		info("created: tasks + collection + run", (c.tasks+c.collection+c.run).Seconds(), "s"))
	for _, phase := range []func(context.Context) error{b.work, b.fill, b.serve} {
		if err := phase(ctx); err != nil {
			return b.rep, err
		}
	}
	return b.rep, nil
}

// bencher carries a bench from phase to phase.
type bencher struct {
	cfg      Config
	st       *store.Store
	fake     *fakeLLM
	env      []string // added to each process's environment
	progress func(string)
	rep      *Report
}

// dbArgs point a tribunal process at the bench's database.
func (b *bencher) dbArgs() []string {
	if b.cfg.postgres() {
		return []string{"--database-url", b.cfg.DatabaseURL}
	}
	return []string{"--database-url=", "--data-dir", b.cfg.Dir}
}

// work runs the worker processes on the run for the configured duration
// (or until the run ends) and reports their rate and memory.
func (b *bencher) work(ctx context.Context) error {
	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.Stop(30 * time.Second)
		}
	}()
	for i := range b.cfg.Workers {
		args := append([]string{"worker"}, b.dbArgs()...)
		name := fmt.Sprintf("worker-%d", i+1)
		if !b.cfg.postgres() {
			addr, err := freeAddr()
			if err != nil {
				return err
			}
			args, name = append([]string{"serve", "--addr", addr}, b.dbArgs()...), "server-worker"
		}
		p, err := startProc(b.cfg.Exe, b.cfg.Dir, name, b.env, args...)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	b.progress(fmt.Sprintf("%d worker process(es) working for %s", len(procs), b.cfg.Duration))
	start := time.Now()
	if _, err := b.waitWork(ctx, procs, start.Add(b.cfg.Duration)); err != nil {
		return err
	}
	for _, p := range procs {
		if err := p.Stop(30 * time.Second); err != nil {
			return err
		}
	}
	took := time.Since(start)
	prog, err := b.st.RunProgress(ctx, b.rep.RunID)
	if err != nil {
		return fmt.Errorf("bench: count items: %w", err)
	}
	b.rep.ByWorkers = prog.Count(store.ItemCompleted) + prog.Count(store.ItemFailed)
	answered := b.rep.ByWorkers + prog.Count(store.ItemWaitingForJudge) + prog.Count(store.ItemJudging)
	// An item is two calls, its answer and its verdict (pipelined: judged
	// as soon as it is answered).
	b.rep.add(info("workers: items answered", float64(answered), "items"),
		info("workers: items completed", float64(b.rep.ByWorkers), "items"),
		info("workers: completed items/s", float64(b.rep.ByWorkers)/took.Seconds(), "items/s"),
		info("workers: provider calls ÷ 2 per second", float64(b.fake.calls.Load())/2/took.Seconds(), "items/s"))
	for _, p := range procs {
		b.rep.add(below(p.name+": peak RSS", mb(p.Peak()), "MB", rssTarget))
	}
	return nil
}

// waitWork polls until deadline or until the run has ended (ended), and
// fails with the error of a process that died.
func (b *bencher) waitWork(ctx context.Context, procs []*proc, deadline time.Time) (ended bool, err error) {
	for time.Now().Before(deadline) {
		for _, p := range procs {
			if err := p.alive(); err != nil {
				return false, err
			}
		}
		run, err := b.st.Run(ctx, b.rep.RunID)
		if err != nil {
			return false, fmt.Errorf("bench: run: %w", err)
		}
		if !run.Active() {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("bench: run %d still %s: %w", run.ID, run.Status, ctx.Err())
		case <-time.After(min(200*time.Millisecond, time.Until(deadline))):
		}
	}
	return false, nil
}

// fill completes what the workers left with the bulk fill.
func (b *bencher) fill(ctx context.Context) error {
	b.progress("completing the rest with the bulk fill")
	start := time.Now()
	n, err := FillCompleted(ctx, b.st, b.rep.RunID)
	if err != nil {
		return err
	}
	b.rep.Filled = n
	b.rep.add(info("bulk fill", float64(n), "items"), info("bulk fill time", time.Since(start).Seconds(), "s"))
	return nil
}

// serve starts a server on the completed run, waits until it has ended the
// run, then times the statistics, the pages and the exports.
func (b *bencher) serve(ctx context.Context) error {
	run, err := b.st.Run(ctx, b.rep.RunID)
	if err != nil {
		return fmt.Errorf("bench: run: %w", err)
	}
	endedByWorkers := !run.Active()
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	srv, err := startProc(b.cfg.Exe, b.cfg.Dir, "server", b.env, append([]string{"serve", "--addr", addr}, b.dbArgs()...)...)
	if err != nil {
		return err
	}
	defer srv.Stop(30 * time.Second)
	base := "http://" + addr
	readyCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := waitReady(readyCtx, srv, base); err != nil {
		return err
	}
	b.progress("waiting for the server to end the run")
	start := time.Now()
	if err := b.waitEnded(readyCtx, srv); err != nil {
		return err
	}
	b.rep.add(info("server: run ended after the fill", time.Since(start).Seconds(), "s"))
	if err := b.storedStatistics(readyCtx, srv, endedByWorkers); err != nil {
		return err
	}
	first, err := firstItem(ctx, base, b.rep.RunID)
	if err != nil {
		return err
	}
	ref := runRef{id: b.rep.RunID, items: b.rep.Items, firstItem: first, model: "model-00"}
	b.progress("timing statistics and pages")
	for _, p := range statistics(ref) {
		took, _, err := timeGET(ctx, base, p.path)
		if err != nil {
			return err
		}
		b.rep.add(below(p.name, took.Seconds(), "s", statsTarget))
	}
	for _, p := range pages(ref) {
		took, _, err := timeGET(ctx, base, p.path)
		if err != nil {
			return err
		}
		b.rep.add(below(p.name, ms(took), "ms", pageTarget))
	}
	b.progress("exporting")
	for _, format := range []string{"csv", "json"} {
		e, err := export(ctx, srv, base, b.rep.RunID, format)
		if err != nil {
			return err
		}
		b.rep.add(postgresOnly(b.cfg.postgres(), atLeast("export "+format, float64(b.rep.Items)/e.took.Seconds(), "rows/s", exportTarget)),
			info("export "+format+": lines", float64(e.lines), "lines"),
			info("export "+format+": size", mb(e.bytes), "MB"),
			below("export "+format+": server RSS growth", mb(e.rssPeak-e.rssBefore), "MB", exportGrowthCap))
	}
	b.rep.add(below("server: peak RSS", mb(srv.Peak()), "MB", rssTarget))
	return srv.Stop(30 * time.Second)
}

// waitEnded waits until the run is no longer active: the server's engine
// finds every item done and ends it (storing its summary), as it would
// after the last real verdict.
func (b *bencher) waitEnded(ctx context.Context, srv *proc) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Hour)
	}
	ended, err := b.waitWork(ctx, []*proc{srv}, deadline)
	if err == nil && !ended {
		err = fmt.Errorf("bench: run %d did not end by %s", b.rep.RunID, deadline.Format(time.TimeOnly))
	}
	return err
}

// storedStatistics times the computation of the ended run's summary and
// statistics, as the engine that ends a run stores them (runs.StoreEnded),
// so that the statistics timed next are a user's first view. The server
// stores them when it ended the run; when the workers ended it (a small
// run), the engine that ended it may have stopped before it stored them,
// so the bench stores them itself (counting the run's items, which the
// engine has counted as it ended the run).
func (b *bencher) storedStatistics(ctx context.Context, srv *proc, endedByWorkers bool) error {
	steps := []struct {
		name  string
		store func(context.Context, *store.Store, int64) error
		done  func(summary, analysis bool) bool
	}{
		{"summary: computed and stored as the run ended", runs.StoreSummary, func(summary, _ bool) bool { return summary }},
		{"analysis: computed and stored after the summary", runs.StoreAnalysis, func(_, analysis bool) bool { return analysis }},
	}
	for _, step := range steps {
		start := time.Now()
		var err error
		if endedByWorkers {
			err = step.store(ctx, b.st, b.rep.RunID)
		} else {
			err = b.waitStored(ctx, srv, step.done)
		}
		if err != nil {
			return err
		}
		b.rep.add(postgresOnly(b.cfg.postgres(), below(step.name, time.Since(start).Seconds(), "s", statsTarget)))
	}
	return nil
}

// waitStored waits until the engine that ended the run has stored what
// done asks for of its summary and statistics, as it does for every run it
// ends (the summary first), so that the statistics timed next are a user's
// first view of a finished run.
func (b *bencher) waitStored(ctx context.Context, srv *proc, done func(summary, analysis bool) bool) error {
	for {
		if err := srv.alive(); err != nil {
			return err
		}
		summary, analysis, err := b.st.SnapshotsStored(ctx, b.rep.RunID)
		if err != nil {
			return fmt.Errorf("bench: stored statistics: %w", err)
		}
		if done(summary, analysis) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: run %d's statistics not stored: %w", b.rep.RunID, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func mb(bytes int64) float64     { return float64(bytes) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
