package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm"
	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Benchmarks of the engine against the fake provider. They report items/s
// (one model call and one judge call per item) and the ratio of achieved to
// ideal throughput: at zero latency against the fake answering the same
// calls with no engine; against a 50 ms or 200 ms fake against the calls'
// nominal latency (of-ideal), and against the same calls replayed through
// the same client with nothing stored (of-replay). Run:
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
		eng := engine.New(engine.Config{PollInterval: 50 * time.Millisecond, MaxInFlight: inFlight, ItemWeightsFunc: runs.ItemWeights},
			st, engine.NewBroker(), slog.New(slog.DiscardHandler))
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
	return env.waitEnd(b, run.ID, start)
}

// waitEnd waits until the run ends, checks that it finished with every item
// COMPLETED, and returns its items and the time from start to its end as the
// run recorded it. It reads the run's status alone, every 100 ms, so that
// the wait costs the engine it measures (on SQLite, its one connection)
// next to nothing; the recorded end time keeps the coarse poll out of the figure.
func (env *benchEnv) waitEnd(b *testing.B, runID int64, start time.Time) (items int64, took time.Duration) {
	b.Helper()
	ctx := context.Background()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		<-tick.C
		r, err := env.st.RunEnd(ctx, runID)
		if err != nil {
			b.Fatal(err)
		}
		if r.Active() {
			continue
		}
		if r.Status != store.RunFinished || r.FinishedAt == nil {
			b.Fatalf("run ended %s: %s", r.Status, r.Error)
		}
		p, err := env.st.RunProgress(ctx, runID)
		if err != nil {
			b.Fatal(err)
		}
		if p.Count(store.ItemCompleted) != p.Total {
			b.Fatalf("%d of %d items completed", p.Count(store.ItemCompleted), p.Total)
		}
		return p.Total, r.FinishedAt.Sub(start)
	}
}

func eachDB(b *testing.B, fn func(b *testing.B, st *store.Store)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, storetest.Postgres(b)) })
}

// BenchmarkThroughputZeroLatency: how fast the engine itself goes, 1,000
// tasks × 2 models, provider concurrency 16. Its ideal is the rate at which
// the same client gets the same calls answered by the same fake with
// nothing stored (idealRate); overhead is what each item costs on top.
func BenchmarkThroughputZeroLatency(b *testing.B) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		const tasks, targets, conc = 1000, 2, 16
		env := newBenchEnv(b, st, tasks, 0, conc, 1, 64)
		var items int64
		var took, cpu time.Duration
		for b.Loop() {
			before := processCPU()
			n, d := env.runOnce(b, targets)
			items, took, cpu = items+n, took+d, cpu+processCPU()-before
		}
		achieved := float64(items) / took.Seconds()
		ideal := env.idealRate(b, tasks*targets, conc)
		b.ReportMetric(achieved, "items/s")
		b.ReportMetric(achieved/ideal, "of-ideal")
		b.ReportMetric(1000/achieved-1000/ideal, "overhead-ms/item")
		// This process's CPU per item: the engine, the fake and, on SQLite, the database.
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(items), "cpu-ms/item")
	})
}

// BenchmarkLatencyBound50ms: 400 tasks, 50 ms per call, concurrency 16
// per model; ideal time is warm-up + 400·50ms/16 for answers + the same for
// judging (of-ideal), or what those calls take through the engine's client,
// in the same order, with nothing stored (of-replay: HTTP and the SDK's own
// time per call, about 1–2.5 ms here, are then in the ideal too, and the
// ratio is the engine's scheduling and storing alone).
func BenchmarkLatencyBound50ms(b *testing.B) {
	benchLatencyBound(b, 400, 16, 50*time.Millisecond)
}

// BenchmarkLatencyBound200ms: 640 tasks, 200 ms per call, concurrency 64.
func BenchmarkLatencyBound200ms(b *testing.B) {
	benchLatencyBound(b, 640, 64, 200*time.Millisecond)
}

