package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Providers in parallel: overlap is observed through the fakes, never
// through timing. A gate holds a provider's calls until another event has
// happened (another provider was called, the judge was called); if that
// never happens the gate gives up after gateTimeout and the test fails.

const gateTimeout = 10 * time.Second

// gate opens once, when open is called; wait blocks until then.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate opens, and reports a test failure if it does
// not within gateTimeout (opening it then, so the run can end).
func (g *gate) wait(t *testing.T, what string) {
	select {
	case <-g.ch:
	case <-time.After(gateTimeout):
		t.Errorf("waited %s for %s", gateTimeout, what)
		g.open()
	}
}

// addProvider adds a provider on a fake of its own.
func addProvider(t *testing.T, st *store.Store, name string, concurrency int, script func(llmtest.ChatRequest) llmtest.Reply) *store.Provider {
	t.Helper()
	fake := llmtest.New(t, script)
	p, err := st.CreateProvider(context.Background(), store.ProviderInput{Name: name, BaseURL: fake.URL,
		Concurrency: concurrency, TimeoutSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startRun starts a run of the bundle's collection over targets, judged by judge.
func (b *bundle) startRun(t *testing.T, judge store.ModelRef, pipeline bool, targets ...store.ModelRef) *store.Run {
	t.Helper()
	run, err := b.eng.StartRun(context.Background(), store.RunInput{Judge: &judge, CollectionIDs: []int64{b.coll.ID},
		Targets: targets, Pipeline: pipeline})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// isItem reports whether a call asks a target for an answer.
func isItem(r llmtest.ChatRequest) bool { return !r.IsWarmup() && !r.IsJudge() }

// TestProvidersRunAtOnce: two providers' groups are in flight together
// (each provider's answers wait until the other's have begun), while a
// provider's own two models never overlap.
func TestProvidersRunAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 4, nil)
		both := newGate()
		var mu sync.Mutex
		called := map[string]bool{}
		inflight := map[string]map[string]int{} // provider → model → calls
		script := func(name string) func(llmtest.ChatRequest) llmtest.Reply {
			return func(r llmtest.ChatRequest) llmtest.Reply {
				if !isItem(r) {
					return llmtest.DefaultReply(r)
				}
				mu.Lock()
				called[name] = true
				if called["A"] && called["B"] {
					both.open()
				}
				if inflight[name] == nil {
					inflight[name] = map[string]int{}
				}
				inflight[name][r.Model]++
				for m, n := range inflight[name] {
					if m != r.Model && n > 0 {
						t.Errorf("provider %s: %s called while %d call(s) to %s were in flight", name, r.Model, n, m)
					}
				}
				mu.Unlock()
				both.wait(t, "both providers to be answering")
				mu.Lock()
				inflight[name][r.Model]--
				mu.Unlock()
				return llmtest.DefaultReply(r)
			}
		}
		pa := addProvider(t, st, "A", 2, script("A"))
		pb := addProvider(t, st, "B", 2, script("B"))
		run := b.startRun(t, store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"}, false,
			store.ModelRef{ProviderID: pa.ID, Model: "a1"}, store.ModelRef{ProviderID: pa.ID, Model: "a2"},
			store.ModelRef{ProviderID: pb.ID, Model: "b1"})
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		for _, it := range items(t, st, run.ID) {
			if it.Status != store.ItemCompleted {
				t.Errorf("item %s/%s: %s", it.TaskID, it.Model, it.Status)
			}
		}
	})
}

// TestFairShareOfFewSlots: with two slots in the process, a provider that
// warmed up first must leave one to the other. A's answers wait until B
// answers, and B warms up only once A has begun answering, so a process
// that let A take both slots would never call B.
func TestFairShareOfFewSlots(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		cfg := testConfig()
		cfg.MaxInFlight = 2
		b := setupWith(t, st, 6, nil, cfg)
		aAnswers, bAnswers := newGate(), newGate()
		pa := addProvider(t, st, "A", 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if isItem(r) {
				aAnswers.open()
				bAnswers.wait(t, "B to answer beside A")
			}
			return llmtest.DefaultReply(r)
		})
		pb := addProvider(t, st, "B", 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsWarmup() {
				aAnswers.wait(t, "A to answer")
			} else if isItem(r) {
				bAnswers.open()
			}
			return llmtest.DefaultReply(r)
		})
		run := b.startRun(t, store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"}, false,
			store.ModelRef{ProviderID: pa.ID, Model: "a"}, store.ModelRef{ProviderID: pb.ID, Model: "b"})
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
	})
}

