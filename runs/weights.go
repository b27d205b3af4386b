package runs

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"tribunal/rubric"
	"tribunal/store"
)

// ItemWeights defines an item's overall: the weighted mean of the item's
// normalised scores, each (s − min) / (max − min) on its own scale (checks
// score 0–1 already). A judge metric weighs its style weight (the run's
// `weights` override it by metric name), divided among the panel's judges
// so the panel counts as one; a check weighs 1 (or its `weights` entry).
// `source_weights` then scale whole sources: "judge" and "check:<type>".
// A single-metric style counts its verdict's "score", which is that metric;
// a style of several counts each metric and not "score", their mean.
// Measured values (latency, cost) never count. Checks without a row of
// their own match store.AnyCheck.
func ItemWeights(run *store.Run) []store.SourceWeight {
	// A metric's weight is shared by the judges of the panel that score it,
	// so the panel counts as one judge per metric.
	type metric struct {
		name, as string // as: the score row's metric ("score" for a single-metric style)
		weight   float64
	}
	perJudge := make([][]metric, len(run.Judges))
	judgesOf := map[string]int{}
	for i, j := range run.Judges {
		for _, m := range j.Metrics {
			as := m.Name
			if len(j.Metrics) == 1 {
				as = rubric.Overall // the verdict's score is its only metric
			}
			perJudge[i] = append(perJudge[i], metric{name: m.Name, as: as, weight: cmp.Or(m.Weight, 1)})
		}
		if len(j.Metrics) == 0 {
			perJudge[i] = []metric{{name: rubric.Overall, as: rubric.Overall, weight: 1}}
		}
		for _, m := range perJudge[i] {
			judgesOf[m.name]++
		}
	}
	var out []store.SourceWeight
	for i, j := range run.Judges {
		if j.ScaleMax <= j.ScaleMin {
			continue
		}
		for _, m := range perJudge[i] {
			if !run.Options.MetricOn(m.name) {
				continue
			}
			w := m.weight
			if v, ok := run.Options.Weights[m.name]; ok {
				w = v
			}
			w *= sourceWeight(run.Options, "judge") / float64(judgesOf[m.name])
			out = append(out, store.SourceWeight{Source: j.Source(), Metric: m.as, Lo: float64(j.ScaleMin), Hi: float64(j.ScaleMax), Weight: w})
		}
	}
	// Checks named in weights or source_weights get their own row; the rest weigh 1.
	checks := map[string]bool{}
	for name := range run.Options.Weights {
		if typ, ok := strings.CutPrefix(name, "check_"); ok {
			checks[typ] = true
		}
	}
	for source := range run.Options.SourceWeights {
		if typ, ok := strings.CutPrefix(source, "check:"); ok {
			checks[typ] = true
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(checks)) {
		w := 1.0
		if v, ok := run.Options.Weights["check_"+typ]; ok {
			w = v
		}
		out = append(out, store.SourceWeight{Source: "check:" + typ, Metric: "check_" + typ, Lo: 0, Hi: 1,
			Weight: w * sourceWeight(run.Options, "check:"+typ)})
	}
	return append(out, store.SourceWeight{Source: store.AnyCheck, Metric: "", Lo: 0, Hi: 1, Weight: 1})
}

// weightOf is the weight a (source, metric) of the run's scores has in an
// item's overall; 0 when it does not count.
func weightOf(weights []store.SourceWeight, source, metric string) float64 {
	w, _ := store.WeightFor(weights, source, metric)
	return w.Weight
}

func sourceWeight(o store.RunOptions, source string) float64 {
	if w, ok := o.SourceWeights[source]; ok {
		return w
	}
	return 1
}
