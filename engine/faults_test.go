package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestFaultsEndInCompletedOrFailed injects every kind of provider fault:
// each item ends COMPLETED, or FAILED with its reason, and retry-judging
// recovers the judge failures once the judge behaves.
func TestFaultsEndInCompletedOrFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		calls := map[string][]time.Time{}
		judgeFixed := atomic.Bool{}
		script := func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			key := r.Last()
			if r.IsJudge() {
				key = "judge:" + between(r.Last(), "<<<ANSWER\n", "\nANSWER>>>")
			}
			calls[key] = append(calls[key], time.Now())
			n := len(calls[key])
			mu.Unlock()
			switch {
			case r.IsWarmup():
				return llmtest.DefaultReply(r)
			case r.IsJudge() && strings.Contains(key, "What is 3+3?") && !judgeFixed.Load():
				return llmtest.Reply{Content: `{"score": "excellent", "reasoning": "malformed on purpose"}`}
			case r.IsJudge():
				return llmtest.DefaultReply(r)
			case key == "What is 0+0?" && n == 1:
				return llmtest.Reply{Status: 500, Content: "internal error"}
			case key == "What is 1+1?" && n == 1:
				return llmtest.Reply{Status: 429, Content: "slow down", RetryAfter: "1"}
			case key == "What is 2+2?" && n == 1:
				return llmtest.Reply{Hang: true}
			case key == "What is 4+4?":
				return llmtest.Reply{Status: 403, Content: "model not allowed for this key"}
			case key == "What is 5+5?":
				return llmtest.Reply{Raw: `{"choices": [`}
			}
			return llmtest.DefaultReply(r)
		}
		b := setup(t, st, 6, script)
		run := b.start(t, "fake-small")
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run %s", final.Status)
		}
		got := map[string]store.ItemView{}
		for _, it := range items(t, st, run.ID) {
			got[it.TaskID] = it
		}
		want := map[string]struct {
			status  store.ItemStatus
			errPart string
		}{
			"t000": {store.ItemCompleted, ""},
			"t001": {store.ItemCompleted, ""},
			"t002": {store.ItemCompleted, ""},
			"t003": {store.ItemFailed, `raw judge output: {"score": "excellent"`},
			"t004": {store.ItemFailed, "HTTP 403 Forbidden: model not allowed for this key"},
			"t005": {store.ItemFailed, "not valid JSON"},
		}
		for task, w := range want {
			it := got[task]
			if it.Status != w.status || (w.errPart != "" && !strings.Contains(it.Error, w.errPart)) {
				t.Errorf("%s: %s %q, want %s with %q", task, it.Status, it.Error, w.status, w.errPart)
			}
		}
		mu.Lock()
		if c := calls["What is 1+1?"]; len(c) != 2 || c[1].Sub(c[0]) < time.Second {
			t.Errorf("429 with Retry-After: 1 was retried after %v (%d calls)", gap(c), len(c))
		}
		if c := calls["What is 4+4?"]; len(c) != 1 {
			t.Errorf("403 was retried: %d calls", len(c))
		}
		if c := calls["What is 5+5?"]; len(c) != 3 {
			t.Errorf("malformed reply tried %d times, want 3 attempts", len(c))
		}
		if c := calls["judge:Answer: What is 3+3?"]; len(c) != 3 {
			t.Errorf("bad judge output tried %d times, want 3", len(c))
		}
		mu.Unlock()

		// A retry gets every attempt again: still broken, the judge is asked 3 more times.
		if n, err := b.eng.RetryJudging(context.Background(), run.ID); err != nil || n != 1 {
			t.Fatalf("retry judging: %d, %v", n, err)
		}
		b.waitRun(t, run.ID)
		mu.Lock()
		if c := calls["judge:Answer: What is 3+3?"]; len(c) != 6 {
			t.Errorf("after a retry the bad judge output was tried %d times in all, want 6", len(c))
		}
		mu.Unlock()
		judgeFixed.Store(true)
		n, err := b.eng.RetryJudging(context.Background(), run.ID)
		if err != nil || n != 1 {
			t.Fatalf("retry judging: %d, %v", n, err)
		}
		final = b.waitRun(t, run.ID)
		it := itemByTask(t, st, run.ID, "t003")
		if final.Status != store.RunFinished || it.Status != store.ItemCompleted || it.Score == nil || *it.Score != 7 {
			t.Errorf("after retry-judging: run %s, item %s %v %q", final.Status, it.Status, it.Score, it.Error)
		}
		if it := itemByTask(t, st, run.ID, "t004"); it.Status != store.ItemFailed {
			t.Errorf("retry-judging touched an item that failed benchmarking: %s", it.Status)
		}
	})
}

