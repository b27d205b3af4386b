package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"tribunal/analysis"
	"tribunal/charts"
	"tribunal/format"
	"tribunal/stats"
	"tribunal/store"
)

// How a recommendation is made (Service.Recommend: the API, the Recommend
// page, `tribunal recommend` and a run file's `models: auto`):
//
//   - The evidence is your own FINISHED benchmark runs, and in them only the
//     items whose task (as the run froze it) belongs to the use case or the
//     category. A model is a run target as the run labels it: provider and
//     model, or an agent and its version; the same model in several runs is
//     pooled.
//   - overall: each item's overall as its run defines it (ItemWeights), the
//     repeats of a task in a run averaged, then the runs of a task averaged,
//     then the tasks: 0–100 with the 95 % interval over tasks the run
//     summary uses (analysis.MeanCI). n counts the scored items.
//   - cost per 1,000 tasks: the mean answer cost of the items that have one
//     (a price was known) × 1,000, in USD; judges' costs are not the model's.
//   - median latency (ms) and tokens/s (their mean) over answered items.
//   - Kept are the models with at least min_items scored items (default
//     DefaultMinItems) that pass every filter given: budget_usd_per_1k (a
//     model without a price fails it: its cost is unknown), min_overall,
//     max_latency_ms. The others follow, each with the reason it was left out.
//   - pareto marks the kept models with a known cost that no other kept
//     model beats on both overall (higher) and cost (lower or equal).
//   - Order: the use case's cost_priority sets a margin (high 0, balanced 2,
//     low 5 points, PriorityMargin). The kept models within that margin of
//     the best overall come first, cheapest first; then the rest, best
//     overall first. So high puts the best overall first; balanced the
//     cheapest model that is as good as the best within 2 points; low the
//     cheapest within 5 points.
//   - With no kept model, candidates come from the providers' model lists
//     (read at once, each within SuggestTimeout; a provider that fails is
//     named): the use case's default_candidate_models first, then up to
//     MaxSuggestions others, cheapest first, each fitting the use case's
//     context_needed_tokens (where the provider reports a window) and the
//     budget (cost estimated from the tasks' prompt length ÷ CharsPerToken
//     and DefaultAnswerTokens of output).

// DefaultMinItems is how many scored items a model needs before it is
// recommended on its figures.
const DefaultMinItems = 10

// MaxSuggestions bounds the candidates taken from providers' model lists
// besides the use case's own defaults (OpenRouter lists hundreds).
const MaxSuggestions = 10

// SuggestTimeout bounds each provider's model list.
const SuggestTimeout = 10 * time.Second

// PriorityMargin is how many points (0–100) below the best overall a model
// may be and still come first for being cheaper, per cost priority.
var PriorityMargin = map[string]float64{store.CostHigh: 0, store.CostBalanced: 2, store.CostLow: 5}

// RecommendQuery is what a recommendation is asked for: one use case or one
// category, and the filters.
type RecommendQuery struct {
	UseCase  string
	Category string
	// BudgetPer1K is the most a model may cost per 1,000 tasks (USD).
	BudgetPer1K *float64
	// MinOverall is the least overall (0–100) a model must have.
	MinOverall *float64
	// MaxLatencyMs is the longest median answer time allowed.
	MaxLatencyMs *float64
	// MinItems is the scored items a model needs (0: DefaultMinItems).
	MinItems int64
	// CostPriority overrides the use case's (low, balanced, high; "": the use case's).
	CostPriority string
}

// Recommendation is the answer: the models best first, then those left out.
type Recommendation struct {
	UseCase      string  `json:"usecase,omitempty"`
	Category     string  `json:"category,omitempty"`
	CostPriority string  `json:"cost_priority"`
	Margin       float64 `json:"margin_points"`
	MinItems     int64   `json:"min_items"`
	// Runs counts the finished runs read.
	Runs   int                `json:"runs"`
	Models []RecommendedModel `json:"models"`
	// Suggested: no model had enough data, so candidates come from the
	// providers' model lists.
	Suggested bool `json:"suggested"`
	// ProviderErrors name the providers whose model lists could not be read.
	ProviderErrors []ProviderError `json:"provider_errors,omitempty"`
}

