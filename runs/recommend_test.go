package runs

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"tribunal/analysis"
	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// recFixture is four finished runs' worth of known results on the use case
// "support" (tasks s1–s4; s1 and s2 in category "billing") and one task of
// another use case in the same category, plus a live run that must not count.
type recFixture struct {
	svc     *Service
	results []storetest.ItemResult // the finished runs' results, for the expected figures
	tasks   map[string]string      // task key → use case
}

func usd(v float64) *float64 { return &v }

func newRecFixture(t *testing.T, st *store.Store) *recFixture {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "prov", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	f := &recFixture{svc: New(st, nil), tasks: map[string]string{"s1": "support", "s2": "support", "s3": "support", "s4": "support", "o1": "other"}}
	for _, k := range []string{"s1", "s2", "s3", "s4", "o1"} {
		cat := "shipping"
		if k == "s1" || k == "s2" || k == "o1" {
			cat = "billing"
		}
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: k, Category: cat, Question: "q " + k, UseCase: f.tasks[k]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateUseCase(ctx, store.UseCaseInput{Name: "support", CostPriority: store.CostLow}); err != nil {
		t.Fatal(err)
	}
	all := []string{"s1", "s2", "s3", "s4", "o1"}
	res := func(model string, overall []float64, times []int64, cost, tps float64) []storetest.ItemResult {
		var out []storetest.ItemResult
		for i, o := range overall {
			out = append(out, storetest.ItemResult{Model: model, Task: all[i], Overall: o, TimeMs: times[i], CostUSD: usd(cost), TokensPerS: tps})
		}
		return out
	}
	// Run A: every model; m-best's o1 (another use case) scores 0 and must not count.
	a := slices.Concat(
		res("m-best", []float64{0.80, 0.88, 0.92, 0.94, 0}, []int64{100, 400, 300, 200, 9999}, 0.010, 50),
		res("m-cheap", []float64{0.89, 0.89, 0.89, 0.89}, []int64{500, 500, 500, 500}, 0.001, 80),
		res("m-mid", []float64{0.80, 0.80, 0.80, 0.80}, []int64{700, 700, 700, 700}, 0.005, 40),
		res("m-slow", []float64{0.86, 0.86, 0.86, 0.86}, []int64{5000, 5000, 5000, 5000}, 0.0005, 10),
		res("m-few", []float64{0.99, 0.99}, []int64{100, 100}, 0.001, 90))
	runA := storetest.FixedRun(t, st, "A", p.ID, []string{"m-best", "m-cheap", "m-mid", "m-slow", "m-few"}, all, a)
	// m-few is an agent in run A: it keeps its own label.
	storetest.MakeAgentTarget(t, st, runA.Targets[4].ID, "helper", 2)
	// Run B: m-best again (s1 better this time) and m-cheap, m-mid, m-slow.
	b := slices.Concat(
		res("m-best", []float64{0.92, 0.88, 0.92, 0.94}, []int64{500, 600, 700, 800}, 0.020, 70),
		res("m-cheap", []float64{0.89, 0.89, 0.89, 0.89}, []int64{500, 500, 500, 500}, 0.001, 80),
		res("m-mid", []float64{0.80, 0.80, 0.80, 0.80}, []int64{700, 700, 700, 700}, 0.005, 40),
		res("m-slow", []float64{0.86, 0.86, 0.86, 0.86}, []int64{5000, 5000, 5000, 5000}, 0.0005, 10))
	storetest.FixedRun(t, st, "B", p.ID, []string{"m-best", "m-cheap", "m-mid", "m-slow"}, all, b)
	// A live run's results do not count: m-best scores 0 in it.
	live := storetest.FixedRun(t, st, "live", p.ID, []string{"m-best"}, all, res("m-best", []float64{0, 0, 0, 0}, []int64{1, 1, 1, 1}, 9, 1))
	storetest.Exec(t, st, `UPDATE runs SET status = ? WHERE id = ?`, string(store.RunRunning), live.ID)
	f.results = slices.Concat(a, b)
	return f
}

// expected computes a model's figures from the fixture's results by the
// definitions: per task the runs averaged, then the tasks; cost the mean
// per item × 1,000; the median of the times; the mean tokens/s.
func (f *recFixture) expected(model string, keep func(task string) bool) (overall []float64, cost, median, tps float64, n int64) {
	perTask := map[string][]float64{}
	var times []float64
	var costSum, tpsSum float64
	for _, r := range f.results {
		if r.Model != model || !keep(r.Task) {
			continue
		}
		perTask[r.Task] = append(perTask[r.Task], r.Overall*100)
		times = append(times, float64(r.TimeMs))
		costSum += *r.CostUSD
		tpsSum += r.TokensPerS
		n++
	}
	for _, xs := range perTask {
		var s float64
		for _, x := range xs {
			s += x
		}
		overall = append(overall, s/float64(len(xs)))
	}
	slices.Sort(overall)
	slices.Sort(times)
	k := len(times)
	median = (times[(k-1)/2] + times[k/2]) / 2
	return overall, costSum / float64(n) * 1000, median, tpsSum / float64(n), n
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func labels(ms []RecommendedModel) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Label()
	}
	return out
}

func TestRecommendFiguresFrontAndOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newRecFixture(t, st)
		rec, err := f.svc.Recommend(ctx, RecommendQuery{UseCase: "support", MinItems: 5})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Runs != 2 || rec.CostPriority != store.CostLow || rec.Suggested {
			t.Errorf("runs %d, priority %q, suggested %v; want the 2 finished runs, the use case's low, no suggestions", rec.Runs, rec.CostPriority, rec.Suggested)
		}
		inSupport := func(task string) bool { return f.tasks[task] == "support" }
		byModel := map[string]RecommendedModel{}
		for _, m := range rec.Models {
			byModel[m.Model] = m
		}
		for _, model := range []string{"m-best", "m-cheap", "m-mid", "m-slow"} {
			m := byModel[model]
			xs, cost, median, tps, n := f.expected(model, inSupport)
			want := analysis.MeanCI(xs)
			if m.Overall == nil || !closeTo(*m.Overall, want.Mean) || m.OverallCI == nil || !closeTo(m.OverallCI.Lo, want.Lo) || !closeTo(m.OverallCI.Hi, want.Hi) {
				t.Errorf("%s: overall %v %+v, want %+v", model, m.Overall, m.OverallCI, want)
			}
			if m.CostPer1K == nil || !closeTo(*m.CostPer1K, cost) || m.MedianLatencyMs == nil || !closeTo(*m.MedianLatencyMs, median) ||
				m.TokensPerS == nil || !closeTo(*m.TokensPerS, tps) || m.N != n || m.Tasks != 4 || m.Runs != 2 || m.Provider != "prov" {
				t.Errorf("%s: cost %v median %v tps %v n %d tasks %d runs %d; want %v %v %v %d 4 2", model, m.CostPer1K, m.MedianLatencyMs, m.TokensPerS, m.N, m.Tasks, m.Runs, cost, median, tps, n)
			}
			if !m.Eligible {
				t.Errorf("%s left out: %s", model, m.Reason)
			}
		}
		// m-best pools s1 over both runs: (80 + 92) / 2, not the live run's 0 nor o1's.
		if m := byModel["m-best"]; !closeTo(*m.Overall, (86+88+92+94)/4.0) || !closeTo(*m.MedianLatencyMs, 450) {
			t.Errorf("m-best overall %v, median %v; want 90, 450", *m.Overall, *m.MedianLatencyMs)
		}
		// The front: m-best (best), m-cheap, m-slow (cheapest); m-mid is beaten by m-cheap on both.
		for model, want := range map[string]bool{"m-best": true, "m-cheap": true, "m-slow": true, "m-mid": false} {
			if byModel[model].Pareto != want {
				t.Errorf("%s pareto %v, want %v", model, byModel[model].Pareto, want)
			}
		}
		if r := byModel["m-mid"].Reason; !strings.Contains(r, "dominated: prov / m-cheap is better (89.0 vs 80.0)") {
			t.Errorf("m-mid's reason %q", r)
		}
		// The agent with 2 items is left out, last, and says why.
		last := rec.Models[len(rec.Models)-1]
		if last.Agent != "helper (agent v2)" || last.Eligible || last.Reason != "not enough data: 2 scored items (at least 5 needed)" {
			t.Errorf("last %+v", last)
		}
		// low: the cheapest within 5 points of the best first.
		if got, want := labels(rec.Models), []string{"prov / m-slow", "prov / m-cheap", "prov / m-best", "prov / m-mid", "helper (agent v2)"}; !slices.Equal(got, want) {
			t.Errorf("low order %v, want %v", got, want)
		}
		if r := rec.Models[0].Reason; r != "cheapest within 5 points of the best (prov / m-best, 90.0)" {
			t.Errorf("low's first reason %q", r)
		}
		for priority, want := range map[string][]string{
			store.CostBalanced: {"prov / m-cheap", "prov / m-best", "prov / m-slow", "prov / m-mid"},
			store.CostHigh:     {"prov / m-best", "prov / m-cheap", "prov / m-slow", "prov / m-mid"},
		} {
			rec, err := f.svc.Recommend(ctx, RecommendQuery{UseCase: "support", MinItems: 5, CostPriority: priority})
			if err != nil {
				t.Fatal(err)
			}
			if got := labels(rec.Models)[:4]; !slices.Equal(got, want) {
				t.Errorf("%s order %v, want %v", priority, got, want)
			}
			if priority == store.CostHigh && rec.Models[0].Reason != "best overall" {
				t.Errorf("high's first reason %q", rec.Models[0].Reason)
			}
		}
		// The default minimum (10 items) leaves every model out, with its count.
		rec, err = f.svc.Recommend(ctx, RecommendQuery{UseCase: "support"})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rec.Models {
			if m.Eligible || (m.Model == "m-best" && m.Reason != "not enough data: 8 scored items (at least 10 needed)") {
				t.Errorf("default minimum %d: %s eligible %v because %q", rec.MinItems, m.Model, m.Eligible, m.Reason)
			}
		}
	})
}