func gap(ts []time.Time) time.Duration {
	if len(ts) < 2 {
		return 0
	}
	return ts[1].Sub(ts[0])
}

func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	v, _, _ := strings.Cut(rest, b)
	return v
}

func itemByTask(t *testing.T, st *store.Store, runID int64, task string) store.ItemView {
	t.Helper()
	for _, it := range items(t, st, runID) {
		if it.TaskID == task {
			return it
		}
	}
	t.Fatalf("no item for %s", task)
	return store.ItemView{}
}

// TestConcurrencyLimitAcrossEngines runs two engines (as two worker processes
// would) on one database: the provider's concurrency of 2 per model holds
// across both, each model is warmed up once, and every item runs once.
func TestConcurrencyLimitAcrossEngines(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		inflight, peak := map[string]int{}, map[string]int{}
		warmups := map[string]int{}
		answered := map[string]int{}
		b := setup(t, st, 12, func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			inflight[r.Model]++
			peak[r.Model] = max(peak[r.Model], inflight[r.Model])
			if r.IsWarmup() {
				warmups[r.Model]++
			} else if !r.IsJudge() {
				answered[r.Model+"|"+r.Last()]++
			}
			mu.Unlock()
			time.Sleep(15 * time.Millisecond) // the call is "in flight" while the script runs
			mu.Lock()
			inflight[r.Model]--
			mu.Unlock()
			return llmtest.DefaultReply(r)
		})
		ctx := context.Background()
		in := store.ProviderInput{Name: "fake", BaseURL: b.fake.URL, Concurrency: 2, TimeoutSeconds: 5}
		if _, err := st.UpdateProvider(ctx, b.provider.ID, in); err != nil {
			t.Fatal(err)
		}
		second := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, Lease: 3 * time.Second}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
		runCtx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { second.Run(runCtx) })
		defer func() { cancel(); wg.Wait() }()

		run := b.start(t, "fake-small", "fake-large")
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run %s", final.Status)
		}
		mu.Lock()
		defer mu.Unlock()
		for model, p := range peak {
			if p > 2 {
				t.Errorf("%s had %d calls in flight, above the provider's concurrency 2", model, p)
			}
		}
		if peak["fake-small"] < 2 {
			t.Errorf("fake-small never ran 2 calls at once (peak %d): concurrency unused", peak["fake-small"])
		}
		for _, m := range []string{"fake-small", "fake-large"} {
			if warmups[m] != 1 {
				t.Errorf("%s warmed up %d times, want once", m, warmups[m])
			}
		}
		for k, n := range answered {
			if n != 1 {
				t.Errorf("%s asked %d times", k, n)
			}
		}
		if len(answered) != 24 {
			t.Errorf("%d distinct questions asked, want 24", len(answered))
		}
	})
}

// TestLoweredConcurrencyTakesHold lowers a provider's concurrency mid-run:
// once the calls in flight end, no more than the new limit run at once,
// although every slot had a successor to go on with.
//
// "Once the calls in flight end" is counted in calls, not time: each of the
// 4 slots of a model may still start two calls under the old limit, the one
// it had looked the provider up for before the Refresh and the successor
// that call's result write claims (successor checks the limit the call
// started with). So the first 8 calls of each model after the lowering are
// not held to the new limit. (A window of 4 call times was too short under
// the race detector on a busy machine, where a batch's write took longer
// than that.)
func TestLoweredConcurrencyTakesHold(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const callTime = 25 * time.Millisecond
		var mu sync.Mutex
		const oldLimitCalls = 2 * 4 // per model, after the lowering; see above
		inflight := map[string]int{}
		startedAfter := map[string]int{}
		lowered := false
		var peakBefore, peakAfter, callsAfter int
		lower := make(chan struct{})
		answered := 0
		b := setup(t, st, 40, func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			inflight[r.Model]++
			if !lowered {
				peakBefore = max(peakBefore, inflight[r.Model])
			} else if startedAfter[r.Model]++; startedAfter[r.Model] > oldLimitCalls {
				peakAfter = max(peakAfter, inflight[r.Model])
				callsAfter++
			}
			if !r.IsWarmup() && !r.IsJudge() {
				if answered++; answered == 8 {
					close(lower)
				}
			}
			mu.Unlock()
			time.Sleep(callTime)
			mu.Lock()
			inflight[r.Model]--
			mu.Unlock()
			return llmtest.DefaultReply(r)
		})
		ctx := context.Background()
		in := store.ProviderInput{Name: "fake", BaseURL: b.fake.URL, Concurrency: 4, TimeoutSeconds: 5}
		if _, err := st.UpdateProvider(ctx, b.provider.ID, in); err != nil {
			t.Fatal(err)
		}
		run := b.start(t, "m")
		<-lower
		in.Concurrency = 1
		if _, err := st.UpdateProvider(ctx, b.provider.ID, in); err != nil {
			t.Fatal(err)
		}
		b.eng.Refresh()
		mu.Lock()
		lowered = true
		mu.Unlock()
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run %s", final.Status)
		}
		mu.Lock()
		defer mu.Unlock()
		if peakBefore < 3 {
			t.Errorf("peak %d before lowering: the limit of 4 was never used", peakBefore)
		}
		if callsAfter < 20 {
			t.Fatalf("only %d calls after lowering: the test proves nothing", callsAfter)
		}
		if peakAfter > 1 {
			t.Errorf("%d calls at once after the limit went down to 1", peakAfter)
		}
	})
}

