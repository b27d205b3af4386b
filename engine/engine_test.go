package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

type bundle struct {
	st       *store.Store
	eng      *engine.Engine
	fake     *llmtest.Server
	provider *store.Provider
	coll     *store.CollectionDetail
	// cancel tells the engine to stop; stop does and waits for it (the
	// test's end does too).
	cancel context.CancelFunc
	stop   func()
}

// setup makes a store with a provider on a fake server, n tasks in one
// collection, and an engine running until the test ends.
func setup(t *testing.T, st *store.Store, n int, script func(llmtest.ChatRequest) llmtest.Reply) *bundle {
	t.Helper()
	return setupWith(t, st, n, script, testConfig())
}

func testConfig() engine.Config {
	return engine.Config{PollInterval: 20 * time.Millisecond, BackoffBase: 10 * time.Millisecond, Lease: 3 * time.Second,
		ItemWeightsFunc: runs.ItemWeights}
}

// setupWith is setup with the engine's config.
func setupWith(t *testing.T, st *store.Store, n int, script func(llmtest.ChatRequest) llmtest.Reply, cfg engine.Config) *bundle {
	t.Helper()
	ctx := context.Background()
	fake := llmtest.New(t, script)
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", Type: store.ProviderCustom, BaseURL: fake.URL, TimeoutSeconds: 2,
		Headers: []store.Header{{Key: "Authorization", Value: "Bearer sk-test-1234567890", IsSecret: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var refs []store.TaskRef
	for i := range n {
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: fmt.Sprintf("t%03d", i), Category: "math",
			Question: fmt.Sprintf("What is %d+%d?", i, i), Excellent: fmt.Sprint(2 * i)})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, store.TaskRef{ID: tk.ID})
	}
	coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(cfg, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(runCtx) })
	stop := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return &bundle{st: st, eng: eng, fake: fake, provider: p, coll: coll, cancel: cancel, stop: stop}
}

