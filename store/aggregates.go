package store

import (
	"context"
	"fmt"
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
	// CostUSD is what the target's answers cost (nil while no price is
	// known); JudgeCostUSD what judging them cost.
	CostUSD      *float64 `json:"cost_usd"`
	JudgeCostUSD float64  `json:"judge_cost_usd"`
}

// Breakdown is a run's scores split by metric and source, and by use case
// and category, per target.
type Breakdown struct {
	Metrics []MetricMean `json:"metrics"`
	Groups  []GroupStats `json:"groups"`
}

// RunMetricMeans aggregates a run's scores per (target, source, metric):
// the breakdown's metrics.
func (s *Store) RunMetricMeans(ctx context.Context, runID int64) ([]MetricMean, error) {
	out := []MetricMean{}
	err := s.conn(ctx).Table("scores sc").
		Select("sc.run_target_id, sc.source, sc.metric, AVG(sc.score) AS mean, COUNT(*) AS n").
		Where("sc.run_id = ?", runID).
		Group("sc.run_target_id, sc.source, sc.metric").
		Order("sc.run_target_id, sc.source, sc.metric").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: run breakdown by metric: %w", err)
	}
	return out, nil
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
