package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// bench runs real runs on a store: an engine and a fake LLM whose judge
// gives each model its own score (1–10), and n tasks in a collection.
type bench struct {
	st       *store.Store
	eng      *engine.Engine
	svc      *Service
	provider int64
	coll     int64
}

// judged maps a model to the score the fake judge gives its answers.
func newBench(t *testing.T, st *store.Store, tasks int, judged map[string]int, sparse []store.Check) *bench {
	t.Helper()
	return newBenchWith(t, st, tasks, sparse, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			for model, score := range judged {
				if strings.Contains(r.Last(), "answer from "+model+".") {
					return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "fixed"}`, score)}
				}
			}
			return llmtest.Reply{Content: `{"score": 1, "reasoning": "unknown"}`}
		}
		return llmtest.Reply{Content: "answer from " + r.Model + "."}
	})
}

// newBenchWith is newBench with the fake's replies scripted.
func newBenchWith(t *testing.T, st *store.Store, tasks int, sparse []store.Check, script func(llmtest.ChatRequest) llmtest.Reply) *bench {
	t.Helper()
	return newBenchConfig(t, st, tasks, sparse, engine.Config{}, script)
}

// newBenchConfig is newBenchWith with the engine's config (its poll and
// backoff are the bench's own; it keeps items' overalls by ItemWeights, as
// the server's engine does).
func newBenchConfig(t *testing.T, st *store.Store, tasks int, sparse []store.Check, cfg engine.Config, script func(llmtest.ChatRequest) llmtest.Reply) *bench {
	t.Helper()
	ctx := context.Background()
	fake := llmtest.New(t, script)
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", Type: store.ProviderCustom, BaseURL: fake.URL, TimeoutSeconds: 5, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	var refs []store.TaskRef
	for i := range tasks {
		in := store.TaskInput{TaskKey: fmt.Sprintf("t%02d", i), Category: "math", Question: fmt.Sprintf("What is %d+%d?", i, i)}
		if i == 0 {
			in.Checks = sparse // a check present on one task only
		}
		tk, err := st.CreateTask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, store.TaskRef{ID: tk.ID})
	}
	coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	cfg.PollInterval, cfg.BackoffBase = 10*time.Millisecond, 10*time.Millisecond
	cfg.ItemWeightsFunc = ItemWeights
	eng := engine.New(cfg, st, engine.NewBroker(), nil)
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(runCtx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &bench{st: st, eng: eng, svc: New(st, eng), provider: p.ID, coll: coll.ID}
}

// run starts a run over the given models and waits for it to end.
func (b *bench) run(t *testing.T, in store.RunInput, models ...string) *store.Run {
	t.Helper()
	if len(in.JudgeIDs) == 0 {
		in.Judge = &store.ModelRef{ProviderID: b.provider, Model: "fake-judge"}
	}
	in.CollectionIDs = []int64{b.coll}
	for _, m := range models {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: b.provider, Model: m})
	}
	run, err := b.svc.StartRun(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return b.waitEnded(t, run.ID)
}

// waitEnded waits until run runID is no longer active and returns it.
func (b *bench) waitEnded(t *testing.T, runID int64) *store.Run {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := b.st.Run(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Active() {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s", runID, got.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *bench) summary(t *testing.T, run *store.Run) (Progress, *Summary) {
	t.Helper()
	prog, sum, err := b.svc.Results(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return prog, sum
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func overallOf(t *testing.T, run *store.Run, sum *Summary, model string) ModelScore {
	t.Helper()
	for _, tg := range run.Targets {
		for _, m := range sum.Models {
			if tg.Model == model && m.TargetID == tg.ID {
				return m
			}
		}
	}
	t.Fatalf("no overall for %s in %+v", model, sum.Models)
	return ModelScore{}
}

// A check present on one task of 20 moves a model's overall by at most that
// task's share: each item's overall averages the scores that item has.
func TestSparseCheckWeighsOneTask(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := newBench(t, st, 20, map[string]int{"good": 8, "bad": 4}, []store.Check{{Type: "contains", Value: "zzz"}})
		run := b.run(t, store.RunInput{}, "good", "bad")
		prog, sum := b.summary(t, run)
		if run.Status != store.RunFinished || prog.Total != 40 || prog.Answered != 40 || prog.Judged != 40 || prog.Percent != 100 {
			t.Fatalf("run %s, progress %+v", run.Status, prog)
		}
		// good: 19 items at (8−1)/9, and t00 at the mean of 7/9 and the failed check's 0.
		want := (19*7.0/9 + 7.0/18) / 20 * 100
		good := overallOf(t, run, sum, "good")
		if good.Overall == nil || !near(*good.Overall, want) || good.Scored != 20 || good.OverallCI == nil || good.OverallCI.N != 20 {
			t.Errorf("good overall %+v, want %.4f over 20 items", good, want)
		}
		if good.OverallCI.Lo > *good.Overall || good.OverallCI.Hi < *good.Overall {
			t.Errorf("interval %+v does not hold its mean", good.OverallCI)
		}
		bad := overallOf(t, run, sum, "bad")
		if want := (19*3.0/9 + 3.0/18) / 20 * 100; bad.Overall == nil || !near(*bad.Overall, want) {
			t.Errorf("bad overall %v, want %.4f", bad.Overall, want)
		}
		if sum.Best.OverallTargetID != good.TargetID || sum.Best.Provisional || sum.Best.Note != "" {
			t.Errorf("best %+v, want good (%d)", sum.Best, good.TargetID)
		}
		// The per-metric table lists the judge's score and the check, each with its n.
		byMetric := map[string]MetricRow{}
		for _, r := range sum.PerMetric {
			byMetric[r.Metric] = r
		}
		score, check := byMetric["score"], byMetric["check_contains"]
		if len(sum.PerMetric) != 2 || score.Lo != 1 || score.Hi != 10 || score.Cells[0].N != 20 || check.Cells[0].N != 1 ||
			*check.Cells[0].Mean != 0 || check.Weight != 1 || score.Weight != 1 {
			t.Errorf("per metric %+v", sum.PerMetric)
		}

		// source_weights can take the check out of the overall.
		run2 := b.run(t, store.RunInput{SourceWeights: map[string]float64{"check:contains": 0}}, "good", "bad")
		_, sum2 := b.summary(t, run2)
		if g := overallOf(t, run2, sum2, "good"); g.Overall == nil || !near(*g.Overall, 700.0/9) {
			t.Errorf("good overall without the check %v, want %.4f", g.Overall, 700.0/9)
		}
	})
}

// No best model is named on fewer than MinScored scored items per model.
func TestNoVerdictOnTooLittleData(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := newBench(t, st, MinScored-1, map[string]int{"good": 9, "bad": 2}, nil)
		run := b.run(t, store.RunInput{}, "good", "bad")
		_, sum := b.summary(t, run)
		if sum.Best.OverallTargetID != 0 || sum.Best.ValueTargetID != 0 || sum.BestOverall != 0 ||
			!strings.HasPrefix(sum.Best.Note, "not enough data yet") {
			t.Errorf("best %+v on %d items per model", sum.Best, MinScored-1)
		}
	})
}

func TestPickBestProvisional(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	run := &store.Run{Status: store.RunRunning, Targets: []store.RunTarget{{ID: 1, Model: "a"}, {ID: 2, Model: "b"}}}
	models := []ModelScore{{TargetID: 1, Overall: v(60), Scored: 5}, {TargetID: 2, Overall: v(70), Scored: 6}}
	b := pickBest(run, models, Progress{Total: 40})
	if b.OverallTargetID != 2 || !b.Provisional || b.Note != "provisional: 11 of 40 judged" {
		t.Errorf("running: %+v", b)
	}
	models[0].Scored = 4
	if b := pickBest(run, models, Progress{Total: 40}); b.OverallTargetID != 0 || !strings.Contains(b.Note, "a has 4 scored items") {
		t.Errorf("too few: %+v", b)
	}
	models[0].Scored, models[0].Overall = 5, v(70)
	if b := pickBest(&store.Run{Status: store.RunFinished, Targets: run.Targets}, models, Progress{}); b.OverallTargetID != 0 || b.Provisional {
		t.Errorf("a tie picked %+v", b)
	}
	pairwise := &store.Run{Status: store.RunFinished, Targets: run.Targets, Options: store.RunOptions{Pairwise: true}}
	if b := pickBest(pairwise, models, Progress{}); b.OverallTargetID != 0 || !strings.Contains(b.Note, "leaderboard") {
		t.Errorf("pairwise: %+v", b)
	}
	// Once the run has ended, a model with no scored item is left out.
	ended := &store.Run{Status: store.RunFinished, Targets: append(run.Targets, store.RunTarget{ID: 3, Model: "dead"})}
	models = []ModelScore{{TargetID: 1, Overall: v(60), Scored: 5}, {TargetID: 2, Overall: v(70), Scored: 6}, {TargetID: 3}}
	if b := pickBest(ended, models, Progress{Total: 45}); b.OverallTargetID != 2 || b.Note != "dead left out: no scored item" {
		t.Errorf("ended with a dead model: %+v", b)
	}
	running := &store.Run{Status: store.RunRunning, Targets: ended.Targets}
	if b := pickBest(running, models, Progress{Total: 45}); b.OverallTargetID != 0 || !strings.Contains(b.Note, "dead has 0 scored items") {
		t.Errorf("running with a model not yet scored: %+v", b)
	}
}

func TestItemWeights(t *testing.T) {
	run := &store.Run{
		Judges: []store.RunJudge{
			{ID: 1, ScaleMin: 0, ScaleMax: 5, Metrics: []store.Metric{{Name: "accuracy", Weight: 2}, {Name: "coherence", Weight: 1}}},
			{ID: 2, ScaleMin: 0, ScaleMax: 5, Metrics: []store.Metric{{Name: "accuracy", Weight: 2}, {Name: "coherence", Weight: 1}}},
		},
		Options: store.RunOptions{Weights: map[string]float64{"coherence": 3},
			SourceWeights: map[string]float64{"judge": 2, "check:numeric": 0}},
	}
	got := map[string]store.SourceWeight{}
	for _, w := range ItemWeights(run) {
		got[w.Source+"/"+w.Metric] = w
	}
	// Panel of two: each judge's weight halves; "judge" doubles it; the run's weight overrides the style's.
	// The judges' own "score" does not count (it is the mean of their metrics); checks weigh 1 but numeric, 0.
	want := map[string]float64{"judge:1/accuracy": 2, "judge:1/coherence": 3, "judge:2/accuracy": 2, "judge:2/coherence": 3,
		"check:numeric/check_numeric": 0, store.AnyCheck + "/": 1}
	if len(got) != len(want) {
		t.Fatalf("weights %+v, want %v", got, want)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !near(g.Weight, w) {
			t.Errorf("%s weight %+v, want %g", k, g, w)
		}
	}
	if g := got["judge:1/accuracy"]; g.Lo != 0 || g.Hi != 5 {
		t.Errorf("judge scale %+v", g)
	}
	// A panel of judges with different metrics: each metric is shared by the
	// judges that score it, not by the whole panel.
	mixed := &store.Run{Judges: []store.RunJudge{
		{ID: 1, ScaleMin: 0, ScaleMax: 5, Metrics: []store.Metric{{Name: "accuracy", Weight: 1}, {Name: "coherence", Weight: 1}}},
		{ID: 2, ScaleMin: 0, ScaleMax: 5, Metrics: []store.Metric{{Name: "accuracy", Weight: 1}}},
	}}
	mw := map[string]float64{}
	for _, w := range ItemWeights(mixed) {
		mw[w.Source+"/"+w.Metric] = w.Weight
	}
	if !near(mw["judge:1/accuracy"], 0.5) || !near(mw["judge:1/coherence"], 1) || !near(mw["judge:2/score"], 0.5) {
		t.Errorf("mixed panel weights %v", mw)
	}
	// A single-metric style counts its verdict's score, weighed and switched by the metric's own name.
	named := &store.Run{Judges: []store.RunJudge{{ID: 3, ScaleMin: 1, ScaleMax: 5, Metrics: []store.Metric{{Name: "accuracy", Weight: 1}}}},
		Options: store.RunOptions{Weights: map[string]float64{"accuracy": 4}}}
	if ws := ItemWeights(named); len(ws) != 2 || ws[0].Metric != "score" || !near(ws[0].Weight, 4) {
		t.Errorf("single-metric weights %+v", ws)
	}
	named.Options = store.RunOptions{Metrics: []string{"check_numeric"}}
	if ws := ItemWeights(named); len(ws) != 1 || ws[0].Source != store.AnyCheck {
		t.Errorf("a judge metric switched off still counts: %+v", ws)
	}
	// A single-metric style counts its verdict's score.
	single := &store.Run{Judges: []store.RunJudge{{ID: 7, ScaleMin: 1, ScaleMax: 10, Metrics: []store.Metric{{Name: "accuracy", Weight: 1}}}}}
	if ws := ItemWeights(single); len(ws) != 2 || ws[0].Source != "judge:7" || ws[0].Metric != "score" || ws[0].Lo != 1 || ws[0].Hi != 10 {
		t.Errorf("single-metric weights %+v", ws)
	}
}

// An ended run's summary is stored once and read back by any process.
func TestSummarySnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, MinScored, map[string]int{"good": 9, "bad": 2}, []store.Check{{Type: "contains", Value: "answer"}})
		run := b.run(t, store.RunInput{}, "good", "bad")
		if _, err := Snapshot(ctx, st, run); err != nil {
			t.Fatal(err)
		}
		want, grades := currentSummaryStamp(t, st, run)
		stamp, body, err := st.SummarySnapshot(ctx, run.ID)
		if err != nil || body == nil || stamp != want {
			t.Fatalf("no snapshot stored for the run's counts and grades: stamp %q, %v", stamp, err)
		}
		var snap snapshot
		if err := json.Unmarshal(body, &snap); err != nil || len(snap.Models) != 2 || len(snap.PerTask) != MinScored {
			t.Fatalf("snapshot %s: %v", body, err)
		}
		// A new service (another process) has nothing in memory: it reads the
		// snapshot, marked here so that reading it shows.
		snap.Best.Note = "read from the snapshot"
		marked, _ := json.Marshal(snap)
		if err := st.SaveSummarySnapshot(ctx, run.ID, stamp, marked); err != nil {
			t.Fatal(err)
		}
		_, got, err := New(st, nil).Results(ctx, run)
		if err != nil || got.Best.Note != "read from the snapshot" || len(got.PerTask) != MinScored || got.Models[0].Overall == nil {
			t.Fatalf("summary %+v, %v; want the snapshot's", got, err)
		}
		// A summary stored for other item counts is not read.
		if err := st.SaveSummarySnapshot(ctx, run.ID, gradedStamp("other counts", grades), marked); err != nil {
			t.Fatal(err)
		}
		if _, got, err := New(st, nil).Results(ctx, run); err != nil || got.Best.Note == "read from the snapshot" {
			t.Errorf("a snapshot for other counts was read: %+v, %v", got, err)
		}
	})
}

// The engine that ends a run stores its summary (StoreEnded as its
// RunEndedFunc, as the server wires it, for the counts the engine read as
// it ended the run): the run's first view reads it.
func TestEngineStoresEndedRunSummary(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		stored := make(chan int64, 1)
		cfg := engine.Config{RunEndedFunc: func(ctx context.Context, runID int64, counts store.Progress) error {
			err := StoreEnded(ctx, st, runID, counts)
			stored <- runID
			return err
		}}
		b := newBenchConfig(t, st, MinScored, nil, cfg, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 7, "reasoning": "fixed"}`}
			}
			return llmtest.Reply{Content: "an answer"}
		})
		run := b.run(t, store.RunInput{}, "m1", "m2")
		select {
		case id := <-stored:
			if id != run.ID {
				t.Fatalf("RunEndedFunc got run %d, want %d", id, run.ID)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the engine ended the run without calling RunEndedFunc")
		}
		want, _ := currentSummaryStamp(t, st, run)
		stamp, body, err := st.SummarySnapshot(ctx, run.ID)
		if err != nil || body == nil || stamp != want {
			t.Fatalf("no snapshot stored for the ended run's counts and grades: stamp %q, %v", stamp, err)
		}
		var snap snapshot
		if err := json.Unmarshal(body, &snap); err != nil || len(snap.Models) != 2 || snap.Models[0].Overall == nil {
			t.Fatalf("snapshot %s: %v", body, err)
		}
		if want := 100 * (7.0 - 1) / 9; !near(*snap.Models[0].Overall, want) {
			t.Errorf("stored overall %v, want %v", *snap.Models[0].Overall, want)
		}
	})
}