func (b *bundle) start(t *testing.T, models ...string) *store.Run {
	t.Helper()
	in := store.RunInput{Judge: &store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"}, CollectionIDs: []int64{b.coll.ID}}
	for _, m := range models {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: b.provider.ID, Model: m})
	}
	run, err := b.eng.StartRun(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// waitRun waits, on the broker's signals, until the run reaches a final status.
func (b *bundle) waitRun(t *testing.T, id int64) *store.Run {
	t.Helper()
	sig, unsub := b.eng.Broker().Subscribe(id)
	defer unsub()
	deadline := time.After(30 * time.Second)
	for {
		run, err := b.st.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !run.Active() {
			return run
		}
		select {
		case <-sig:
		case <-time.After(200 * time.Millisecond): // status changes without a log entry
		case <-deadline:
			t.Fatalf("run %d still %s after 30s", id, run.Status)
		}
	}
}

func items(t *testing.T, st *store.Store, runID int64) []store.ItemView {
	t.Helper()
	var out []store.ItemView
	if err := st.EachRunItem(context.Background(), runID, func(v *store.ItemView) error {
		out = append(out, *v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStopLetsRunEndedFinish: an engine that stops just after it ended a
// run waits for the run's RunEndedFunc (the server stores the statistics
// there), which goes on with a context the stop did not cancel.
func TestStopLetsRunEndedFinish(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		started, release := make(chan struct{}), make(chan struct{})
		seen := errors.New("RunEndedFunc not called")
		cfg := testConfig()
		cfg.RunEndedFunc = func(ctx context.Context, runID int64, _ store.Progress) error {
			close(started)
			<-release
			seen = ctx.Err()
			return nil
		}
		b := setupWith(t, st, 2, nil, cfg)
		b.start(t, "m")
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatal("the run did not end")
		}
		b.cancel()
		close(release)
		b.stop()
		if seen != nil {
			t.Errorf("RunEndedFunc's context when the engine stopped: %v, want none", seen)
		}
	})
}

func TestRunCompletes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 3, nil)
		run := b.start(t, "fake-small", "fake-large")
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished || final.Phase != store.PhaseJudging {
			t.Fatalf("run ended %s/%s, want FINISHED/JUDGING", final.Status, final.Phase)
		}
		got := items(t, st, run.ID)
		if len(got) != 6 {
			t.Fatalf("got %d items, want 6", len(got))
		}
		for _, it := range got {
			if it.Status != store.ItemCompleted || it.Score == nil || *it.Score != 7 || it.Reasoning != "Mostly right." {
				t.Errorf("item %s/%s: status %s score %v reasoning %q", it.TaskID, it.Model, it.Status, it.Score, it.Reasoning)
			}
			if it.Response == nil || !strings.HasPrefix(*it.Response, "Answer: What is") || it.TimeMs == nil || it.CompletionTokens == nil {
				t.Errorf("item %d: response %v time %v tokens %v", it.ID, it.Response, it.TimeMs, it.CompletionTokens)
			}
		}
		// Seed 000: each group runs consecutively after one warm-up, and
		// judging starts only after all benchmarking.
		var seq []string
		for _, c := range b.fake.Calls() {
			switch {
			case c.IsJudge():
				seq = append(seq, "judge")
			case c.IsWarmup():
				seq = append(seq, "warmup:"+c.Model)
			default:
				seq = append(seq, c.Model)
			}
			if auth := c.Header.Get("Authorization"); auth != "Bearer sk-test-1234567890" {
				t.Errorf("call carried Authorization %q, want the provider's decrypted secret", auth)
			}
		}
		want := "warmup:fake-small fake-small fake-small fake-small warmup:fake-large fake-large fake-large fake-large judge judge judge judge judge judge"
		if strings.Join(seq, " ") != want {
			t.Errorf("call order:\n got %s\nwant %s", strings.Join(seq, " "), want)
		}
		fig, err := st.RunFigures(context.Background(), run.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		sum := fig.Summary
		if sum.Overall.AvgScore == nil || *sum.Overall.AvgScore != 7 || len(sum.PerModel) != 2 || len(sum.PerTask) != 3 {
			t.Errorf("summary: %+v", sum)
		}
		// A verdict's log entry, like an answer's, shows what the judge was sent and what it said.
		logs, err := st.RunLogs(context.Background(), run.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		verdicts := 0
		for _, l := range logs {
			if l.Kind != "verdict" {
				continue
			}
			verdicts++
			if !strings.Contains(l.Detail, "REASONING\nMostly right.") || !strings.Contains(l.Detail, "[user]\n") ||
				!strings.Contains(l.Detail, "Answer: What is") || !strings.Contains(l.Detail, `RAW REPLY`+"\n"+`{"score": 7, "reasoning": "Mostly right."}`) {
				t.Errorf("verdict log detail lacks the reasoning, prompt or raw reply:\n%s", l.Detail)
			}
		}
		if verdicts != 6 {
			t.Errorf("%d verdict log entries, want 6", verdicts)
		}
		// The phase's entry counts every answer and comes before any verdict.
		var order []string
		for _, l := range logs {
			if l.Kind == "phase" || l.Kind == "verdict" {
				order = append(order, l.Kind+": "+l.Message)
			}
		}
		if wantPhase := "phase: Benchmarking done (6 answered, 0 failed); judging starts"; len(order) == 0 || order[0] != wantPhase {
			t.Errorf("first phase or verdict entry %q, want %q", order, wantPhase)
		}
	})
}

// TestChecksOnlyRunLogEndsWithItsEnd: a run without judges ends in the
// pass that ends its benchmarking; its log still says benchmarking is done
// before it says the run finished, the last entry.
func TestChecksOnlyRunLogEndsWithItsEnd(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, 3, func(r llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: "#### 72"} })
		run, err := b.eng.StartRun(ctx, store.RunInput{Metrics: []string{"check_numeric"}, CollectionIDs: []int64{b.coll.ID},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}}})
		if err != nil {
			t.Fatal(err)
		}
		b.waitRun(t, run.ID)
		var order []string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			logs, err := st.RunLogs(ctx, run.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			order = order[:0]
			for _, l := range logs {
				if l.Kind == "phase" || l.Kind == "run" {
					order = append(order, l.Kind+": "+l.Message)
				}
			}
			if len(order) > 0 && strings.HasPrefix(order[len(order)-1], "run: Run finished") || time.Now().After(deadline) {
				break
			}
		}
		phase := slices.Index(order, "phase: Benchmarking done (3 answered, 0 failed); judging starts")
		if phase < 0 || len(order) == 0 || !strings.HasPrefix(order[len(order)-1], "run: Run finished") || phase > len(order)-2 {
			t.Errorf("log entries %q: want the phase's entry, then the run's end last", order)
		}
	})
}

