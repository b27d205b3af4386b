package runs

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"tribunal/format"
	"tribunal/llm"
	"tribunal/store"
)

// candidate is a model a provider lists, with what a suggestion reads of it.
type candidate struct {
	provider store.Provider
	model    llm.Model
	in, out  float64 // USD per million tokens
	priced   bool
}

// suggest proposes models from the providers' lists while no model of the
// scope has the figures to be recommended: the use case's default
// candidates first, then up to MaxSuggestions others that fit its context
// window and the budget, cheapest first. A provider whose list fails is
// named in the errors and left out. With no engine (reading only) it
// proposes nothing.
func (s *Service) suggest(ctx context.Context, sc store.Scope, uc *store.UseCase, q RecommendQuery, hadRuns bool) ([]RecommendedModel, []ProviderError, error) {
	out := []RecommendedModel{}
	if s.engine == nil {
		return out, nil, nil
	}
	listed, errs, err := s.listModels(ctx)
	if err != nil {
		return nil, nil, err
	}
	chars, _, err := s.store.ScopePromptChars(ctx, sc)
	if err != nil {
		return nil, nil, err
	}
	inTok, outTok := tokensOf(int(chars+0.5)), int64(DefaultAnswerTokens)
	var needed int64
	var defaults []string
	if uc != nil {
		needed, defaults = uc.ContextNeededTokens, uc.DefaultCandidateModels
	}
	lead := "suggested: no runs yet"
	if hadRuns {
		lead = "suggested: no model has enough data here yet"
	}
	// judge says whether a listed model fits, and describes it.
	judge := func(c candidate) (m RecommendedModel, fits bool, why string) {
		id := c.provider.ID
		m = RecommendedModel{Provider: c.provider.Name, ProviderID: &id, Model: c.model.ID, Suggested: true, ContextLength: c.model.ContextLength}
		var parts []string
		switch n := c.model.ContextLength; {
		case needed > 0 && n > 0 && n < needed:
			return m, false, fmt.Sprintf("context window %s tokens, less than the %s needed", format.Tokens(n), format.Tokens(needed))
		case n > 0:
			parts = append(parts, "context "+format.Tokens(n)+" tokens")
		case needed > 0:
			parts = append(parts, "context window not reported")
		}
		if c.priced {
			usd := (float64(inTok)*c.in + float64(outTok)*c.out) / 1e6 * 1000
			m.CostPer1K = &usd
			if q.BudgetPer1K != nil && usd > *q.BudgetPer1K {
				return m, false, fmt.Sprintf("over budget: about %s per 1k tasks (budget %s)", format.USD(&usd), format.USD(q.BudgetPer1K))
			}
			parts = append(parts, "about "+format.USD(&usd)+" per 1k tasks (estimated)")
		} else {
			if q.BudgetPer1K != nil {
				return m, false, "cost unknown (no price for this model), so the budget cannot be checked"
			}
			parts = append(parts, "no price known")
		}
		return m, true, strings.Join(parts, "; ")
	}
	taken := map[string]bool{}
	var left []RecommendedModel
	for _, name := range defaults {
		i := slices.IndexFunc(listed, func(c candidate) bool { return strings.EqualFold(c.model.ID, name) })
		if i < 0 {
			left = append(left, RecommendedModel{Model: name, Suggested: true,
				Reason: "a default candidate of the use case, but no provider lists it"})
			continue
		}
		c := listed[i]
		taken[fmt.Sprint(c.provider.ID, "/", c.model.ID)] = true
		m, fits, why := judge(c)
		if !fits {
			m.Reason = "a default candidate of the use case, left out: " + why
			left = append(left, m)
			continue
		}
		m.Eligible, m.Reason = true, lead+"; a default candidate of the use case; "+why
		out = append(out, m)
	}
	var others []RecommendedModel
	for _, c := range listed {
		if taken[fmt.Sprint(c.provider.ID, "/", c.model.ID)] {
			continue
		}
		if m, fits, why := judge(c); fits {
			m.Eligible, m.Reason = true, lead+"; "+why
			others = append(others, m)
		}
	}
	slices.SortStableFunc(others, func(a, b RecommendedModel) int {
		return cmp.Or(cmpNilLast(a.CostPer1K, b.CostPer1K, false), cmp.Compare(a.Label(), b.Label()))
	})
	out = append(out, others[:min(len(others), MaxSuggestions)]...)
	return append(out, left...), errs, nil
}

// listModels reads every provider's model list at once, each within
// SuggestTimeout, with its prices (the provider's own, else the ones the
// list publishes). Providers are in name order, their models as listed.
func (s *Service) listModels(ctx context.Context) ([]candidate, []ProviderError, error) {
	ps, err := s.store.Providers(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i := range ps {
		p, err := s.store.ProviderWithSecrets(ctx, ps[i].ID)
		if err != nil {
			return nil, nil, err
		}
		ps[i] = *p
	}
	lists := make([][]llm.Model, len(ps))
	fails := make([]error, len(ps))
	var wg sync.WaitGroup
	for i := range ps {
		wg.Go(func() {
			lctx, cancel := context.WithTimeout(ctx, SuggestTimeout)
			defer cancel()
			lists[i], fails[i] = s.engine.Client(&ps[i]).Models(lctx)
		})
	}
	wg.Wait()
	var out []candidate
	var errs []ProviderError
	for i, p := range ps {
		if fails[i] != nil {
			errs = append(errs, ProviderError{Provider: p.Name, Error: fails[i].Error()})
			continue
		}
		prices := map[string]store.ProviderPrice{}
		for _, pr := range p.Prices {
			prices[pr.Model] = pr
		}
		for _, m := range lists[i] {
			c := candidate{provider: p, model: m}
			if pr, ok := prices[m.ID]; ok {
				c.in, c.out, c.priced = pr.InputPerMTok, pr.OutputPerMTok, true
			} else {
				c.in, c.out, c.priced = m.Pricing.PerMTok()
			}
			out = append(out, c)
		}
	}
	return out, errs, nil
}