// judgeOrder runs two providers' groups with a judge on a third; provider
// B's answers are held until release says so. It returns the run and how
// many answers had been given when the judge was first called.
func judgeOrder(t *testing.T, st *store.Store, pipeline bool, release func(judged *gate) func(t *testing.T)) (*store.Run, int64) {
	b := setup(t, st, 4, nil)
	judged := newGate()
	hold := release(judged)
	var answers atomic.Int64
	firstJudge := atomic.Int64{}
	firstJudge.Store(-1)
	target := func(r llmtest.ChatRequest) llmtest.Reply {
		if isItem(r) {
			answers.Add(1)
		}
		return llmtest.DefaultReply(r)
	}
	pa := addProvider(t, st, "A", 4, target)
	pb := addProvider(t, st, "B", 1, func(r llmtest.ChatRequest) llmtest.Reply {
		if isItem(r) {
			hold(t)
		}
		return target(r)
	})
	pj := addProvider(t, st, "J", 4, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			firstJudge.CompareAndSwap(-1, answers.Load())
			judged.open()
		}
		return llmtest.DefaultReply(r)
	})
	run := b.startRun(t, store.ModelRef{ProviderID: pj.ID, Model: "judge"}, pipeline,
		store.ModelRef{ProviderID: pa.ID, Model: "a"}, store.ModelRef{ProviderID: pb.ID, Model: "b"})
	final := b.waitRun(t, run.ID)
	if final.Status != store.RunFinished {
		t.Fatalf("run ended %s: %s", final.Status, final.Error)
	}
	for _, it := range items(t, st, run.ID) {
		if it.Status != store.ItemCompleted {
			t.Errorf("item %s/%s: %s", it.TaskID, it.Model, it.Status)
		}
	}
	return final, firstJudge.Load()
}

// TestPipelineJudgesWhileGroupsAnswer: with pipeline, A's answers are
// judged while B's group still answers (B waits for the first verdict).
func TestPipelineJudgesWhileGroupsAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		_, first := judgeOrder(t, st, true, func(judged *gate) func(t *testing.T) {
			return func(t *testing.T) { judged.wait(t, "a verdict while B answers") }
		})
		if first < 0 || first >= 8 {
			t.Errorf("the judge was first called after %d of 8 answers, want before B's were all given", first)
		}
	})
}

// TestWithoutPipelineJudgingWaitsForEveryAnswer: by default the judge is
// first called once every provider's groups have answered.
func TestWithoutPipelineJudgingWaitsForEveryAnswer(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		_, first := judgeOrder(t, st, false, func(*gate) func(t *testing.T) { return func(*testing.T) {} })
		if first != 8 {
			t.Errorf("the judge was first called after %d of 8 answers, want all 8", first)
		}
	})
}

// TestPipelineAcrossEngines: two engines share a pipelined run over two
// providers; every item is answered and judged exactly once, and no
// (provider, model) goes over its concurrency.
func TestPipelineAcrossEngines(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 10, nil)
		var mu sync.Mutex
		asked := map[string]int{}
		inflight, peak := map[string]int{}, map[string]int{}
		count := func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			inflight[r.Model]++
			peak[r.Model] = max(peak[r.Model], inflight[r.Model])
			if !r.IsWarmup() {
				kind := "answer"
				if r.IsJudge() {
					kind = "verdict"
				}
				asked[fmt.Sprintf("%s|%s|%s", kind, r.Model, r.Last())]++
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // the call is "in flight" while the script runs
			mu.Lock()
			inflight[r.Model]--
			mu.Unlock()
			if isItem(r) {
				// The answer names its model, so each verdict's prompt differs.
				return llmtest.Reply{Content: r.Model + " says: " + r.Last()}
			}
			return llmtest.DefaultReply(r)
		}
		pa := addProvider(t, st, "A", 2, count)
		pb := addProvider(t, st, "B", 3, count)
		second := engine.New(testConfig(), st, engine.NewBroker(), slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { second.Run(ctx) })
		defer func() { cancel(); wg.Wait() }()
		run := b.startRun(t, store.ModelRef{ProviderID: pa.ID, Model: "judge"}, true,
			store.ModelRef{ProviderID: pa.ID, Model: "a"}, store.ModelRef{ProviderID: pb.ID, Model: "b"})
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		for _, it := range items(t, st, run.ID) {
			if it.Status != store.ItemCompleted || it.Score == nil {
				t.Errorf("item %s/%s: %s, score %v", it.TaskID, it.Model, it.Status, it.Score)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		answers := 0
		for k, n := range asked {
			if n != 1 {
				t.Errorf("%s asked %d times, want once", k, n)
			}
			if k[:6] == "answer" {
				answers++
			}
		}
		if answers != 20 {
			t.Errorf("%d distinct answers asked for, want 20", answers)
		}
		// The judge shares provider A with target a but not its model: each
		// (provider, model) keeps its own limit across both engines.
		for model, limit := range map[string]int{"a": 2, "judge": 2, "b": 3} {
			if peak[model] > limit {
				t.Errorf("%s had %d calls in flight, above its provider's concurrency %d", model, peak[model], limit)
			}
		}
	})
}