// An item waiting for its judge has its checks' scores only: it is not
// scored yet, so it gives its model no overall (a sparse check alone would
// read 100 before a single judgement).
func TestUnjudgedItemsHaveNoOverall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		release := make(chan struct{})
		var once sync.Once
		open := func() { once.Do(func() { close(release) }) }
		t.Cleanup(open)
		b := newBenchWith(t, st, 3, []store.Check{{Type: "contains", Value: "answer"}}, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				<-release
				return llmtest.Reply{Content: `{"score": 1, "reasoning": "low"}`}
			}
			return llmtest.Reply{Content: "answer from " + r.Model + "."}
		})
		ctx := context.Background()
		run, err := b.svc.StartRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: b.provider, Model: "fake-judge"},
			CollectionIDs: []int64{b.coll}, Targets: []store.ModelRef{{ProviderID: b.provider, Model: "good"}}})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			prog, err := b.svc.Progress(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			if prog.Answered == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("progress %+v", prog)
			}
			time.Sleep(20 * time.Millisecond)
		}
		run, err = st.Run(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, sum := b.summary(t, run)
		if m := overallOf(t, run, sum, "good"); m.Overall != nil || m.Scored != 0 {
			t.Errorf("before any judgement: overall %v over %d scored items, want none", m.Overall, m.Scored)
		}
		open()
		if _, err := b.svc.Cancel(ctx, run.ID); err != nil {
			t.Logf("cancel: %v", err)
		}
	})
}

// currentSummaryStamp is the whole stamp a summary of run computed now
// carries, and its grades' part.
func currentSummaryStamp(t *testing.T, st *store.Store, run *store.Run) (stamp, grades string) {
	t.Helper()
	ctx := context.Background()
	counts, err := st.RunProgress(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	grades, err = st.GradeStamp(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return gradedStamp(summaryStamp(run, progressOf(counts)), grades), grades
}
