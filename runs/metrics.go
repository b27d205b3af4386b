package runs

import (
	"context"
	"strings"

	"tribunal/store"
)

// summaryNow is the run's summary for its current item counts (stored, or computed).
func summaryNow(ctx context.Context, st *store.Store, run *store.Run) (*Summary, error) {
	counts, err := st.RunProgress(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	return summaryFor(ctx, st, run, counts)
}

// summaryFor is the run's summary for the item counts given (stored, or computed).
func summaryFor(ctx context.Context, st *store.Store, run *store.Run, counts store.Progress) (*Summary, error) {
	grades, err := st.GradeStamp(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	prog := progressOf(counts)
	sum, _, err := summaryOf(ctx, st, run, prog, summaryStamp(run, prog), &grades)
	return sum, err
}

// NormalizedMetricsOf are MetricsOf with every judge score mapped to 0–1 by
// the judges' scale, plus "overall" (the mean item overall, 0–1): what KPI
// formulas and alerts read, so runs judged on 1–5 and on 1–10 compare.
func NormalizedMetricsOf(run *store.Run, sum *Summary) *store.RunMetrics {
	m := MetricsOf(run, sum)
	if len(run.Judges) > 0 {
		lo, hi := float64(run.Judges[0].ScaleMin), float64(run.Judges[0].ScaleMax)
		judged := map[string]bool{"score": true}
		for _, mm := range sum.Breakdown.Metrics {
			if strings.HasPrefix(mm.Source, "judge:") {
				judged[mm.Metric] = true
			}
		}
		norm := func(vals map[string]float64) {
			for name := range judged {
				if v, ok := vals[name]; ok && hi > lo {
					vals[name] = (v - lo) / (hi - lo)
				}
			}
		}
		norm(m.Overall)
		for _, vals := range m.PerModel {
			norm(vals)
		}
	}
	label := map[int64]string{}
	for _, t := range run.Targets {
		label[t.ID] = t.Label()
	}
	// The run's overall is the mean over every (model, task), as each model's is over its tasks.
	var total, tasks float64
	for _, ms := range sum.Models {
		if ms.OverallCI == nil {
			continue
		}
		total += ms.OverallCI.Mean / 100 * float64(ms.OverallCI.N)
		tasks += float64(ms.OverallCI.N)
		if vals := m.PerModel[label[ms.TargetID]]; vals != nil {
			vals["overall"] = ms.OverallCI.Mean / 100
		}
	}
	if tasks > 0 {
		m.Overall["overall"] = total / tasks
	}
	return m
}

// MetricsOf are a run's metric values by the names gates use: score (mean
// judge score, on the judges' scale), each judge metric by name (mean over
// the panel), check_<type>, pass_rate, latency_ms, tokens_per_s, cost_usd
// (models and judges) and error_rate (failed items / items). Metrics with no
// data are absent. They come from the run's summary: no scan of their own.
func MetricsOf(run *store.Run, sum *Summary) *store.RunMetrics {
	out := &store.RunMetrics{Overall: statsMetrics(sum.Overall), PerModel: map[string]map[string]float64{}}
	label := map[int64]string{}
	for _, t := range run.Targets {
		label[t.ID] = t.Label()
	}
	for _, pm := range sum.PerModel {
		out.PerModel[label[pm.TargetID]] = statsMetrics(pm.Stats)
	}
	// Judge metrics average over the panel and the targets, weighted by how many scores each holds.
	type acc struct{ sum, n float64 }
	overall := map[string]*acc{}
	perModel := map[int64]map[string]*acc{}
	for _, m := range sum.Breakdown.Metrics {
		if m.Metric == "score" || m.Source == "measure" {
			continue // the item score is the panel's mean already; measured values are in the stats
		}
		if perModel[m.RunTargetID] == nil {
			perModel[m.RunTargetID] = map[string]*acc{}
		}
		for _, a := range []map[string]*acc{overall, perModel[m.RunTargetID]} {
			if a[m.Metric] == nil {
				a[m.Metric] = &acc{}
			}
			a[m.Metric].sum += m.Mean * float64(m.N)
			a[m.Metric].n += float64(m.N)
		}
	}
	for name, a := range overall {
		out.Overall[name] = a.sum / a.n
	}
	for id, metrics := range perModel {
		for name, a := range metrics {
			out.PerModel[label[id]][name] = a.sum / a.n
		}
	}
	return out
}

func statsMetrics(st store.Stats) map[string]float64 {
	out := map[string]float64{}
	set := func(name string, p *float64) {
		if p != nil {
			out[name] = *p
		}
	}
	set("score", st.AvgScore)
	set("pass_rate", st.PassRate)
	set("latency_ms", st.AvgTimeMs)
	set("tokens_per_s", st.AvgTPS)
	set("cost_usd", st.TotalCostUSD())
	if st.Items > 0 {
		out["error_rate"] = float64(st.Failed) / float64(st.Items)
	}
	return out
}
