package store

import (
	"context"
	"fmt"
)

// Moments are the raw aggregates of one measure over one target's items
// that have it: what package runs turns into mean, median, std, min and max.
type Moments struct {
	N      int64
	Sum    float64
	SumSq  float64 // sum of squares, for the spread
	Min    float64
	Max    float64
	Median float64
}

// TargetMeasures are one target's Moments of its answers' time and tokens.
type TargetMeasures struct {
	RunTargetID      int64
	TimeMs           Moments
	CompletionTokens Moments
	PromptTokens     Moments
}

// measureColumns are the item columns RunMeasures aggregates, each under
// the prefix its Moments are scanned from.
var measureColumns = [][2]string{{"time_ms", "t"}, {"completion_tokens", "c"}, {"prompt_tokens", "p"}}

// RunMeasures aggregates, per target, the time and token counts of a run's
// items that have them (answered items) in one scan, the database ranking
// each measure so that no item is held in memory: the median is the mean of
// the middle two values (the middle one when n is odd). ROW_NUMBER runs in
// a partition of its own for the items without the value, so they never
// take a rank among the measured ones.
func (s *Store) RunMeasures(ctx context.Context, runID int64) ([]TargetMeasures, error) {
	inner, outer := "i.run_target_id", "w.run_target_id"
	for _, c := range measureColumns {
		col, p := c[0], c[1]
		inner += fmt.Sprintf(`, i.%[1]s AS %[2]s,
			ROW_NUMBER() OVER (PARTITION BY i.run_target_id, i.%[1]s IS NULL ORDER BY i.%[1]s) AS %[2]s_rank,
			COUNT(i.%[1]s) OVER (PARTITION BY i.run_target_id) AS %[2]s_n`, col, p)
		// Squares in floating point: a sum of squared integers could overflow.
		outer += fmt.Sprintf(`, COUNT(w.%[1]s) AS %[1]s_n, COALESCE(SUM(w.%[1]s), 0) AS %[1]s_sum,
			COALESCE(SUM(CAST(w.%[1]s AS DOUBLE PRECISION) * w.%[1]s), 0) AS %[1]s_sum_sq,
			COALESCE(MIN(w.%[1]s), 0) AS %[1]s_min, COALESCE(MAX(w.%[1]s), 0) AS %[1]s_max,
			COALESCE(AVG(CASE WHEN w.%[1]s IS NOT NULL AND w.%[1]s_rank IN ((w.%[1]s_n + 1) / 2, (w.%[1]s_n + 2) / 2)
				THEN w.%[1]s END), 0) AS %[1]s_median`, p)
	}
	q := fmt.Sprintf(`SELECT %s FROM (SELECT %s FROM items i WHERE i.run_id = ?) w GROUP BY w.run_target_id ORDER BY w.run_target_id`,
		outer, inner)
	rows, err := s.conn(ctx).Raw(q, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: run measures: %w", err)
	}
	defer rows.Close()
	out := []TargetMeasures{}
	for rows.Next() {
		var m TargetMeasures
		dest := []any{&m.RunTargetID}
		for _, x := range []*Moments{&m.TimeMs, &m.CompletionTokens, &m.PromptTokens} {
			dest = append(dest, &x.N, &x.Sum, &x.SumSq, &x.Min, &x.Max, &x.Median)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: run measures: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run measures: %w", err)
	}
	return out, nil
}

// TargetGrades counts one target's human grades.
type TargetGrades struct {
	RunTargetID             int64
	Correct, Partial, Wrong int64
}

// RunGrades counts a run's human grades per target (targets without a
// grade are absent): a scan of the run's grades, not of its items.
func (s *Store) RunGrades(ctx context.Context, runID int64) ([]TargetGrades, error) {
	out := []TargetGrades{}
	err := s.conn(ctx).Table("grades g").
		Select(`i.run_target_id,
			SUM(CASE WHEN g.grade = ? THEN 1 ELSE 0 END) AS correct,
			SUM(CASE WHEN g.grade = ? THEN 1 ELSE 0 END) AS partial,
			SUM(CASE WHEN g.grade = ? THEN 1 ELSE 0 END) AS wrong`, GradeCorrect, GradePartial, GradeWrong).
		Joins("JOIN items i ON i.id = g.item_id").
		Where("g.run_id = ?", runID).
		Group("i.run_target_id").Order("i.run_target_id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: run grades: %w", err)
	}
	return out, nil
}
