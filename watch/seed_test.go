package watch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/checks"
	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// scaleBench runs one task through real runs judged by saved judges, the
// judge's reply set per run.
type scaleBench struct {
	st       *store.Store
	eng      *engine.Engine
	provider int64
	coll     int64
	reply    atomic.Value // the judge's reply
}

// The fixture answer and reference: SQuAD tokens "cat sat on mat today"
// against "cat sat on mat" (the article dropped), ROUGE tokens against
// "the cat sat on the mat".
const (
	seedAnswer    = "cat sat on mat today"
	seedReference = "The cat sat on the mat"
)

func newScaleBench(t *testing.T, st *store.Store, taskChecks []store.Check) *scaleBench {
	t.Helper()
	ctx := context.Background()
	b := &scaleBench{st: st}
	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: b.reply.Load().(string)}
		}
		return llmtest.Reply{Content: seedAnswer}
	})
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", Type: store.ProviderCustom, BaseURL: fake.URL, TimeoutSeconds: 5, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	b.provider = p.ID
	tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "cat", Category: "text", Question: "Where did the cat sit?",
		Reference: seedReference, Checks: taskChecks})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateCollection(ctx, store.CollectionInput{Name: "seed", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	b.coll = c.ID
	b.eng = engine.New(engine.Config{PollInterval: 10 * time.Millisecond, BackoffBase: 10 * time.Millisecond}, st, engine.NewBroker(), quietLog())
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { b.eng.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return b
}

// judge saves a judge with a style of the given scale and metrics.
func (b *scaleBench) judge(t *testing.T, lo, hi int, metrics ...string) int64 {
	t.Helper()
	ctx := context.Background()
	in := store.StyleInput{Name: fmt.Sprintf("%d–%d %v", lo, hi, metrics), ScaleMin: lo, ScaleMax: hi}
	for _, m := range metrics {
		in.Metrics = append(in.Metrics, store.Metric{Name: m, Weight: 1})
	}
	style, err := b.st.CreateStyle(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	j, err := b.st.CreateJudge(ctx, store.JudgeInput{Name: style.Name, ProviderID: b.provider, Model: "fake-judge", StyleID: style.ID})
	if err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// run runs the task past judgeID, who replies reply, and waits for its end.
func (b *scaleBench) run(t *testing.T, judgeID int64, reply string) *store.Run {
	t.Helper()
	b.reply.Store(reply)
	run, err := b.eng.StartRun(context.Background(), store.RunInput{JudgeIDs: []int64{judgeID}, CollectionIDs: []int64{b.coll},
		Targets: []store.ModelRef{{ProviderID: b.provider, Model: "fake-model"}}})
	if err != nil {
		t.Fatal(err)
	}
	run = waitRun(t, b.st, b.eng.Broker(), run.ID)
	if run.Status != store.RunFinished {
		t.Fatalf("run %d ended %s: %s", run.ID, run.Status, run.Error)
	}
	return run
}

// The example formulas of seed 002 (§6.2 and §12.1), copied as the seed
// writes them, are saved as KPIs and computed on a run whose scores are
// known: the judge gives accuracy 4 on 1–5 (0.75 normalised) and the checks
// score the fixture answer.
func TestSeedFormulasVerbatim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var cs []store.Check
		check := map[string]float64{}
		for _, typ := range []string{checks.F1, checks.Precision, checks.Recall, checks.BLEU, checks.RougeL} {
			cs = append(cs, store.Check{Type: typ})
			r, err := checks.Run(typ, checks.Answer{Text: seedAnswer}, seedReference)
			if err != nil {
				t.Fatal(err)
			}
			check[typ] = r.Score
		}
		// By hand: 4 of 5 answer tokens are in the reference, all 4 of its tokens are in the answer.
		if !near(check[checks.Precision], 0.8) || !near(check[checks.Recall], 1) || !near(check[checks.F1], 8.0/9) ||
			!near(check[checks.RougeL], 2*0.8*(4.0/6)/(0.8+4.0/6)) {
			t.Fatalf("fixture check scores %v", check)
		}
		acc, prec, rec := 0.75, check[checks.Precision], check[checks.Recall]
		rouge, bleu, f1 := check[checks.RougeL], check[checks.BLEU], check[checks.F1]
		formulas := []struct {
			src  string
			want float64
		}{
			// §6.2
			{"AVERAGE(ACCURACY, PRECISION, RECALL)", (acc + prec + rec) / 3},
			{"WEIGHTED_SUM(ACCURACY:0.4, PRECISION:0.3, RECALL:0.3)", 0.4*acc + 0.3*prec + 0.3*rec},
			{"MIN(ROUGE, BLEU, F1_SCORE)", min(rouge, bleu, f1)},
			{"MAX(ACCURACY, PRECISION)", max(acc, prec)},
			{"THRESHOLD(ACCURACY, 0.8)", 0}, // 0.75: on the judge's own scale, 4 ≥ 0.8 would give 1
			// §12.1
			{"IF ACCURACY > 0.9 THEN 1.0 ELSE 0.0", 0},
			{"(ROUGE + BLEU + F1_SCORE) / 3", (rouge + bleu + f1) / 3},
			{"MIN(ACCURACY, MAX(PRECISION, RECALL)) * 100", 75},
		}
		for _, f := range formulas {
			if v, err := st.ValidateFormula(ctx, f.src); err != nil || !v.OK {
				t.Fatalf("%s does not validate: %+v %v", f.src, v, err)
			}
			if _, err := st.CreateKPI(ctx, store.KPIInput{Name: f.src, Formula: f.src}); err != nil {
				t.Fatal(err)
			}
		}

		b := newScaleBench(t, st, cs)
		judge := b.judge(t, 1, 5, "accuracy", "coherence")
		run := b.run(t, judge, `{"accuracy": {"score": 4, "reasoning": "mostly"}, "coherence": {"score": 5, "reasoning": "clear"}}`)
		evalAll(t, NewEvaluator(Config{WorkerID: "w"}, st, quietLog()))

		vals, err := st.RunKPIValues(ctx, run.ID)
		if err != nil || len(vals) != len(formulas) {
			t.Fatalf("KPI values: %+v %v", vals, err)
		}
		got := map[string]store.RunKPI{}
		for _, v := range vals {
			got[v.Formula] = v
		}
		for _, f := range formulas {
			v := got[f.src]
			if v.Value == nil || !near(*v.Value, f.want) {
				t.Errorf("%s = %s (error %q), want %v", f.src, show(v.Value), v.Error, f.want)
			}
		}
	})
}

// A run judged 1–5 and a run judged 1–10 that think as well of the answers
// read the same to alerts: a 4 of 1–5 (0.75) after 8s of 1–10 (0.78) is no
// drop, though 4 is half of 8; a 2 of 1–5 (0.25) is one. Both the metric
// score and the KPI ACCURACY (the judge score: the style has no accuracy
// metric) are watched.
func TestScaleChangeNoFalseAlarm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newScaleBench(t, st, nil)
		tenJudge, fiveJudge := b.judge(t, 1, 10, "score"), b.judge(t, 1, 5, "score")
		acc, err := st.CreateKPI(ctx, store.KPIInput{Name: "Accuracy", Formula: "ACCURACY"})
		if err != nil {
			t.Fatal(err)
		}
		pct := 20.0
		for _, in := range []store.AlertInput{
			{Name: "score drops", Metric: "score", Condition: "PERCENTAGE_DROP", Threshold: &pct, BaselineRuns: 3},
			{Name: "accuracy drops", KPIID: &acc.ID, Condition: "PERCENTAGE_DROP", Threshold: &pct, BaselineRuns: 3},
		} {
			if _, err := st.CreateAlert(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		ev := NewEvaluator(Config{WorkerID: "w"}, st, quietLog())
		verdict := func(score int) string { return fmt.Sprintf(`{"score": %d, "reasoning": "ok"}`, score) }
		for range 3 {
			b.run(t, tenJudge, verdict(8))
			evalAll(t, ev)
		}
		same := b.run(t, fiveJudge, verdict(4))
		evalAll(t, ev)
		ns, err := st.Notifications(ctx, store.NotificationFilter{})
		if err != nil || ns.Total != 0 {
			t.Fatalf("a scale change raised %d alarm(s): %+v %v", ns.Total, ns.Items, err)
		}
		vals, _ := st.RunKPIValues(ctx, same.ID)
		if len(vals) != 1 || vals[0].Value == nil || !near(*vals[0].Value, 0.75) {
			t.Fatalf("ACCURACY of the 1–5 run: %+v, want 0.75", vals)
		}

		worse := b.run(t, fiveJudge, verdict(2))
		evalAll(t, ev)
		ns, err = st.Notifications(ctx, store.NotificationFilter{})
		if err != nil || ns.Total != 2 {
			t.Fatalf("a real drop raised %d alarm(s), want 2 (score and ACCURACY): %+v %v", ns.Total, ns.Items, err)
		}
		for _, n := range ns.Items {
			if n.RunID == nil || *n.RunID != worse.ID || n.Value == nil || !near(*n.Value, 0.25) {
				t.Errorf("alarm %+v: want run %d at 0.25", n, worse.ID)
			}
		}
	})
}

func show(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
