package runs

import (
	"cmp"

	"tribunal/store"
)

// UseCaseName names a use case for people: tasks without one gather under
// "No use case" (pages, the form and the report alike).
func UseCaseName(name string) string { return cmp.Or(name, "No use case") }

// GroupTotal is one target's results within a use case, or within one
// category of it.
type GroupTotal struct {
	TargetID int64 `json:"target_id"`
	Items    int64 `json:"items"`
	Scored   int64 `json:"scored"`
	Passed   int64 `json:"passed"`
	// MeanScore is the mean judge score of the scored items; nil before any.
	MeanScore *float64 `json:"mean_score"`
	// CostUSD is what the answers cost, nil while no price is known;
	// JudgeCostUSD what judging them cost.
	CostUSD      *float64 `json:"cost_usd"`
	JudgeCostUSD float64  `json:"judge_cost_usd"`
}

// UseCaseTotals is one use case of a run: each target's totals over its
// categories, then each category's own.
type UseCaseTotals struct {
	UseCase    string           `json:"usecase"`
	Targets    []GroupTotal     `json:"targets"`
	Categories []CategoryTotals `json:"categories"`
}

// CategoryTotals is one category of a use case with each target's results.
type CategoryTotals struct {
	Category string       `json:"category"`
	Targets  []GroupTotal `json:"targets"`
}

// useCaseTotals rolls the breakdown's (target, use case, category) groups,
// which come ordered by use case and category, up into use cases: counts
// and costs add up, and the mean score is weighted by each category's
// scored items.
func useCaseTotals(groups []store.GroupStats) []UseCaseTotals {
	out := []UseCaseTotals{}
	for _, g := range groups {
		n := len(out)
		if n == 0 || out[n-1].UseCase != g.UseCase {
			out = append(out, UseCaseTotals{UseCase: g.UseCase, Targets: []GroupTotal{}, Categories: []CategoryTotals{}})
			n++
		}
		u := &out[n-1]
		if c := len(u.Categories); c == 0 || u.Categories[c-1].Category != g.Category {
			u.Categories = append(u.Categories, CategoryTotals{Category: g.Category, Targets: []GroupTotal{}})
		}
		cat := &u.Categories[len(u.Categories)-1]
		cat.Targets = append(cat.Targets, GroupTotal{TargetID: g.RunTargetID, Items: g.Items, Scored: g.Scored, Passed: g.Passed,
			MeanScore: g.AvgScore, CostUSD: g.CostUSD, JudgeCostUSD: g.JudgeCostUSD})
		u.Targets = addGroup(u.Targets, g)
	}
	return out
}

// addGroup adds g to its target's running total in totals.
func addGroup(totals []GroupTotal, g store.GroupStats) []GroupTotal {
	i := 0
	for i < len(totals) && totals[i].TargetID != g.RunTargetID {
		i++
	}
	if i == len(totals) {
		totals = append(totals, GroupTotal{TargetID: g.RunTargetID})
	}
	t := &totals[i]
	if g.AvgScore != nil && g.Scored > 0 {
		sum := *g.AvgScore * float64(g.Scored)
		if t.MeanScore != nil {
			sum += *t.MeanScore * float64(t.Scored)
		}
		mean := sum / float64(t.Scored+g.Scored)
		t.MeanScore = &mean
	}
	t.Items, t.Scored, t.Passed = t.Items+g.Items, t.Scored+g.Scored, t.Passed+g.Passed
	if g.CostUSD != nil {
		c := *g.CostUSD
		if t.CostUSD != nil {
			c += *t.CostUSD
		}
		t.CostUSD = &c
	}
	t.JudgeCostUSD += g.JudgeCostUSD
	return totals
}