// ProviderError is a provider whose model list failed, and why.
type ProviderError struct {
	Provider string `json:"provider"`
	Error    string `json:"error"`
}

// RecommendedModel is one model with its figures and why it stands where it does.
type RecommendedModel struct {
	Provider   string `json:"provider"`
	ProviderID *int64 `json:"provider_id,omitempty"`
	Model      string `json:"model"`
	// Agent is an agent target's label, "name (agent vN)"; AgentID its id.
	Agent   string `json:"agent,omitempty"`
	AgentID *int64 `json:"agent_id,omitempty"`
	// Overall is 0–100 with its 95 % interval over tasks; nil before a scored item.
	Overall         *float64        `json:"overall"`
	OverallCI       *stats.Estimate `json:"overall_ci"`
	CostPer1K       *float64        `json:"cost_per_1k_usd"`
	MedianLatencyMs *float64        `json:"median_latency_ms"`
	TokensPerS      *float64        `json:"tokens_per_s"`
	// N counts scored items, Tasks the distinct tasks, Runs the runs.
	N     int64 `json:"n"`
	Tasks int   `json:"tasks"`
	Runs  int   `json:"runs"`
	// Pareto: no kept model is both better and cheaper.
	Pareto bool `json:"pareto"`
	// Eligible: kept (enough items, every filter passed); false: left out, Reason says why.
	Eligible bool `json:"eligible"`
	// Suggested: from a provider's model list, not from runs; CostPer1K is then an estimate.
	Suggested     bool   `json:"suggested"`
	ContextLength int64  `json:"context_length,omitempty"`
	Reason        string `json:"reason"`
}

// Label names the model for people, as runs do.
func (m RecommendedModel) Label() string {
	if m.Agent != "" {
		return m.Agent
	}
	if m.Provider == "" {
		return m.Model
	}
	return m.Provider + " / " + m.Model
}

// Scope is the tasks the query names.
func (q RecommendQuery) Scope() store.Scope {
	return store.Scope{UseCase: strings.TrimSpace(q.UseCase), Category: strings.TrimSpace(q.Category)}
}

// check refuses a query the store could not answer.
func (q RecommendQuery) check() error {
	sc := q.Scope()
	switch {
	case sc.UseCase == "" && sc.Category == "":
		return &store.ValidationError{Field: "usecase", Message: "name a use case (usecase) or a category (category)"}
	case sc.UseCase != "" && sc.Category != "":
		return &store.ValidationError{Field: "category", Message: "give a use case or a category, not both"}
	case q.CostPriority != "" && !slices.Contains(store.CostPriorities, q.CostPriority):
		return &store.ValidationError{Field: "cost_priority", Message: "must be one of " + strings.Join(store.CostPriorities, ", ")}
	case q.MinItems < 0:
		return &store.ValidationError{Field: "min_items", Message: "must be 0 or more"}
	}
	for field, v := range map[string]*float64{"budget_usd_per_1k": q.BudgetPer1K, "min_overall": q.MinOverall, "max_latency_ms": q.MaxLatencyMs} {
		if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return &store.ValidationError{Field: field, Message: "must be a number, 0 or more"}
		}
	}
	return nil
}

// pooled gathers one model's figures across runs.
type pooled struct {
	m        RecommendedModel
	tasks    map[string][2]float64 // task key → sum of per-run overalls, runs
	targets  []int64
	runs     map[int64]bool
	answered int64
	costN    int64
	costSum  float64
	tpsN     int64
	tpsSum   float64
}

