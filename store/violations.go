package store

import (
	"context"
	"fmt"
)

// ViolationCount is how many violations the judges listed for one target's
// items in one category, and on how many of its items.
type ViolationCount struct {
	RunTargetID int64
	Category    string
	Violations  int64
	Items       int64
}

// RunViolationCounts counts a run's violations per target and category,
// in one query.
func (s *Store) RunViolationCounts(ctx context.Context, runID int64) ([]ViolationCount, error) {
	var out []ViolationCount
	err := s.conn(ctx).Table("violations v").
		Select("i.run_target_id, v.category, COUNT(*) AS violations, COUNT(DISTINCT v.item_id) AS items").
		Joins("JOIN items i ON i.id = v.item_id").
		Where("v.run_id = ?", runID).
		Group("i.run_target_id, v.category").
		Order("i.run_target_id, v.category").
		Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: count violations: %w", err)
	}
	return out, nil
}

// ItemViolations lists the violations the judges listed for an item, by
// judge and in the order each judge listed them.
func (s *Store) ItemViolations(ctx context.Context, itemID int64) ([]Violation, error) {
	out := []Violation{}
	if err := s.conn(ctx).Where("item_id = ?", itemID).Order("run_judge_id, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: item violations: %w", err)
	}
	return out, nil
}

// ViolationView is a violation with the name of the judge that listed it.
type ViolationView struct {
	ItemID   int64  `json:"-"`
	Judge    string `json:"judge"`
	Category string `json:"category"`
	Detail   string `json:"detail"`
}