// TestPipelinePairwiseComparesAnsweredTasks: a pipelined pairwise run
// compares a task's answers once all its targets have answered it, while
// B still answers other tasks (B holds its later answers until the first
// comparison is judged); every comparison is made and judged once.
func TestPipelinePairwiseComparesAnsweredTasks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 4, nil)
		compared := newGate()
		var bAnswers atomic.Int64
		pa := addProvider(t, st, "A", 4, nil)
		pb := addProvider(t, st, "B", 1, func(r llmtest.ChatRequest) llmtest.Reply {
			if isItem(r) && bAnswers.Add(1) > 1 {
				compared.wait(t, "a comparison while B answers")
			}
			return llmtest.DefaultReply(r)
		})
		var judged atomic.Int64
		pj := addProvider(t, st, "J", 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() {
				return llmtest.DefaultReply(r)
			}
			judged.Add(1)
			compared.open()
			return llmtest.Reply{Content: `{"reasoning": "A is better", "winner": "A"}`}
		})
		run, err := b.eng.StartRun(context.Background(), store.RunInput{Judge: &store.ModelRef{ProviderID: pj.ID, Model: "judge"},
			CollectionIDs: []int64{b.coll.ID}, Pairwise: true, Pipeline: true,
			Targets: []store.ModelRef{{ProviderID: pa.ID, Model: "a"}, {ProviderID: pb.ID, Model: "b"}}})
		if err != nil {
			t.Fatal(err)
		}
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		c, err := st.ComparisonProgress(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		// One pair of targets per task, each asked in both orders.
		if c.Total != 4 || c.Done != 4 || judged.Load() != 8 {
			t.Errorf("comparisons %+v after %d judge calls, want 4 done in 8 calls", c, judged.Load())
		}
	})
}

// TestPipelinePauseStopsJudgesToo: pausing a pipelined run stops the judges
// as well as the answers; resumed, it finishes with every item judged once.
func TestPipelinePauseStopsJudgesToo(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 6, nil)
		held := newGate()
		t.Cleanup(held.open)
		var asked, judged atomic.Int64
		pa := addProvider(t, st, "A", 1, func(r llmtest.ChatRequest) llmtest.Reply {
			if isItem(r) && asked.Add(1) == 3 {
				held.wait(t, "the run to be paused")
			}
			return llmtest.DefaultReply(r)
		})
		pj := addProvider(t, st, "J", 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				judged.Add(1)
			}
			return llmtest.DefaultReply(r)
		})
		ctx := context.Background()
		run := b.startRun(t, store.ModelRef{ProviderID: pj.ID, Model: "judge"}, true, store.ModelRef{ProviderID: pa.ID, Model: "a"})
		waitFor(t, func() bool { return asked.Load() == 3 && judged.Load() == 2 })
		if _, err := b.eng.Pause(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		held.open()
		// The answer in flight is stored; nothing more is asked or judged.
		waitFor(t, func() bool {
			p, _ := st.RunProgress(ctx, run.ID)
			return p.Count(store.ItemInProgress) == 0 && p.Count(store.ItemWaitingForJudge) == 1
		})
		for range 5 {
			b.eng.Wake()
		}
		if got, _ := st.Run(ctx, run.ID); got.Status != store.RunPaused || asked.Load() != 3 || judged.Load() != 2 {
			t.Fatalf("paused run: %s, %d asked, %d judged", got.Status, asked.Load(), judged.Load())
		}
		if _, err := b.eng.Resume(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished || asked.Load() != 6 || judged.Load() != 6 {
			t.Fatalf("after resume: %s, %d asked, %d judged", final.Status, asked.Load(), judged.Load())
		}
	})
}