// TestNulInRepliesIsStored: a model answer and a judge's reasoning carrying
// NUL (which PostgreSQL text refuses) are stored with the character
// replaced, instead of being asked for again and again.
func TestNulInRepliesIsStored(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 2, func(r llmtest.ChatRequest) llmtest.Reply {
			switch {
			case r.IsJudge():
				return llmtest.Reply{Content: `{"score": 6, "reasoning": "half\u0000right"}`}
			case r.IsWarmup():
				return llmtest.DefaultReply(r)
			}
			return llmtest.Reply{Content: "four\x00four"}
		})
		run := b.start(t, "m")
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run %s: %s", final.Status, final.Error)
		}
		for _, it := range items(t, st, run.ID) {
			if it.Status != store.ItemCompleted || it.Response == nil || *it.Response != "four\uFFFDfour" {
				t.Errorf("item %d: %s %q %s", it.ID, it.Status, deref(it.Response), it.Error)
			}
		}
		scores, err := st.RunScores(context.Background(), run.ID, store.ScoreFilter{})
		if err != nil || scores.Total != 2 {
			t.Fatalf("scores %d %v", scores.Total, err)
		}
		for _, sc := range scores.Items {
			if sc.Reasoning != "half\uFFFDright" {
				t.Errorf("reasoning %q", sc.Reasoning)
			}
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestPauseStopsClaimingAndResumeFinishes pauses a run mid-way: nothing new is
// claimed while paused (the call in flight finishes), and resume completes it.
func TestPauseStopsClaimingAndResumeFinishes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		gate := make(chan struct{})
		var once sync.Once
		var asked atomic.Int64
		b := setup(t, st, 5, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() && !r.IsWarmup() {
				if asked.Add(1) == 2 {
					<-gate // hold the second question until the run is paused
				}
			}
			return llmtest.DefaultReply(r)
		})
		t.Cleanup(func() { once.Do(func() { close(gate) }) }) // never leave the fake blocked
		ctx := context.Background()
		run := b.start(t, "fake-small")
		waitFor(t, func() bool { return asked.Load() == 2 })
		if _, err := b.eng.Pause(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		once.Do(func() { close(gate) })
		// The call in flight finishes; then nothing is in progress and nothing new is asked.
		waitFor(t, func() bool {
			p, _ := st.RunProgress(ctx, run.ID)
			return p.Count(store.ItemInProgress) == 0 && p.Count(store.ItemWaitingForJudge) == 2
		})
		for range 5 {
			b.eng.Wake()
		}
		prog, _ := st.RunProgress(ctx, run.ID)
		if got, _ := st.Run(ctx, run.ID); got.Status != store.RunPaused || prog.Count(store.ItemNew) != 3 || asked.Load() != 2 {
			t.Fatalf("paused run: %s, %d new, %d asked", got.Status, prog.Count(store.ItemNew), asked.Load())
		}
		if _, err := b.eng.Resume(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished || asked.Load() != 5 {
			t.Fatalf("after resume: %s, %d asked", final.Status, asked.Load())
		}
		if _, err := b.eng.Resume(ctx, run.ID); err == nil {
			t.Error("resuming a finished run was accepted")
		}
	})
}

