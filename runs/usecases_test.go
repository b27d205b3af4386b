package runs

import (
	"math"
	"testing"

	"tribunal/store"
)

// TestUseCaseTotals: categories roll up into their use case per target:
// counts and costs add, the mean weighs each category by its scored
// items, and an unknown price stays unknown until some category has one.
func TestUseCaseTotals(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	groups := []store.GroupStats{
		{RunTargetID: 1, UseCase: "sales", Category: "leads", Items: 4, Scored: 4, Passed: 3, AvgScore: f(8), CostUSD: f(0.5), JudgeCostUSD: 0.1},
		{RunTargetID: 2, UseCase: "sales", Category: "leads", Items: 4, Scored: 2, Passed: 1, AvgScore: f(5)},
		{RunTargetID: 1, UseCase: "sales", Category: "refunds", Items: 2, Scored: 1, Passed: 0, AvgScore: f(2), CostUSD: f(0.25), JudgeCostUSD: 0.05},
		{RunTargetID: 2, UseCase: "sales", Category: "refunds", Items: 2, Scored: 0},
		{RunTargetID: 1, UseCase: "support", Category: "shipping", Items: 1, Scored: 1, Passed: 1, AvgScore: f(9), CostUSD: f(0.1)},
	}
	got := useCaseTotals(groups)
	if len(got) != 2 || got[0].UseCase != "sales" || got[1].UseCase != "support" || len(got[0].Categories) != 2 || len(got[1].Categories) != 1 {
		t.Fatalf("shape: %+v", got)
	}
	sales := got[0].Targets
	if len(sales) != 2 || sales[0].TargetID != 1 || sales[1].TargetID != 2 {
		t.Fatalf("sales targets: %+v", sales)
	}
	a, b := sales[0], sales[1]
	if a.Items != 6 || a.Scored != 5 || a.Passed != 3 || math.Abs(*a.MeanScore-(8*4+2)/5.0) > 1e-9 ||
		math.Abs(*a.CostUSD-0.75) > 1e-9 || math.Abs(a.JudgeCostUSD-0.15) > 1e-9 {
		t.Errorf("target 1 in sales: %+v (mean %v, cost %v)", a, *a.MeanScore, *a.CostUSD)
	}
	if b.Items != 6 || b.Scored != 2 || *b.MeanScore != 5 || b.CostUSD != nil {
		t.Errorf("target 2 in sales (no price): %+v", b)
	}
	if c := got[0].Categories[1]; c.Category != "refunds" || len(c.Targets) != 2 || c.Targets[1].MeanScore != nil || *c.Targets[0].CostUSD != 0.25 {
		t.Errorf("refunds row: %+v", c)
	}
	if s := got[1].Targets; len(s) != 1 || *s[0].MeanScore != 9 {
		t.Errorf("support: %+v", s)
	}
}
