package store

import (
	"context"
	"fmt"
)

// AppendLog adds entries to a run's live log and fills in their ids.
func (s *Store) AppendLog(ctx context.Context, entries ...*RunLog) error {
	if len(entries) == 0 {
		return nil
	}
	now := s.now()
	for _, e := range entries {
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		if e.Level == "" {
			e.Level = LogInfo
		}
		e.Message, e.Detail = storable(e.Message), storable(e.Detail)
	}
	if err := s.conn(ctx).Create(entries).Error; err != nil {
		return fmt.Errorf("store: append run log: %w", err)
	}
	return nil
}

// RunLogs returns up to limit log entries of a run with id > afterID, oldest first.
func (s *Store) RunLogs(ctx context.Context, runID, afterID int64, limit int) ([]RunLog, error) {
	var out []RunLog
	err := s.conn(ctx).Where("run_id = ? AND id > ?", runID, afterID).Order("id").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: run logs: %w", err)
	}
	return out, nil
}

// LastRunLogs returns the newest limit entries of a run, oldest first.
func (s *Store) LastRunLogs(ctx context.Context, runID int64, limit int) ([]RunLog, error) {
	var out []RunLog
	err := s.conn(ctx).Where("run_id = ?", runID).Order("id DESC").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: run logs: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// RunLogsBetween returns up to limit entries of a run with after < id <= upTo, oldest first.
func (s *Store) RunLogsBetween(ctx context.Context, runID, after, upTo int64, limit int) ([]RunLog, error) {
	var out []RunLog
	err := s.conn(ctx).Where("run_id = ? AND id > ? AND id <= ?", runID, after, upTo).Order("id").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: run logs: %w", err)
	}
	return out, nil
}
