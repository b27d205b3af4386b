package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// runSummary is a finished run's summary as package runs computed it.
type runSummary struct {
	RunID     int64 `gorm:"primaryKey;autoIncrement:false"`
	Stamp     string
	Body      string
	CreatedAt time.Time
}

// SummarySnapshot returns the stored summary of a run and the stamp it was
// computed for; nil when none is stored. The caller decides what of it
// still holds.
func (s *Store) SummarySnapshot(ctx context.Context, runID int64) (stamp string, body []byte, err error) {
	var row runSummary
	err = s.conn(ctx).Where("run_id = ?", runID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("store: summary snapshot of run %d: %w", runID, err)
	}
	return row.Stamp, []byte(row.Body), nil
}

// SaveSummarySnapshot stores a run's summary for stamp, replacing any older one.
func (s *Store) SaveSummarySnapshot(ctx context.Context, runID int64, stamp string, body []byte) error {
	err := s.conn(ctx).Exec(`INSERT INTO run_summaries (run_id, stamp, body, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET stamp = excluded.stamp, body = excluded.body, created_at = excluded.created_at`,
		runID, stamp, string(body), s.now()).Error
	if err != nil {
		return fmt.Errorf("store: save summary snapshot of run %d: %w", runID, err)
	}
	return nil
}

func (runSummary) TableName() string { return "run_summaries" }
