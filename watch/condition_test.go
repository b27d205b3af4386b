package watch

import (
	"strings"
	"testing"

	"tribunal/store"
)

func TestCheckConditions(t *testing.T) {
	base := []float64{8, 8, 8, 8} // mean 8, sd 0
	spread := []float64{7, 8, 9}  // mean 8, sd 1
	tests := []struct {
		name      string
		cond      string
		value, th float64
		baseline  []float64
		fired     bool
		skipped   string
		detail    string
	}{
		{"less: below", "LESS_THAN", 0.7, 0.8, nil, true, "", "0.7 < 0.8"},
		{"less: equal", "LESS_THAN", 0.8, 0.8, nil, false, "", ""},
		{"greater: above", "GREATER_THAN", 1200, 1000, nil, true, "", "1200 > 1000"},
		{"greater: below", "GREATER_THAN", 900, 1000, nil, false, "", ""},
		{"equals: float sum", "EQUALS", 0.1 + 0.2, 0.3, nil, true, "", "0.3 = 0.3"},
		{"equals: different", "EQUALS", 1, 0, nil, false, "", ""},
		{"not equals: different", "NOT_EQUALS", 2, 0, nil, true, "", "2 ≠ 0"},
		{"not equals: same", "NOT_EQUALS", 0, 0, nil, false, "", ""},
		{"drop: 25% ≥ 10%", "PERCENTAGE_DROP", 6, 10, base, true, "", "25% below the baseline 8 (mean of the last 4 run(s))"},
		{"drop: exactly the threshold", "PERCENTAGE_DROP", 7.2, 10, base, true, "", "10% below"},
		{"drop: 5% < 10%", "PERCENTAGE_DROP", 7.6, 10, base, false, "", "a change of -5%"},
		{"drop: a rise is no drop", "PERCENTAGE_DROP", 9, 0, base, false, "", ""},
		{"drop: negative baseline", "PERCENTAGE_DROP", -12, 10, []float64{-10}, true, "", "20% below"},
		{"drop: no baseline", "PERCENTAGE_DROP", 1, 10, nil, false, "no earlier run", ""},
		{"drop: zero baseline", "PERCENTAGE_DROP", 1, 10, []float64{0, 0}, false, "baseline is 0", ""},
		{"rise: 50% ≥ 20%", "PERCENTAGE_RISE", 12, 20, base, true, "", "50% above the baseline 8"},
		{"rise: 10% < 20%", "PERCENTAGE_RISE", 8.8, 20, base, false, "", ""},
		{"rise: a drop is no rise", "PERCENTAGE_RISE", 4, 0, base, false, "", ""},
		{"anomaly: outside 8 ± 2·1", "ANOMALY_DETECTED", 10.5, 2, spread, true, "", "outside the normal range 8 ± 2·1 = [6, 10]"},
		{"anomaly: low side", "ANOMALY_DETECTED", 4, 3, spread, true, "", "[5, 11]"},
		{"anomaly: inside", "ANOMALY_DETECTED", 9.5, 2, spread, false, "", "within 8 ± 2·1"},
		{"anomaly: flat history, any change", "ANOMALY_DETECTED", 8.01, 3, base, true, "", ""},
		{"anomaly: flat history, same value", "ANOMALY_DETECTED", 8, 3, base, false, "", ""},
		{"anomaly: one run is not enough", "ANOMALY_DETECTED", 100, 3, []float64{8}, false, "at least 2", ""},
		{"unknown", "SOMETIMES", 1, 1, nil, false, "unknown condition", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Check(tt.cond, tt.value, tt.th, tt.baseline)
			if v.Fired != tt.fired || !strings.Contains(v.Skipped, tt.skipped) || (tt.skipped == "") != (v.Skipped == "") ||
				!strings.Contains(v.Detail, tt.detail) {
				t.Errorf("Check(%s, %v, %v, %v) = %+v", tt.cond, tt.value, tt.th, tt.baseline, v)
			}
			if needsBaseline(tt.cond) && len(tt.baseline) > 0 && (v.Baseline == nil || v.N != len(tt.baseline)) {
				t.Errorf("baseline not reported: %+v", v)
			}
		})
	}
	// Every condition the API accepts is understood.
	for _, c := range store.AlertConditions {
		if v := Check(c, 1, 1, []float64{1, 2}); strings.Contains(v.Skipped, "unknown") {
			t.Errorf("condition %s is not implemented", c)
		}
	}
}

func TestComputeKPIValues(t *testing.T) {
	metrics := []store.RunMetric{
		{Metric: "accuracy", Value: 0.8}, {Metric: "coherence", Value: 0.6}, {Metric: "pass_rate", Value: 0.5},
		{Model: "p / a", ModelName: "a", Metric: "accuracy", Value: 0.9}, {Model: "p / a", ModelName: "a", Metric: "coherence", Value: 0.7},
		{Model: "p / b", ModelName: "b", Metric: "accuracy", Value: 0.7},
	}
	kpis := []store.KPI{
		{ID: 1, Formula: "WEIGHTED_SUM(accuracy:0.5, coherence:0.5)", Revision: 2},
		{ID: 2, Formula: "IF accuracy > 0.75 THEN 1 ELSE 0"},
		{ID: 3, Formula: "accuracy / (coherence - coherence)"},
	}
	got := ComputeKPIValues(kpis, metrics)
	type key struct {
		id    int64
		model string
	}
	vals := map[key]store.KPIValue{}
	for _, v := range got {
		vals[key{v.KPIID, v.Model}] = v
	}
	want := func(id int64, model string, value float64, errText string) {
		t.Helper()
		v, ok := vals[key{id, model}]
		switch {
		case !ok:
			t.Errorf("no value for KPI %d model %q", id, model)
		case errText != "":
			if v.Value != nil || !strings.Contains(v.Error, errText) {
				t.Errorf("KPI %d model %q: %v %q, want error %q", id, model, v.Value, v.Error, errText)
			}
		case v.Value == nil || !near(*v.Value, value):
			t.Errorf("KPI %d model %q: %v %q, want %v", id, model, v.Value, v.Error, value)
		}
	}
	want(1, "", 0.7, "")
	want(1, "p / a", 0.8, "")
	want(1, "p / b", 0, `missing metric "coherence"`)
	want(2, "", 1, "")
	want(2, "p / b", 0, "")
	want(3, "", 0, "division by zero")
	if v := vals[key{1, "p / a"}]; v.ModelName != "a" || v.KPIRevision != 2 {
		t.Errorf("model name or revision not kept: %+v", v)
	}
	if len(got) != 9 {
		t.Errorf("%d values, want 3 KPIs × (run + 2 models)", len(got))
	}
}