// Recommend ranks the models of your finished runs on the query's use case
// or category (see the comment at the top of this file).
func (s *Service) Recommend(ctx context.Context, q RecommendQuery) (*Recommendation, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	sc := q.Scope()
	known, err := s.store.ScopeKnown(ctx, sc)
	if err != nil {
		return nil, err
	}
	if !known {
		if sc.UseCase != "" {
			return nil, &store.NotFoundError{What: "use case", ID: strconv.Quote(sc.UseCase)}
		}
		return nil, &store.NotFoundError{What: "category", ID: strconv.Quote(sc.Category)}
	}
	var uc *store.UseCase
	if sc.UseCase != "" {
		uc, err = s.store.UseCaseNamed(ctx, sc.UseCase)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	rec := &Recommendation{UseCase: sc.UseCase, Category: sc.Category, MinItems: cmp.Or(q.MinItems, DefaultMinItems),
		CostPriority: store.CostBalanced, Models: []RecommendedModel{}}
	if uc != nil && uc.CostPriority != "" {
		rec.CostPriority = uc.CostPriority
	}
	if q.CostPriority != "" {
		rec.CostPriority = q.CostPriority
	}
	rec.Margin = PriorityMargin[rec.CostPriority]

	models, runCount, err := s.pool(ctx, sc)
	if err != nil {
		return nil, err
	}
	rec.Runs = runCount
	var kept, dropped []RecommendedModel
	for _, m := range models {
		if m.Reason = leftOutBecause(m, q, rec.MinItems); m.Reason == "" {
			m.Eligible = true
			kept = append(kept, m)
		} else {
			dropped = append(dropped, m)
		}
	}
	kept = rank(kept, rec.Margin, q.BudgetPer1K != nil)
	slices.SortStableFunc(dropped, byOverall)
	rec.Models = append(rec.Models, kept...)
	if len(kept) == 0 {
		sugg, errs, err := s.suggest(ctx, sc, uc, q, len(models) > 0)
		if err != nil {
			return nil, err
		}
		rec.Suggested, rec.ProviderErrors = true, errs
		rec.Models = append(rec.Models, sugg...)
	}
	rec.Models = append(rec.Models, dropped...)
	return rec, nil
}

// pool reads every finished run of the scope and pools each model's
// figures; it returns the models (not yet filtered) and the runs read.
func (s *Service) pool(ctx context.Context, sc store.Scope) ([]RecommendedModel, int, error) {
	ids, err := s.store.ScopeRuns(ctx, sc)
	if err != nil {
		return nil, 0, err
	}
	byKey := map[string]*pooled{}
	var keys []string
	keyOf := map[int64]*pooled{} // run target → its model
	runOf := map[int64]int64{}   // run target → its run
	var read []int64
	for _, id := range ids {
		run, err := s.store.Run(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if run.Options.Pairwise {
			continue // a pairwise run ranks answers against each other: no item overall
		}
		read = append(read, id)
		for _, t := range run.Targets {
			k := t.ProviderName + "\x00" + t.Model
			if t.AgentName != "" {
				k = fmt.Sprintf("agent\x00%s\x00%d", t.AgentName, t.AgentVersion)
			}
			p := byKey[k]
			if p == nil {
				p = &pooled{tasks: map[string][2]float64{}, runs: map[int64]bool{},
					m: RecommendedModel{Provider: t.ProviderName, Model: t.Model}}
				if t.AgentName != "" {
					p.m.Agent = t.Label()
				}
				byKey[k] = p
				keys = append(keys, k)
			}
			// The latest run's ids: the provider or agent as it is now.
			p.m.ProviderID, p.m.AgentID = t.ProviderID, t.AgentID
			p.targets = append(p.targets, t.ID)
			keyOf[t.ID], runOf[t.ID] = p, id
		}
		overalls, err := s.store.ScopeOveralls(ctx, id, ItemWeights(run), sc)
		if err != nil {
			return nil, 0, err
		}
		for _, o := range overalls {
			p := keyOf[o.RunTargetID]
			if p == nil {
				continue
			}
			t := p.tasks[o.TaskKey]
			p.tasks[o.TaskKey] = [2]float64{t[0] + o.Overall, t[1] + 1}
			p.m.N += o.Items
			p.runs[id] = true
		}
	}
	measures, err := s.store.ScopeMeasures(ctx, read, sc)
	if err != nil {
		return nil, 0, err
	}
	for _, ms := range measures {
		if p := keyOf[ms.RunTargetID]; p != nil {
			p.answered += ms.Answered
			p.costN, p.costSum = p.costN+ms.CostN, p.costSum+ms.CostSum
			p.tpsN, p.tpsSum = p.tpsN+ms.TpsN, p.tpsSum+ms.TpsSum
			p.runs[runOf[ms.RunTargetID]] = true
		}
	}
	out := make([]RecommendedModel, 0, len(keys))
	for _, k := range keys {
		p := byKey[k]
		if p.answered == 0 && len(p.tasks) == 0 {
			continue // the model never answered a task of the scope
		}
		m := p.m
		xs := make([]float64, 0, len(p.tasks))
		for _, t := range p.tasks {
			xs = append(xs, t[0]/t[1]*100)
		}
		slices.Sort(xs) // map order must not move the bootstrap's interval
		if len(xs) > 0 {
			est := analysis.MeanCI(xs)
			m.Overall, m.OverallCI = &est.Mean, &est
		}
		m.Tasks, m.Runs = len(p.tasks), len(p.runs)
		if p.costN > 0 {
			c := p.costSum / float64(p.costN) * 1000
			m.CostPer1K = &c
		}
		if p.tpsN > 0 {
			tps := p.tpsSum / float64(p.tpsN)
			m.TokensPerS = &tps
		}
		if p.answered > 0 {
			med, err := s.store.ScopeMedianTime(ctx, p.targets, sc, p.answered)
			if err != nil {
				return nil, 0, err
			}
			m.MedianLatencyMs = &med
		}
		out = append(out, m)
	}
	return out, len(read), nil
}

// leftOutBecause says why a model is left out, or "" when it is kept.
func leftOutBecause(m RecommendedModel, q RecommendQuery, minItems int64) string {
	switch {
	case m.N < minItems || m.Overall == nil:
		unit := "scored items"
		if m.N == 1 {
			unit = "scored item"
		}
		return fmt.Sprintf("not enough data: %d %s (at least %d needed)", m.N, unit, minItems)
	case q.BudgetPer1K != nil && m.CostPer1K == nil:
		return "cost unknown (no price for this model), so the budget cannot be checked"
	case q.BudgetPer1K != nil && *m.CostPer1K > *q.BudgetPer1K:
		return fmt.Sprintf("over budget: %s per 1k tasks (budget %s)", format.USD(m.CostPer1K), format.USD(q.BudgetPer1K))
	case q.MinOverall != nil && *m.Overall < *q.MinOverall:
		return fmt.Sprintf("below the minimum overall: %s (at least %s)", format.Overall(m.Overall), format.Overall(q.MinOverall))
	case q.MaxLatencyMs != nil && (m.MedianLatencyMs == nil || *m.MedianLatencyMs > *q.MaxLatencyMs):
		return fmt.Sprintf("too slow: median %s (at most %s)", format.Ms(m.MedianLatencyMs), format.Ms(q.MaxLatencyMs))
	}
	return ""
}

// rank marks the Pareto front of the kept models, orders them (the ones
// within margin points of the best overall first, cheapest first; then the
// rest, best first) and says why each stands where it does.
func rank(kept []RecommendedModel, margin float64, budgeted bool) []RecommendedModel {
	if len(kept) == 0 {
		return kept
	}
	var pts []charts.Point
	var at []int
	for i, m := range kept {
		if m.CostPer1K != nil {
			pts = append(pts, charts.Point{X: *m.CostPer1K, Y: *m.Overall})
			at = append(at, i)
		}
	}
	for _, f := range charts.ParetoFront(pts) {
		kept[at[f]].Pareto = true
	}
	slices.SortStableFunc(kept, byOverall)
	best := kept[0]
	top := *best.Overall
	near := func(m RecommendedModel) bool { return *m.Overall >= top-margin }
	slices.SortStableFunc(kept, func(a, b RecommendedModel) int {
		na, nb := near(a), near(b)
		switch {
		case na != nb:
			if na {
				return -1
			}
			return 1
		case !na:
			return byOverall(a, b)
		case (a.CostPer1K == nil) != (b.CostPer1K == nil):
			if a.CostPer1K != nil {
				return -1
			}
			return 1
		case a.CostPer1K != nil && *a.CostPer1K != *b.CostPer1K:
			return cmp.Compare(*a.CostPer1K, *b.CostPer1K)
		}
		return byOverall(a, b)
	})
	first := kept[0]
	points := strconv.FormatFloat(margin, 'f', -1, 64)
	for i := range kept {
		m := &kept[i]
		switch {
		case i == 0 && *m.Overall == top:
			m.Reason = "best overall"
			if budgeted {
				m.Reason += " within budget"
			}
			if margin > 0 && len(kept) > 1 && near(kept[1]) {
				m.Reason += fmt.Sprintf(", and no model within %s points of it costs less", points)
			}
		case i == 0:
			m.Reason = fmt.Sprintf("cheapest within %s points of the best (%s, %s)", points, best.Label(), format.Overall(best.Overall))
			if budgeted {
				m.Reason += ", within budget"
			}
		case *m.Overall == top:
			m.Reason = fmt.Sprintf("best overall (%s), but %s is within %s points of it for less", format.Overall(m.Overall), first.Label(), points)
		case near(*m):
			m.Reason = fmt.Sprintf("within %s points of the best, but dearer than %s", points, first.Label())
		case m.Pareto:
			m.Reason = "on the Pareto front: no other model is both better and cheaper"
		case m.CostPer1K == nil:
			m.Reason = "cost unknown (no price for this model), so it is off the quality-vs-cost front"
		default:
			m.Reason = dominatedBy(*m, kept)
		}
	}
	return kept
}

// dominatedBy names the best model at least as good as m and no dearer,
// one of them strictly.
func dominatedBy(m RecommendedModel, kept []RecommendedModel) string {
	var by *RecommendedModel
	for i, d := range kept {
		if d.CostPer1K != nil && *d.Overall >= *m.Overall && *d.CostPer1K <= *m.CostPer1K && (*d.Overall > *m.Overall || *d.CostPer1K < *m.CostPer1K) &&
			(by == nil || byOverall(d, *by) < 0) {
			by = &kept[i]
		}
	}
	if by == nil { // not reached: a kept model off the front with a cost has a dominator
		return "off the Pareto front"
	}
	return fmt.Sprintf("dominated: %s is better (%s vs %s) for no more (%s vs %s per 1k tasks)", by.Label(),
		format.Overall(by.Overall), format.Overall(m.Overall), format.USD(by.CostPer1K), format.USD(m.CostPer1K))
}

// byOverall orders models best overall first (none last), then cheapest
// (unknown cost last), then by name.
func byOverall(a, b RecommendedModel) int {
	if c := cmpNilLast(a.Overall, b.Overall, true); c != 0 {
		return c
	}
	if c := cmpNilLast(a.CostPer1K, b.CostPer1K, false); c != 0 {
		return c
	}
	return cmp.Compare(a.Label(), b.Label())
}

// cmpNilLast compares two optional figures, nil after any value; desc puts
// the larger first.
func cmpNilLast(a, b *float64, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	case desc:
		return cmp.Compare(*b, *a)
	}
	return cmp.Compare(*a, *b)
}

// AutoTargets are the models a run file's `models: auto` benchmarks: the
// first n kept models of the recommendation (measured or suggested) whose
// provider or agent still exists, best first. Having none is a
// validation error of "models" that says why.
func (s *Service) AutoTargets(ctx context.Context, q RecommendQuery, n int) ([]RecommendedModel, error) {
	rec, err := s.Recommend(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []RecommendedModel
	for _, m := range rec.Models {
		if len(out) == n {
			break
		}
		if m.Eligible && (m.ProviderID != nil || m.AgentID != nil) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		msg := fmt.Sprintf("auto: nothing to recommend for %s: no model of its %d finished runs has %d scored items there",
			q.Scope().Describe(), rec.Runs, rec.MinItems)
		if s.engine != nil {
			msg += ", and no provider lists a model that fits"
		}
		return nil, &store.ValidationError{Field: "models", Message: msg + "; name targets: instead"}
	}
	return out, nil
}
