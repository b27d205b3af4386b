package store

import (
	"context"
	"fmt"
	"strings"
)

// MetricMean is the mean of one metric from one source (a judge or a check)
// over one target's items.
type MetricMean struct {
	RunTargetID int64   `json:"target_id"`
	Source      string  `json:"source"`
	Metric      string  `json:"metric"`
	Mean        float64 `json:"mean"`
	N           int64   `json:"n"`
}

// GroupStats are a target's results within one use case and category.
type GroupStats struct {
	RunTargetID int64    `json:"target_id"`
	UseCase     string   `json:"usecase" gorm:"column:usecase"`
	Category    string   `json:"category"`
	Items       int64    `json:"items"`
	Scored      int64    `json:"scored"`
	Passed      int64    `json:"passed"`
	AvgScore    *float64 `json:"avg_score"`
}

// Breakdown is a run's scores split by metric and source, and by use case
// and category, per target.
type Breakdown struct {
	Metrics []MetricMean `json:"metrics"`
	Groups  []GroupStats `json:"groups"`
}

// RunBreakdown aggregates a run's scores per (target, source, metric) and
// its items per (target, use case, category).
func (s *Store) RunBreakdown(ctx context.Context, runID int64) (*Breakdown, error) {
	judges, err := s.RunJudges(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := &Breakdown{Metrics: []MetricMean{}, Groups: []GroupStats{}}
	err = s.conn(ctx).Table("scores sc").
		Select("i.run_target_id, sc.source, sc.metric, AVG(sc.score) AS mean, COUNT(*) AS n").
		Joins("JOIN items i ON i.id = sc.item_id").
		Where("sc.run_id = ?", runID).
		Group("i.run_target_id, sc.source, sc.metric").
		Order("i.run_target_id, sc.source, sc.metric").Scan(&out.Metrics).Error
	if err != nil {
		return nil, fmt.Errorf("store: run breakdown by metric: %w", err)
	}
	err = s.conn(ctx).Table("items i").
		Select(`i.run_target_id, rt.usecase, rt.category, COUNT(*) AS items, COUNT(i.score) AS scored,
			SUM(CASE WHEN i.score >= ? THEN 1 ELSE 0 END) AS passed, AVG(i.score) AS avg_score`, PassThreshold(judges)).
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Where("i.run_id = ?", runID).
		Group("i.run_target_id, rt.usecase, rt.category").
		Order("rt.usecase, rt.category, i.run_target_id").Scan(&out.Groups).Error
	if err != nil {
		return nil, fmt.Errorf("store: run breakdown by category: %w", err)
	}
	return out, nil
}

// ModelScore is one target's weighted overall score and what it cost.
type ModelScore struct {
	RunTargetID int64 `json:"target_id"`
	// Overall is the weighted mean of the target's metric means, each scaled
	// to 0–100 (judge metrics by the judges' scale, checks from 0–1).
	Overall *float64 `json:"overall"`
	// PerDollar is Overall per USD spent on the target's calls; nil when the price is unknown.
	PerDollar *float64 `json:"score_per_dollar"`
}

// OverallScores weighs each target's metric means into one 0–100 score.
// Each (judge metric or check) counts with its weight from weights, 1 when
// missing; judges' "score" counts only for styles with that single metric,
// since otherwise it is already the mean of the others.
func OverallScores(b *Breakdown, judges []RunJudge, weights map[string]float64, perModel []ModelStats) []ModelScore {
	scale := map[string][2]float64{}
	multi := map[string]bool{}
	for _, j := range judges {
		scale[j.Source()] = [2]float64{float64(j.ScaleMin), float64(j.ScaleMax)}
		multi[j.Source()] = len(j.Metrics) > 1
	}
	type acc struct{ sum, w float64 }
	per := map[int64]*acc{}
	for _, m := range b.Metrics {
		if m.Metric == "score" && multi[m.Source] {
			continue
		}
		norm := m.Mean
		if sc, ok := scale[m.Source]; ok {
			norm = (m.Mean - sc[0]) / (sc[1] - sc[0])
		} else if !strings.HasPrefix(m.Source, "check:") {
			continue
		}
		w := 1.0
		if v, ok := weights[m.Metric]; ok {
			w = v
		}
		a := per[m.RunTargetID]
		if a == nil {
			a = &acc{}
			per[m.RunTargetID] = a
		}
		a.sum += w * norm * 100
		a.w += w
	}
	out := make([]ModelScore, 0, len(perModel))
	for _, pm := range perModel {
		ms := ModelScore{RunTargetID: pm.TargetID}
		if a := per[pm.TargetID]; a != nil && a.w > 0 {
			v := a.sum / a.w
			ms.Overall = &v
			if pm.CostUSD != nil && *pm.CostUSD > 0 && pm.Items > 0 {
				perItem := *pm.CostUSD / float64(pm.Items)
				pd := v / perItem
				ms.PerDollar = &pd
			}
		}
		out = append(out, ms)
	}
	return out
}

// Best names the best overall target and the best value (score per
// dollar); 0 when there is none or the top is a tie.
func Best(scores []ModelScore) (overall, value int64) {
	pick := func(get func(ModelScore) *float64) int64 {
		var best int64
		var top float64
		tie := false
		for _, s := range scores {
			v := get(s)
			switch {
			case v == nil:
			case best == 0 || *v > top:
				best, top, tie = s.RunTargetID, *v, false
			case *v == top:
				tie = true
			}
		}
		if tie {
			return 0
		}
		return best
	}
	return pick(func(s ModelScore) *float64 { return s.Overall }), pick(func(s ModelScore) *float64 { return s.PerDollar })
}

// RunMetrics are a run's metric values by the names KPI formulas and gates
// use: score (mean judge score), each judge metric by name (mean over the
// panel), check_<type>, pass_rate, latency_ms, tokens_per_s, cost_usd
// (models and judges) and error_rate (failed items / items). Metrics with
// no data are absent.
type RunMetrics struct {
	Overall map[string]float64 `json:"overall"`
	// PerModel is keyed by the target's label, "provider / model".
	PerModel map[string]map[string]float64 `json:"per_model"`
}

// RunMetricValues computes a run's RunMetrics from its summary and breakdown.
func (s *Store) RunMetricValues(ctx context.Context, runID int64) (*RunMetrics, error) {
	sum, err := s.RunSummary(ctx, runID, 0)
	if err != nil {
		return nil, err
	}
	b, err := s.RunBreakdown(ctx, runID)
	if err != nil {
		return nil, err
	}
	targets, err := s.RunTargets(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := &RunMetrics{Overall: statsMetrics(sum.Overall), PerModel: map[string]map[string]float64{}}
	label := map[int64]string{}
	for _, t := range targets {
		label[t.ID] = t.Label()
	}
	for _, pm := range sum.PerModel {
		out.PerModel[label[pm.TargetID]] = statsMetrics(pm.Stats)
	}
	// Judge metrics average over the panel and the targets, weighted by how many scores each holds.
	type acc struct{ sum, n float64 }
	overall := map[string]*acc{}
	perModel := map[int64]map[string]*acc{}
	for _, m := range b.Metrics {
		if m.Metric == "score" || m.Source == "measure" {
			continue // the item score is the panel's mean already; measured values are in the stats
		}
		for _, a := range []map[string]*acc{overall, ensure(perModel, m.RunTargetID)} {
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
	return out, nil
}

func ensure[K comparable, V any](m map[K]map[string]*V, k K) map[string]*V {
	if m[k] == nil {
		m[k] = map[string]*V{}
	}
	return m[k]
}

func statsMetrics(st Stats) map[string]float64 {
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
	if st.CostUSD != nil || st.JudgeCostUSD != nil {
		var c float64
		if st.CostUSD != nil {
			c += *st.CostUSD
		}
		if st.JudgeCostUSD != nil {
			c += *st.JudgeCostUSD
		}
		out["cost_usd"] = c
	}
	if st.Items > 0 {
		out["error_rate"] = float64(st.Failed) / float64(st.Items)
	}
	return out
}
