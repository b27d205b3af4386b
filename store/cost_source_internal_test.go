package store

import "testing"

func usd(v float64) *float64 { return &v }

// TestCostSourceSums: a sum's source is its calls' one source, mixed when
// reported and priced calls meet, unknown once a call's cost is; a panel's
// judges merge the same way, the first judge's standing alone.
func TestCostSourceSums(t *testing.T) {
	for _, tc := range []struct {
		a, b, want CostSource
	}{
		{CostProvider, CostProvider, CostProvider},
		{CostPriceTable, CostPriceTable, CostPriceTable},
		{CostProvider, CostPriceTable, CostMixed},
		{CostMixed, CostProvider, CostMixed},
		{CostProvider, CostUnknown, CostUnknown},
		{CostUnknown, CostPriceTable, CostUnknown},
	} {
		if got := tc.a.Merge(tc.b); got != tc.want {
			t.Errorf("%q.Merge(%q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}

	price := Price{InputPerMTok: usd(1e6), OutputPerMTok: usd(2e6)} // $1 per input token, $2 per output token
	var sum CostSum
	sum.Add(price.CallCost(usd(0.5), 10, 10))
	sum.Add(price.CallCost(nil, 1, 1))
	if sum.USD == nil || *sum.USD != 3.5 || sum.Source != CostMixed {
		t.Errorf("reported 0.5 + priced 3: %v from %q", sum.USD, sum.Source)
	}
	sum.Add(Price{}.CallCost(nil, 1, 1))
	if sum.USD != nil || sum.Source != CostUnknown {
		t.Errorf("with an unpriced call: %v from %q", sum.USD, sum.Source)
	}

	first := JudgingCompletion(&Item{JudgePos: 0, JudgeCostSource: CostPriceTable}, Verdict{CostSource: CostProvider})
	second := JudgingCompletion(&Item{JudgePos: 1, JudgeCostSource: CostPriceTable}, Verdict{CostSource: CostProvider})
	if first.updates["judge_cost_source"] != "provider" || second.updates["judge_cost_source"] != "mixed" {
		t.Errorf("panel: first judge %v, second %v", first.updates["judge_cost_source"], second.updates["judge_cost_source"])
	}
}