func TestRecommendFiltersAndScope(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newRecFixture(t, st)
		rec, err := f.svc.Recommend(ctx, RecommendQuery{UseCase: "support", MinItems: 5, CostPriority: store.CostHigh,
			BudgetPer1K: usd(5), MinOverall: usd(85), MaxLatencyMs: usd(1000)})
		if err != nil {
			t.Fatal(err)
		}
		kept, why := []string{}, map[string]string{}
		for _, m := range rec.Models {
			if m.Eligible {
				kept = append(kept, m.Model)
			} else {
				why[m.Model] = m.Reason
			}
		}
		if !slices.Equal(kept, []string{"m-cheap"}) {
			t.Errorf("kept %v, want only m-cheap", kept)
		}
		if rec.Models[0].Reason != "best overall within budget" {
			t.Errorf("first reason %q", rec.Models[0].Reason)
		}
		for model, want := range map[string]string{
			"m-best": "over budget: $15.00 per 1k tasks (budget $5.00)",
			"m-mid":  "below the minimum overall: 80.0 (at least 85.0)",
			"m-slow": "too slow: median 5000 ms (at most 1000 ms)",
		} {
			if why[model] != want {
				t.Errorf("%s left out because %q, want %q", model, why[model], want)
			}
		}
		// A category spans use cases: billing is s1, s2 and o1.
		rec, err = f.svc.Recommend(ctx, RecommendQuery{Category: "billing", MinItems: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rec.Models {
			if m.Model != "m-best" {
				continue
			}
			xs, _, _, _, n := f.expected("m-best", func(task string) bool { return task != "s3" && task != "s4" })
			if m.Tasks != 3 || m.N != n || !closeTo(*m.Overall, analysis.MeanCI(xs).Mean) {
				t.Errorf("billing m-best: tasks %d n %d overall %v", m.Tasks, m.N, *m.Overall)
			}
		}
		// Bad queries and unknown scopes.
		var ve *store.ValidationError
		for _, q := range []RecommendQuery{{}, {UseCase: "support", Category: "billing"}, {UseCase: "support", BudgetPer1K: usd(-1)}, {UseCase: "support", CostPriority: "cheap"}} {
			if _, err := f.svc.Recommend(ctx, q); !errors.As(err, &ve) {
				t.Errorf("%+v: %v, want a validation error", q, err)
			}
		}
		if _, err := f.svc.Recommend(ctx, RecommendQuery{UseCase: "nobody"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown use case: %v", err)
		}
	})
}

// A use case without runs gets candidates from the providers' lists: its
// defaults first, fitting its context window and the budget; a provider
// that fails is named.
func TestRecommendSuggestsFromModelLists(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		fake := llmtest.New(t, nil)
		fake.Models = []string{"small", "large", "local", "huge"}
		fake.ContextLengths = map[string]int64{"small": 8192, "large": 200000, "huge": 1000000}
		// USD per token: large $3 / $15 per million, huge $0.1 / $0.1.
		fake.Pricing = map[string][2]string{"small": {"0.0000001", "0.0000001"}, "large": {"0.000003", "0.000015"}, "huge": {"0.0000001", "0.0000001"}}
		if _, err := st.CreateProvider(ctx, store.ProviderInput{Name: "cloud", BaseURL: fake.URL}); err != nil {
			t.Fatal(err)
		}
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		if _, err := st.CreateProvider(ctx, store.ProviderInput{Name: "down", BaseURL: down.URL}); err != nil {
			t.Fatal(err)
		}
		// 400 characters of prompt: 100 tokens in, DefaultAnswerTokens out.
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "f1", Category: "c", Question: strings.Repeat("x", 400), UseCase: "fresh"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateUseCase(ctx, store.UseCaseInput{Name: "fresh", ContextNeededTokens: 100000, DefaultCandidateModels: []string{"large", "nowhere"}}); err != nil {
			t.Fatal(err)
		}
		eng := engine.New(engine.Config{}, st, engine.NewBroker(), nil)
		svc := New(st, eng)
		rec, err := svc.Recommend(ctx, RecommendQuery{UseCase: "fresh"})
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Suggested || len(rec.ProviderErrors) != 1 || rec.ProviderErrors[0].Provider != "down" {
			t.Fatalf("suggested %v, provider errors %+v", rec.Suggested, rec.ProviderErrors)
		}
		// small's window is too short; local reports none, so it stays, after the priced ones.
		if got, want := labels(rec.Models), []string{"cloud / large", "cloud / huge", "cloud / local", "nowhere"}; !slices.Equal(got, want) {
			t.Fatalf("suggestions %v, want %v", got, want)
		}
		large := rec.Models[0]
		wantCost := (100*3.0 + float64(DefaultAnswerTokens)*15) / 1e6 * 1000
		if !large.Eligible || large.CostPer1K == nil || !closeTo(*large.CostPer1K, wantCost) || large.ContextLength != 200000 ||
			!strings.HasPrefix(large.Reason, "suggested: no runs yet; a default candidate of the use case; context 200,000 tokens") {
			t.Errorf("large %+v (cost want %v)", large, wantCost)
		}
		if m := rec.Models[2]; !strings.Contains(m.Reason, "context window not reported; no price known") {
			t.Errorf("local's reason %q", m.Reason)
		}
		if m := rec.Models[3]; m.Eligible || m.Reason != "a default candidate of the use case, but no provider lists it" {
			t.Errorf("nowhere %+v", m)
		}
		// A budget below large's cost leaves it out, and local (no price) with it.
		rec, err = svc.Recommend(ctx, RecommendQuery{UseCase: "fresh", BudgetPer1K: usd(1)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := labels(rec.Models), []string{"cloud / huge", "cloud / large", "nowhere"}; !slices.Equal(got, want) {
			t.Fatalf("under budget %v, want %v", got, want)
		}
		if m := rec.Models[1]; m.Eligible || !strings.HasPrefix(m.Reason, "a default candidate of the use case, left out: over budget: about $7.98 per 1k tasks (budget $1.00)") {
			t.Errorf("large over budget %+v", m)
		}
	})
}
