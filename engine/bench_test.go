package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Benchmarks of the engine against the fake provider. They report items/s
// (one model call and one judge call per item) and, against a 50 ms fake,
// the ratio of achieved to ideal throughput. Run:
//
//	go test -run '^$' -bench . -benchtime 1x ./engine/   (TEST_DATABASE_URL for PostgreSQL)

type benchEnv struct {
	st       *store.Store
	provider *store.Provider
	coll     int64
	engines  []*engine.Engine
	lastRun  int64
	pipeline bool // runs judge answers as they come (store.RunOptions.Pipeline)
}

func newBenchEnv(b *testing.B, st *store.Store, tasks int, latency time.Duration, concurrency, engines, inFlight int) *benchEnv {
	b.Helper()
	return newBenchEnvScript(b, st, tasks, concurrency, engines, inFlight, func(r llmtest.ChatRequest) llmtest.Reply {
		rep := llmtest.DefaultReply(r)
		rep.Delay = latency
		return rep
	})
}

// newBenchEnvScript is newBenchEnv with the fake's script.
func newBenchEnvScript(b *testing.B, st *store.Store, tasks, concurrency, engines, inFlight int, script func(llmtest.ChatRequest) llmtest.Reply) *benchEnv {
	b.Helper()
	ctx := context.Background()
	fake := llmtest.New(b, script)
	fake.Forget()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "bench", BaseURL: fake.URL, Concurrency: concurrency})
	if err != nil {
		b.Fatal(err)
	}
	ins := make([]store.TaskInput, tasks)
	refs := make([]store.TaskRef, tasks)
	for i := range ins {
		ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("b%06d", i), Category: "bench", Question: fmt.Sprintf("What is %d+%d?", i, i)}
		refs[i] = store.TaskRef{Key: ins[i].TaskKey}
	}
	if err := st.CreateTasks(ctx, ins); err != nil {
		b.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "bench", TaskIDs: &refs})
	if err != nil {
		b.Fatal(err)
	}
	env := &benchEnv{st: st, provider: p, coll: col.ID}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range engines {
		eng := engine.New(engine.Config{PollInterval: 50 * time.Millisecond, MaxInFlight: inFlight}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
		env.engines = append(env.engines, eng)
		wg.Go(func() { eng.Run(runCtx) })
	}
	b.Cleanup(func() { cancel(); wg.Wait() })
	return env
}

// runOnce starts a run over the collection and waits until it ends.
func (env *benchEnv) runOnce(b *testing.B, targets int) (items int64, took time.Duration) {
	b.Helper()
	var refs []store.ModelRef
	for i := range targets {
		refs = append(refs, store.ModelRef{ProviderID: env.provider.ID, Model: fmt.Sprintf("m%d", i)})
	}
	return env.runTargets(b, refs, nil)
}

// runTargets starts a run of the targets and waits until it ends; with
// metrics (reference checks only) it has no judge.
func (env *benchEnv) runTargets(b *testing.B, targets []store.ModelRef, metrics []string) (items int64, took time.Duration) {
	b.Helper()
	ctx := context.Background()
	in := store.RunInput{CollectionIDs: []int64{env.coll}, Targets: targets, Metrics: metrics, Pipeline: env.pipeline}
	if len(metrics) == 0 {
		in.Judge = &store.ModelRef{ProviderID: env.provider.ID, Model: "judge"}
	}
	start := time.Now()
	run, err := env.engines[0].StartRun(ctx, in)
	if err != nil {
		b.Fatal(err)
	}
	env.lastRun = run.ID
	// Poll rather than follow the broker: at these rates its signals would
	// make this loop one of the busiest clients of the database.
	for {
		r, err := env.st.Run(ctx, run.ID)
		if err != nil {
			b.Fatal(err)
		}
		if !r.Active() {
			if r.Status != store.RunFinished {
				b.Fatalf("run ended %s: %s", r.Status, r.Error)
			}
			p, _ := env.st.RunProgress(ctx, run.ID)
			if p.Count(store.ItemCompleted) != p.Total {
				b.Fatalf("%d of %d items completed", p.Count(store.ItemCompleted), p.Total)
			}
			return p.Total, time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func eachDB(b *testing.B, fn func(b *testing.B, st *store.Store)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, storetest.Postgres(b)) })
}

// BenchmarkThroughputZeroLatency: how fast the engine itself goes, 1,000
// tasks × 2 models, provider concurrency 16.
func BenchmarkThroughputZeroLatency(b *testing.B) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		env := newBenchEnv(b, st, 1000, 0, 16, 1, 64)
		var items int64
		var took time.Duration
		for b.Loop() {
			n, d := env.runOnce(b, 2)
			items, took = items+n, took+d
		}
		b.ReportMetric(float64(items)/took.Seconds(), "items/s")
	})
}

// BenchmarkLatencyBound50ms: 200 tasks, 50 ms per call, concurrency 8 per
// model; ideal time is warm-up + 200·50ms/8 for answers + the same for judging.
func BenchmarkLatencyBound50ms(b *testing.B) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		const tasks, conc, lat = 200, 8, 50 * time.Millisecond
		env := newBenchEnv(b, st, tasks, lat, conc, 1, 64)
		ideal := lat + 2*time.Duration(tasks/conc)*lat
		var ratio, callMs float64
		for b.Loop() {
			_, took := env.runOnce(b, 1)
			ratio = ideal.Seconds() / took.Seconds()
			sum, err := env.st.RunSummary(context.Background(), env.lastRun, 0)
			if err != nil || sum.Overall.AvgTimeMs == nil {
				b.Fatal(err)
			}
			callMs = *sum.Overall.AvgTimeMs
		}
		b.ReportMetric(ratio, "of-ideal")
		// What a call really took here, HTTP and SDK included: the part of the
		// gap to the ideal that no scheduling can win back.
		b.ReportMetric(callMs, "ms/call")
	})
}

// BenchmarkWorkersScaling: latency-bound work shared by one engine or two
// (as separate worker processes would), each engine allowed 4 calls in flight.
func BenchmarkWorkersScaling(b *testing.B) {
	for _, engines := range []int{1, 2} {
		b.Run(fmt.Sprintf("engines=%d", engines), func(b *testing.B) {
			eachDB(b, func(b *testing.B, st *store.Store) {
				env := newBenchEnv(b, st, 160, 50*time.Millisecond, 16, engines, 4)
				var items int64
				var took time.Duration
				for b.Loop() {
					n, d := env.runOnce(b, 1)
					items, took = items+n, took+d
				}
				b.ReportMetric(float64(items)/took.Seconds(), "items/s")
			})
		})
	}
}