func TestWarmupFailureFailsGroup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.Model == "broken" {
				return llmtest.Reply{Status: 404, Content: "model 'broken' not found"}
			}
			return llmtest.DefaultReply(r)
		})
		run := b.start(t, "broken", "fake-small")
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("status %s, want FINISHED", final.Status)
		}
		for _, it := range items(t, st, run.ID) {
			switch it.Model {
			case "broken":
				if it.Status != store.ItemFailed || !strings.Contains(it.Error, "model 'broken' not found") || !strings.Contains(it.Error, "warm-up") {
					t.Errorf("broken item: %s %q", it.Status, it.Error)
				}
			default:
				if it.Status != store.ItemCompleted {
					t.Errorf("good item: %s %q", it.Status, it.Error)
				}
			}
		}
		warmups := 0
		for _, c := range b.fake.Calls() {
			if c.Model == "broken" && !c.IsWarmup() {
				t.Errorf("a task was sent to the model whose warm-up failed")
			}
			if c.Model == "broken" && c.IsWarmup() {
				warmups++
			}
		}
		if warmups != 1 {
			t.Errorf("the 404 warm-up was tried %d times, want once", warmups)
		}
	})
}

// TestWarmupRetriedLikeItems: a warm-up gets the items' retry policy, so a
// passing 500 or 429 no longer fails its whole group; a provider that stays
// down fails the group after the last attempt, with the reason on its items.
func TestWarmupRetriedLikeItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		warmups := map[string][]time.Time{}
		b := setup(t, st, 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsWarmup() {
				return llmtest.DefaultReply(r)
			}
			mu.Lock()
			warmups[r.Model] = append(warmups[r.Model], time.Now())
			n := len(warmups[r.Model])
			mu.Unlock()
			switch {
			case r.Model == "flaky" && n == 1:
				return llmtest.Reply{Status: 500, Content: "upstream hiccup"}
			case r.Model == "limited" && n == 1:
				return llmtest.Reply{Status: 429, Content: "slow down", RetryAfter: "1"}
			case r.Model == "down":
				return llmtest.Reply{Status: 503, Content: "provider is down"}
			}
			return llmtest.DefaultReply(r)
		})
		run := b.start(t, "flaky", "limited", "down")
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("status %s, want FINISHED", final.Status)
		}
		for _, it := range items(t, st, run.ID) {
			switch it.Model {
			case "down":
				if it.Status != store.ItemFailed || it.FailedPhase != "BENCHMARKING" ||
					!strings.Contains(it.Error, "warm-up failed after 3 attempt(s)") || !strings.Contains(it.Error, "provider is down") {
					t.Errorf("item of the model that is down: %s %s %q", it.Status, it.FailedPhase, it.Error)
				}
			default:
				if it.Status != store.ItemCompleted {
					t.Errorf("item of %s: %s %q", it.Model, it.Status, it.Error)
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if n := len(warmups["flaky"]); n != 2 {
			t.Errorf("flaky: %d warm-ups, want 2 (a 500, then fine)", n)
		}
		if c := warmups["limited"]; len(c) != 2 || c[1].Sub(c[0]) < time.Second {
			t.Errorf("429 with Retry-After: 1: warm-up retried after %v (%d calls)", gap(c), len(c))
		}
		if n := len(warmups["down"]); n != 3 {
			t.Errorf("down: %d warm-ups, want 3", n)
		}
		for _, c := range b.fake.Calls() {
			if c.Model == "down" && !c.IsWarmup() {
				t.Errorf("a task was sent to the model whose warm-up failed")
			}
		}
	})
}

