package store

import (
	"math"
	"testing"
)

func TestOverallScoresAndBest(t *testing.T) {
	judges := []RunJudge{{ID: 1, ScaleMin: 0, ScaleMax: 5, Metrics: []Metric{{Name: "accuracy"}, {Name: "coherence"}}}}
	b := &Breakdown{Metrics: []MetricMean{
		{RunTargetID: 10, Source: "judge:1", Metric: "accuracy", Mean: 5},
		{RunTargetID: 10, Source: "judge:1", Metric: "coherence", Mean: 2.5},
		{RunTargetID: 10, Source: "judge:1", Metric: "score", Mean: 4}, // derived: must not count again
		{RunTargetID: 10, Source: "check:numeric", Metric: "check_numeric", Mean: 0.5},
		{RunTargetID: 20, Source: "judge:1", Metric: "accuracy", Mean: 4},
		{RunTargetID: 20, Source: "judge:1", Metric: "coherence", Mean: 4},
		{RunTargetID: 20, Source: "check:numeric", Metric: "check_numeric", Mean: 1},
	}}
	cost := func(v float64) *float64 { return &v }
	perModel := []ModelStats{{TargetID: 10, Stats: Stats{Items: 10, CostUSD: cost(1)}}, {TargetID: 20, Stats: Stats{Items: 10, CostUSD: cost(4)}}, {TargetID: 30}}
	got := OverallScores(b, judges, map[string]float64{"accuracy": 2}, perModel)
	// Target 10: (2·100 + 1·50 + 1·50) / 4 = 75; target 20: (2·80 + 80 + 100) / 4 = 85.
	want := map[int64]float64{10: 75, 20: 85}
	for _, ms := range got[:2] {
		if ms.Overall == nil || math.Abs(*ms.Overall-want[ms.RunTargetID]) > 1e-9 {
			t.Errorf("target %d overall %v, want %g", ms.RunTargetID, ms.Overall, want[ms.RunTargetID])
		}
	}
	if got[2].Overall != nil || got[2].PerDollar != nil {
		t.Errorf("target without scores: %+v", got[2])
	}
	// Per dollar: 75 / 0.1 = 750 beats 85 / 0.4 = 212.5.
	if got[0].PerDollar == nil || math.Abs(*got[0].PerDollar-750) > 1e-9 {
		t.Errorf("per dollar %v", got[0].PerDollar)
	}
	if o, v := Best(got); o != 20 || v != 10 {
		t.Errorf("best overall %d, best value %d; want 20 and 10", o, v)
	}
	tied := []ModelScore{{RunTargetID: 1, Overall: cost(5)}, {RunTargetID: 2, Overall: cost(5)}}
	if o, _ := Best(tied); o != 0 {
		t.Errorf("a tie named %d best", o)
	}
}