// benchLatencyBound runs tasks × 1 model against a fake that takes lat per
// call, conc calls at a time, and reports achieved ÷ ideal time.
func benchLatencyBound(b *testing.B, tasks, conc int, lat time.Duration) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		env := newBenchEnv(b, st, tasks, lat, conc, 1, conc)
		ideal := lat + 2*time.Duration(tasks/conc)*lat
		var ratio, replayed, callMs float64
		var items int64
		for b.Loop() {
			n, took := env.runOnce(b, 1)
			items, ratio = n, ideal.Seconds()/took.Seconds()
			replayed = env.replayTime(b, tasks, conc).Seconds() / took.Seconds()
			fig, err := env.st.RunFigures(context.Background(), env.lastRun, 0)
			if err != nil || fig.Summary.Overall.AvgTimeMs == nil {
				b.Fatal(err)
			}
			callMs = *fig.Summary.Overall.AvgTimeMs
		}
		b.ReportMetric(ratio, "of-ideal")
		b.ReportMetric(replayed, "of-replay")
		b.ReportMetric(float64(items)*ratio/ideal.Seconds(), "items/s")
		// What a call really took here, HTTP and SDK included: the part of the
		// gap to the ideal that no scheduling can win back.
		b.ReportMetric(callMs, "ms/call")
	})
}

// idealRate is how many items per second the fake answers when nothing
// else runs: the last run's calls (each item's answer and its judge's
// call, as the engine sent them) replayed through the engine's client,
// conc at a time, with nothing stored.
func (env *benchEnv) idealRate(b *testing.B, items, conc int) float64 {
	b.Helper()
	reqs := env.lastRequests(b, items)
	start := time.Now()
	env.replay(b, reqs, conc)
	return float64(items) / time.Since(start).Seconds()
}

// replayTime is how long the last run's calls take through the engine's
// client with nothing stored, in the order of the run's phases: one
// warm-up call, then every answer, conc at a time, then every verdict.
func (env *benchEnv) replayTime(b *testing.B, items, conc int) time.Duration {
	b.Helper()
	reqs := env.lastRequests(b, items)
	answers, verdicts := make([]llm.Request, 0, items), make([]llm.Request, 0, items)
	for i := 0; i < len(reqs); i += 2 {
		answers, verdicts = append(answers, reqs[i]), append(verdicts, reqs[i+1])
	}
	start := time.Now()
	env.replay(b, answers[:1], 1)
	env.replay(b, answers, conc)
	env.replay(b, verdicts, conc)
	return time.Since(start)
}

// replay sends reqs through the engine's client, conc at a time.
func (env *benchEnv) replay(b *testing.B, reqs []llm.Request, conc int) {
	b.Helper()
	ctx := context.Background()
	client := env.engines[0].Client(env.provider)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(reqs)); i = next.Add(1) - 1 {
				if _, err := client.Chat(ctx, reqs[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// lastRequests rebuilds the calls of the last run: per item, the question
// to its model and the judge's prompt on the answer the run stored.
func (env *benchEnv) lastRequests(b *testing.B, items int) []llm.Request {
	b.Helper()
	ctx := context.Background()
	judges, err := env.st.RunJudges(ctx, env.lastRun)
	if err != nil || len(judges) != 1 {
		b.Fatalf("judges of run %d: %v (%d)", env.lastRun, err, len(judges))
	}
	run, err := env.st.Run(ctx, env.lastRun)
	if err != nil {
		b.Fatal(err)
	}
	targets, err := env.st.RunTargets(ctx, env.lastRun)
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := env.st.RunTasksFrom(ctx, env.lastRun, 0, items)
	if err != nil {
		b.Fatal(err)
	}
	var reqs []llm.Request
	for _, tg := range targets {
		for _, task := range tasks {
			answer := "Answer: " + task.Question
			w := &store.WorkItem{Item: store.Item{Response: &answer}, Task: task, Target: tg}
			msgs, err := engine.JudgePrompt(ctx, judges[0], run.Options, w)
			if err != nil {
				b.Fatal(err)
			}
			reqs = append(reqs,
				llm.Request{Model: tg.Model, Messages: []llm.Message{{Role: "user", Content: task.Question}}},
				llm.Request{Model: judges[0].Model, Messages: msgs})
		}
	}
	if len(reqs) != 2*items {
		b.Fatalf("%d calls rebuilt for %d items", len(reqs), items)
	}
	return reqs
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
