package store

import (
	"context"
	"fmt"
)

// RunStatuses lists every run status, so a count can say 0 instead of omitting one.
var RunStatuses = []RunStatus{RunPending, RunRunning, RunPaused, RunFinished, RunFailed, RunCancelled}

// RunCounts counts runs by status; every status is present.
func (s *Store) RunCounts(ctx context.Context) (map[RunStatus]int64, error) {
	var rows []struct {
		Status RunStatus
		N      int64
	}
	if err := s.conn(ctx).Model(&Run{}).Select("status, COUNT(*) AS n").Group("status").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: count runs: %w", err)
	}
	out := make(map[RunStatus]int64, len(RunStatuses))
	for _, st := range RunStatuses {
		out[st] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// ActiveItemCounts counts the items of active runs by status: the work
// waiting and in flight. Finished runs' items never change and are left
// out, so this stays an index range (run_id, status) per active run however
// many items old runs hold. Every status is present.
func (s *Store) ActiveItemCounts(ctx context.Context) (map[ItemStatus]int64, error) {
	var rows []struct {
		Status ItemStatus
		N      int64
	}
	active := s.conn(ctx).Model(&Run{}).Select("id").Where("status IN ?", ActiveRunStatuses)
	if err := s.conn(ctx).Table("items").Select("status, COUNT(*) AS n").Where("run_id IN (?)", active).
		Group("status").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: count items of active runs: %w", err)
	}
	out := make(map[ItemStatus]int64, len(ItemStatuses))
	for _, st := range ItemStatuses {
		out[st] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
