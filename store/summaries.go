package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// Snapshots are what package runs computed of a finished run and stored,
// so that a first view reads them instead of scanning the run: one row per
// run in each of these tables, JSON with the stamp it was computed for.
const (
	summariesTable = "run_summaries" // the summary
	analysesTable  = "run_analyses"  // the statistics
)

// snapshotTables lists every snapshot table, for what drops a run's snapshots.
var snapshotTables = []string{summariesTable, analysesTable}

// snapshotRow is one stored snapshot.
type snapshotRow struct {
	Stamp string
	Body  string
}

// SummarySnapshot returns the stored summary of a run and the stamp it was
// computed for; nil when none is stored. The caller decides what of it
// still holds.
func (s *Store) SummarySnapshot(ctx context.Context, runID int64) (stamp string, body []byte, err error) {
	return s.snapshot(ctx, summariesTable, runID)
}

// SaveSummarySnapshot stores a run's summary for stamp, replacing any older one.
func (s *Store) SaveSummarySnapshot(ctx context.Context, runID int64, stamp string, body []byte) error {
	return s.saveSnapshot(ctx, summariesTable, runID, stamp, body)
}

// AnalysisSnapshot returns the statistics stored for a run and stamp; nil
// when none are, or only for another stamp (whose megabyte is not read).
func (s *Store) AnalysisSnapshot(ctx context.Context, runID int64, stamp string) ([]byte, error) {
	var body []string
	err := s.conn(ctx).Table(analysesTable).Where("run_id = ? AND stamp = ?", runID, stamp).Pluck("body", &body).Error
	if err != nil {
		return nil, fmt.Errorf("store: %s of run %d: %w", analysesTable, runID, err)
	}
	if len(body) == 0 {
		return nil, nil
	}
	return []byte(body[0]), nil
}

// SaveAnalysisSnapshot stores a run's statistics for stamp, replacing any older ones.
func (s *Store) SaveAnalysisSnapshot(ctx context.Context, runID int64, stamp string, body []byte) error {
	return s.saveSnapshot(ctx, analysesTable, runID, stamp, body)
}

func (s *Store) snapshot(ctx context.Context, table string, runID int64) (string, []byte, error) {
	var row snapshotRow
	err := s.conn(ctx).Table(table).Select("stamp, body").Where("run_id = ?", runID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("store: %s of run %d: %w", table, runID, err)
	}
	return row.Stamp, []byte(row.Body), nil
}

func (s *Store) saveSnapshot(ctx context.Context, table string, runID int64, stamp string, body []byte) error {
	err := s.conn(ctx).Exec(`INSERT INTO `+table+` (run_id, stamp, body, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET stamp = excluded.stamp, body = excluded.body, created_at = excluded.created_at`,
		runID, stamp, string(body), s.now()).Error
	if err != nil {
		return fmt.Errorf("store: save %s of run %d: %w", table, runID, err)
	}
	return nil
}

// dropSnapshots deletes a run's stored snapshots: its items are about to
// change in a way their stamps do not see.
func (s *Store) dropSnapshots(ctx context.Context, runID int64) error {
	for _, table := range snapshotTables {
		if err := s.conn(ctx).Exec(`DELETE FROM `+table+` WHERE run_id = ?`, runID).Error; err != nil {
			return fmt.Errorf("store: drop %s of run %d: %w", table, runID, err)
		}
	}
	return nil
}

// SnapshotsStored says whether a run's summary and its statistics are
// stored, whatever their stamps: `tribunal bench` waits for both after the
// engine ends its run.
func (s *Store) SnapshotsStored(ctx context.Context, runID int64) (summary, analysis bool, err error) {
	var n [2]int64
	for i, table := range []string{summariesTable, analysesTable} {
		if err := s.conn(ctx).Table(table).Where("run_id = ?", runID).Count(&n[i]).Error; err != nil {
			return false, false, fmt.Errorf("store: %s of run %d: %w", table, runID, err)
		}
	}
	return n[0] > 0, n[1] > 0, nil
}
