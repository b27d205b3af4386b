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

// measureColumns are the item columns RunMeasures aggregates.
var measureColumns = []string{"time_ms", "completion_tokens", "prompt_tokens"}

// RunMeasures aggregates, per target, the time and token counts of a run's
// items that have them (answered items), without holding any item in
// memory: one grouped scan for the sums, then, per target and measure, the
// middle one or two values by ORDER BY … LIMIT … OFFSET n/2 (SQLite has no
// percentile function; a bounded sort is cheaper than ranking every row
// with a window). The median is the mean of the middle two when n is even.
func (s *Store) RunMeasures(ctx context.Context, runID int64) ([]TargetMeasures, error) {
	sel := "i.run_target_id"
	for _, col := range measureColumns {
		// Squares in floating point: a sum of squared integers could overflow.
		sel += fmt.Sprintf(`, COUNT(i.%[1]s), COALESCE(SUM(i.%[1]s), 0), COALESCE(SUM(CAST(i.%[1]s AS DOUBLE PRECISION) * i.%[1]s), 0),
			COALESCE(MIN(i.%[1]s), 0), COALESCE(MAX(i.%[1]s), 0)`, col)
	}
	rows, err := s.conn(ctx).Raw("SELECT "+sel+" FROM items i WHERE i.run_id = ? GROUP BY i.run_target_id ORDER BY i.run_target_id", runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: run measures: %w", err)
	}
	defer rows.Close()
	out := []TargetMeasures{}
	for rows.Next() {
		var m TargetMeasures
		dest := []any{&m.RunTargetID}
		for _, x := range m.moments() {
			dest = append(dest, &x.N, &x.Sum, &x.SumSq, &x.Min, &x.Max)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: run measures: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run measures: %w", err)
	}
	rows.Close()
	for i := range out {
		for j, x := range out[i].moments() {
			if x.N == 0 {
				continue
			}
			// items.run_target_id belongs to one run: its index finds the target's items.
			q := fmt.Sprintf(`SELECT AVG(x) FROM (SELECT i.%[1]s AS x FROM items i WHERE i.run_target_id = ? AND i.%[1]s IS NOT NULL
				ORDER BY i.%[1]s LIMIT ? OFFSET ?) m`, measureColumns[j])
			if err := s.conn(ctx).Raw(q, out[i].RunTargetID, 2-x.N%2, (x.N-1)/2).Row().Scan(&x.Median); err != nil {
				return nil, fmt.Errorf("store: run measures: median of %s: %w", measureColumns[j], err)
			}
		}
	}
	return out, nil
}

func (m *TargetMeasures) moments() []*Moments {
	return []*Moments{&m.TimeMs, &m.CompletionTokens, &m.PromptTokens}
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
