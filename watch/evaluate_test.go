package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// bench runs real benchmarks: an engine, a fake LLM whose judge gives
// the score set with setScore, two tasks in a collection.
type bench struct {
	st    *store.Store
	eng   *engine.Engine
	score atomic.Int64
	tmpl  store.RunInput
	coll  *store.CollectionDetail
}

func newBench(t *testing.T, st *store.Store) *bench {
	t.Helper()
	ctx := context.Background()
	b := &bench{st: st}
	b.score.Store(8)
	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "ok"}`, b.score.Load())}
		}
		return llmtest.Reply{Content: "Answer: " + r.Last()}
	})
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", Type: store.ProviderCustom, BaseURL: fake.URL, TimeoutSeconds: 5, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	var refs []store.TaskRef
	for i := range 2 {
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: fmt.Sprintf("t%d", i), Category: "math", Question: fmt.Sprintf("What is %d+%d?", i, i)})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, store.TaskRef{ID: tk.ID})
	}
	if b.coll, err = st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs}); err != nil {
		t.Fatal(err)
	}
	b.tmpl = store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "fake-judge"}, CollectionIDs: []int64{b.coll.ID},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "fake-small"}, {ProviderID: p.ID, Model: "fake-large"}}}
	b.eng = engine.New(engine.Config{PollInterval: 10 * time.Millisecond, BackoffBase: 10 * time.Millisecond}, st, engine.NewBroker(), quietLog())
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { b.eng.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return b
}

// run starts a run with the judge giving score and waits until it ends.
func (b *bench) run(t *testing.T, score int64) *store.Run {
	t.Helper()
	b.score.Store(score)
	run, err := b.eng.StartRun(context.Background(), b.tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return waitRun(t, b.st, b.eng.Broker(), run.ID)
}

// waitRun waits for a run to end, woken by the engine's broker.
func waitRun(t *testing.T, st *store.Store, broker *engine.Broker, id int64) *store.Run {
	t.Helper()
	ch, unsubscribe := broker.Subscribe(id)
	defer unsubscribe()
	deadline := time.After(20 * time.Second)
	for {
		run, err := st.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !run.Active() {
			return run
		}
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond): // a signal sent before Subscribe
		case <-deadline:
			t.Fatalf("run %d still %s", id, run.Status)
		}
	}
}

func evalAll(t *testing.T, ev *Evaluator) {
	t.Helper()
	for {
		n, err := ev.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// TestEvaluatorKPIsAndAlerts runs real benchmarks and checks that each
// finished run stores its metrics and KPI values (whole run and per model),
// that alerts fire on the run that breaks their condition with the value
// and baseline, and that webhooks receive them.
func TestEvaluatorKPIsAndAlerts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st)
		var mu sync.Mutex
		var hooks []map[string]any
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			raw, _ := io.ReadAll(r.Body)
			json.Unmarshal(raw, &body)
			mu.Lock()
			hooks = append(hooks, body)
			mu.Unlock()
		}))
		defer receiver.Close()

		quality, err := st.CreateKPI(ctx, store.KPIInput{Name: "Quality", Formula: "AVERAGE(score, pass_rate)"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := st.CreateCollection(ctx, store.CollectionInput{Name: "other"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateKPI(ctx, store.KPIInput{Name: "Elsewhere", Formula: "score", CollectionID: &other.ID}); err != nil {
			t.Fatal(err)
		}
		alert := func(in store.AlertInput) *store.Alert {
			t.Helper()
			a, err := st.CreateAlert(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		f := func(v float64) *float64 { return &v }
		low := alert(store.AlertInput{Name: "quality low", KPIID: &quality.ID, Condition: "LESS_THAN", Threshold: f(0.5), Severity: "CRITICAL",
			Channels: []store.Channel{{Type: "in_app"}, {Type: "webhook", URL: receiver.URL + "/hook"}}})
		drop := alert(store.AlertInput{Name: "small drops", Metric: "score", Model: "fake-small", Condition: "PERCENTAGE_DROP", Threshold: f(20), BaselineRuns: 3})
		alert(store.AlertInput{Name: "anomaly", Metric: "score", Condition: "ANOMALY_DETECTED", BaselineRuns: 3})
		alert(store.AlertInput{Name: "each model slow", Metric: "latency_ms", Model: "*", Condition: "GREATER_THAN", Threshold: f(1e9)})
		ev := NewEvaluator(Config{WorkerID: "w"}, st, quietLog())

		var runs []*store.Run
		for range 3 {
			runs = append(runs, b.run(t, 8))
			evalAll(t, ev)
		}
		ns, _ := st.Notifications(ctx, store.NotificationFilter{})
		if ns.Total != 0 {
			t.Fatalf("alerts fired on steady runs: %+v", ns.Items)
		}
		vals, err := st.RunKPIValues(ctx, runs[0].ID)
		if err != nil || len(vals) != 1 || vals[0].Name != "Quality" || vals[0].Value == nil || !near(*vals[0].Value, (7.0/9+1)/2) || len(vals[0].PerModel) != 2 {
			t.Fatalf("KPI values of run 1: %+v %v", vals, err)
		}

		last := b.run(t, 2)
		evalAll(t, ev)
		vals, _ = st.RunKPIValues(ctx, last.ID)
		// KPIs read judge scores normalised to 0–1: 8 on 1–10 is 7/9, 2 is 1/9 (and fails).
		if vals[0].Value == nil || !near(*vals[0].Value, 1.0/18) {
			t.Fatalf("KPI of the bad run: %+v", vals)
		}
		ns, _ = st.Notifications(ctx, store.NotificationFilter{RunID: last.ID})
		got := map[string]store.Notification{}
		for _, n := range ns.Items {
			got[n.AlertName] = n
		}
		if len(got) != 3 {
			t.Fatalf("fired %d alerts, want quality low, small drops, anomaly: %+v", len(got), ns.Items)
		}
		q := got["quality low"]
		if q.Severity != "CRITICAL" || !near(*q.Value, 1.0/18) || *q.Threshold != 0.5 || q.ReadAt != nil || len(q.Deliveries) != 2 ||
			!strings.Contains(q.Message, fmt.Sprintf("Run %d", last.ID)) || !strings.Contains(q.Title, "KPI Quality = 0.05") {
			t.Errorf("quality low: %+v", q)
		}
		d := got["small drops"]
		if d.Model != "fake / fake-small" || !near(*d.Value, 1.0/9) || d.Baseline == nil || !near(*d.Baseline, 7.0/9) || d.BaselineN != 3 ||
			!strings.Contains(d.Message, "85.71% below the baseline 0.7778") || d.ReadAt != nil {
			t.Errorf("small drops: %+v", d)
		}
		if a := got["anomaly"]; a.Baseline == nil || !near(*a.Baseline, 7.0/9) || a.BaselineSD == nil || !near(*a.BaselineSD, 0) {
			t.Errorf("anomaly: %+v", a)
		}

		// The webhook is delivered by the deliverer, with the run, value and baseline.
		dl := NewDeliverer(Config{WorkerID: "w", BaseURL: "http://tribunal.test", Egress: storetest.Egress}, st, quietLog())
		if n, err := dl.Tick(ctx); err != nil || n != 1 {
			t.Fatalf("deliver: %d %v", n, err)
		}
		if len(hooks) != 1 || hooks[0]["run_id"] != float64(last.ID) || !near(hooks[0]["value"].(float64), 1.0/18) || hooks[0]["severity"] != "CRITICAL" ||
			hooks[0]["link"] != fmt.Sprintf("http://tribunal.test/runs/%d", last.ID) || hooks[0]["event"] != "alert.fired" {
			t.Errorf("webhook payload: %+v", hooks)
		}
		n, _ := st.Notification(ctx, q.ID)
		if n.Deliveries[1].Status != store.DeliverySent || *n.Deliveries[1].ResponseCode != 200 || strings.Contains(n.Deliveries[1].Target, "/hook") {
			t.Errorf("delivery: %+v", n.Deliveries[1])
		}

		// Nothing is evaluated twice; an alert created now watches only later runs.
		if n, err := ev.Tick(ctx); n != 0 || err != nil {
			t.Fatalf("evaluated again: %d %v", n, err)
		}
		alert(store.AlertInput{Name: "late", Metric: "score", Condition: "LESS_THAN", Threshold: f(100)})
		as, _ := st.AlertsForRun(ctx, last, *last.FinishedAt)
		for _, a := range as {
			if a.Name == "late" {
				t.Errorf("an alert created after the run finished watches it")
			}
		}
		next := b.run(t, 8)
		evalAll(t, ev)
		ns, _ = st.Notifications(ctx, store.NotificationFilter{RunID: next.ID})
		if ns.Total != 1 || ns.Items[0].AlertName != "late" {
			t.Errorf("after the late alert: %+v", ns.Items)
		}
		_, _ = drop, low
	})
}