// waitFor polls cond until it holds (or fails the test after 10 s).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRateLimitSpacesCalls: a provider limited to 600 requests a minute gets
// its calls at least 100 ms apart, however many slots are free and however
// many engines (processes) share the work.
func TestRateLimitSpacesCalls(t *testing.T) {
	storetest.Each(t, testRateLimit)
}

func testRateLimit(t *testing.T, st *store.Store) {
	var mu sync.Mutex
	var at []time.Time
	b := setup(t, st, 4, func(r llmtest.ChatRequest) llmtest.Reply {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		return llmtest.DefaultReply(r)
	})
	in := store.ProviderInput{Name: "fake", BaseURL: b.fake.URL, Concurrency: 8, RequestsPerMinute: 600, TimeoutSeconds: 5}
	if _, err := st.UpdateProvider(context.Background(), b.provider.ID, in); err != nil {
		t.Fatal(err)
	}
	second := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, Lease: 3 * time.Second}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { second.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	run := b.start(t, "fake-small")
	if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
		t.Fatalf("run %s", final.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 9 { // warm-up, 4 answers, 4 verdicts
		t.Fatalf("%d calls, want 9", len(at))
	}
	// The bucket holds one token: n calls leave at least (n-1) intervals
	// apart. They arrive here later than they left, by a delay that varies
	// (the first call also dials), so half an interval is allowed for it:
	// 10 ms was too little under the race detector on a busy machine. A
	// bucket of two tokens would still show, a whole interval short.
	if span, want := at[len(at)-1].Sub(at[0]), 8*100*time.Millisecond-50*time.Millisecond; span < want {
		t.Errorf("9 calls took %v, faster than 600/min allows (%v)", span, want)
	}
}

// TestRetryFailedItems: a run that finished with failures in both phases
// gets each failed item asked again in the phase it failed in, the failed
// group after a fresh warm-up, and ends with every item completed.
func TestRetryFailedItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		warmups := map[string]int{}
		fixed := atomic.Bool{}
		b := setup(t, st, 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsWarmup() {
				mu.Lock()
				warmups[r.Model]++
				mu.Unlock()
			}
			switch {
			case fixed.Load():
			case r.Model == "down":
				return llmtest.Reply{Status: 503, Content: "provider is down"}
			case r.IsJudge() && strings.Contains(r.Last(), "What is 1+1?"):
				return llmtest.Reply{Content: "no verdict today"}
			}
			return llmtest.DefaultReply(r)
		})
		run := b.start(t, "fake-small", "down")
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("first pass: %s", final.Status)
		}
		phases := map[string]string{}
		for _, it := range items(t, st, run.ID) {
			phases[it.Model+"/"+it.TaskID] = it.FailedPhase
		}
		if want := map[string]string{"fake-small/t000": "", "fake-small/t001": "JUDGING", "down/t000": "BENCHMARKING", "down/t001": "BENCHMARKING"}; fmt.Sprint(phases) != fmt.Sprint(want) {
			t.Fatalf("failed phases %v, want %v", phases, want)
		}

		fixed.Store(true)
		n, err := b.eng.RetryFailed(context.Background(), run.ID)
		if err != nil || n != 3 {
			t.Fatalf("retry failed: %d, %v", n, err)
		}
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("after retry: %s", final.Status)
		}
		for _, it := range items(t, st, run.ID) {
			if it.Status != store.ItemCompleted || it.Score == nil {
				t.Errorf("%s/%s after retry: %s %q", it.Model, it.TaskID, it.Status, it.Error)
			}
			// The judge failure was judged again, not answered again.
			if it.Model == "fake-small" && it.TaskID == "t001" && (it.AnswerAttempts != 1 || it.JudgeAttempts != 4) {
				t.Errorf("re-judged item made %d answer and %d judge calls, want 1 and 4", it.AnswerAttempts, it.JudgeAttempts)
			}
			if it.Model == "down" && (it.AnswerAttempts != 1 || it.JudgeAttempts != 1) {
				t.Errorf("re-answered item made %d answer and %d judge calls, want 1 and 1", it.AnswerAttempts, it.JudgeAttempts)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if warmups["down"] != 4 || warmups["fake-small"] != 1 {
			t.Errorf("warm-ups %v, want down: 3 failed + 1 fresh, fake-small: 1", warmups)
		}
		if _, err := b.eng.RetryFailed(context.Background(), 99999); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("retry failed of no run: %v", err)
		}
	})
}
