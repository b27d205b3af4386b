package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

func (s *Store) runQuery(ctx context.Context) *gorm.DB {
	return s.conn(ctx).
		Preload("Targets", func(db *gorm.DB) *gorm.DB { return db.Order("position") }).
		Preload("Judges", func(db *gorm.DB) *gorm.DB { return db.Order("position") }).
		Preload("Collections", func(db *gorm.DB) *gorm.DB { return db.Order("id") })
}

// Run returns one run with its targets, judges and collections.
func (s *Store) Run(ctx context.Context, id int64) (*Run, error) {
	var r Run
	if err := s.runQuery(ctx).Take(&r, id).Error; err != nil {
		return nil, fmt.Errorf("store: run: %w", notFound(err, "run", id))
	}
	return &r, nil
}

// RunEnd returns a run's status, error and finish time only: one cheap
// read for whoever waits for the run to end.
func (s *Store) RunEnd(ctx context.Context, id int64) (*Run, error) {
	var r Run
	if err := s.conn(ctx).Select("id", "status", "error", "finished_at").Take(&r, id).Error; err != nil {
		return nil, fmt.Errorf("store: run end: %w", notFound(err, "run", id))
	}
	return &r, nil
}

// RunFilter narrows and pages the run list.
type RunFilter struct {
	Status       RunStatus
	Tag          string     // runs carrying this tag
	CollectionID int64      // runs that drew tasks from this collection
	AgentID      int64      // runs that benchmarked this agent (any version)
	From         *time.Time // created at or after
	To           *time.Time // created before
	Page         int
	PerPage      int
}

// where applies the filter's conditions; table names the runs table
// as the query spells it, for the tag condition.
func (f RunFilter) where(q *gorm.DB, table string) *gorm.DB {
	if f.Status != "" {
		q = q.Where("runs.status = ?", f.Status)
	}
	if f.CollectionID != 0 {
		q = q.Where("EXISTS (SELECT 1 FROM run_collections rc WHERE rc.run_id = runs.id AND rc.collection_id = ?)", f.CollectionID)
	}
	if f.AgentID != 0 {
		q = q.Where("EXISTS (SELECT 1 FROM run_targets rt WHERE rt.run_id = runs.id AND rt.agent_id = ?)", f.AgentID)
	}
	if f.From != nil {
		q = q.Where("runs.created_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("runs.created_at < ?", f.To.UTC())
	}
	return withTag(q, table, f.Tag)
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) (Page[Run], error) {
	page, perPage := normPage(f.Page, f.PerPage, 25)
	out := Page[Run]{Page: page, PerPage: perPage, Items: []Run{}}
	if err := f.where(s.conn(ctx).Model(&Run{}), "runs.tags").Count(&out.Total).Error; err != nil {
		return out, fmt.Errorf("store: count runs: %w", err)
	}
	q := f.where(s.runQuery(ctx), "runs.tags")
	if err := q.Order("id DESC").Offset((page - 1) * perPage).Limit(perPage).Find(&out.Items).Error; err != nil {
		return out, fmt.Errorf("store: list runs: %w", err)
	}
	return out, nil
}

// ActiveRuns lists runs the engine should work on (PENDING or RUNNING),
// oldest first, without their targets and judges: it runs on every pass.
func (s *Store) ActiveRuns(ctx context.Context) ([]Run, error) {
	var rs []Run
	if err := s.conn(ctx).Where("status IN ?", []RunStatus{RunPending, RunRunning}).Order("id").Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("store: active runs: %w", err)
	}
	return rs, nil
}

// FirstActiveRun returns the oldest pending, running or paused run, or nil.
func (s *Store) FirstActiveRun(ctx context.Context) (*Run, error) {
	var rs []Run
	if err := s.runQuery(ctx).Where("status IN ?", ActiveRunStatuses).Order("id").Limit(1).Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("store: first active run: %w", err)
	}
	if len(rs) == 0 {
		return nil, nil
	}
	return &rs[0], nil
}
