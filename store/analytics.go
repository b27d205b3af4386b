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

// measureColumns are the item columns a target's measures aggregate.
var measureColumns = []string{"time_ms", "completion_tokens", "prompt_tokens"}

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