func TestRetriesAndJudgeFailuresKeepRawOutput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		seen := map[string]int{}
		b := setup(t, st, 3, func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			key := r.Model + "|" + r.Last()
			seen[key]++
			switch {
			case r.IsJudge() && strings.Contains(r.Last(), "What is 1+1?"):
				return llmtest.Reply{Content: "I think it deserves an eight"} // never valid
			case r.IsJudge():
				return llmtest.DefaultReply(r)
			case r.Last() == "What is 0+0?" && seen[key] == 1:
				return llmtest.Reply{Status: 500, Content: "upstream exploded"}
			case r.Last() == "What is 2+2?":
				return llmtest.Reply{Status: 401, Content: "invalid api key"}
			}
			return llmtest.DefaultReply(r)
		})
		run := b.start(t, "fake-small")
		b.waitRun(t, run.ID)
		byTask := map[string]store.ItemView{}
		for _, it := range items(t, st, run.ID) {
			byTask[it.TaskID] = it
		}
		if it := byTask["t000"]; it.Status != store.ItemCompleted || it.AnswerAttempts != 2 || it.JudgeAttempts != 1 {
			t.Errorf("t000 (one 500, then fine): %s attempts %d+%d %q", it.Status, it.AnswerAttempts, it.JudgeAttempts, it.Error)
		}
		if it := byTask["t001"]; it.Status != store.ItemFailed || it.FailedPhase != "JUDGING" || !strings.Contains(it.Error, "I think it deserves an eight") {
			t.Errorf("t001 (bad judge output): %s %s %q", it.Status, it.FailedPhase, it.Error)
		}
		if it := byTask["t002"]; it.Status != store.ItemFailed || !strings.Contains(it.Error, "invalid api key") || it.AnswerAttempts != 1 || it.JudgeAttempts != 0 {
			t.Errorf("t002 (401, no retry): %s attempts %d+%d %q", it.Status, it.AnswerAttempts, it.JudgeAttempts, it.Error)
		}
		mu.Lock()
		defer mu.Unlock()
		if n := seen["fake-small|What is 2+2?"]; n != 1 {
			t.Errorf("the 401 was retried: %d calls", n)
		}
	})
}

func TestOnlyOneActiveRun(t *testing.T) {
	st := storetest.SQLite(t)
	b := setup(t, st, 1, func(r llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Hang: true} })
	run := b.start(t, "fake-small")
	in := store.RunInput{Judge: &store.ModelRef{ProviderID: b.provider.ID, Model: "j"},
		Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "m"}}, CollectionIDs: []int64{b.coll.ID}}
	if _, err := b.eng.StartRun(context.Background(), in); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second run: err %v, want a conflict", err)
	}
	if _, err := b.eng.Cancel(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.eng.StartRun(context.Background(), in); err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}

// TestLeaseRenewedDuringLongCall: a call that outlasts its lease keeps its
// item, since the lease is renewed while the call runs: the rescuer never
// hands the item to another claim.
func TestLeaseRenewedDuringLongCall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		cfg := testConfig()
		cfg.Lease = 300 * time.Millisecond
		b := setupWith(t, st, 1, func(r llmtest.ChatRequest) llmtest.Reply {
			rep := llmtest.DefaultReply(r)
			if !r.IsWarmup() && !r.IsJudge() {
				rep.Delay = time.Second // more than three leases
			}
			return rep
		}, cfg)
		run := b.waitRun(t, b.start(t, "fake-small").ID)
		if run.Status != store.RunFinished {
			t.Fatalf("run %s: %s", run.Status, run.Error)
		}
		its := items(t, st, run.ID)
		if len(its) != 1 || its[0].AnswerAttempts != 1 {
			t.Fatalf("items %d, answer attempts %d; want 1 item answered by 1 call (the lease ran out mid-call)", len(its), its[0].AnswerAttempts)
		}
	})
}
