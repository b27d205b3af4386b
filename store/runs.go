package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// ModelRef picks a model of a provider.
type ModelRef struct {
	ProviderID int64  `json:"provider_id"`
	Model      string `json:"model"`
}

// RunInput is what a user sends to start a run.
type RunInput struct {
	Name          string     `json:"name"`
	Judge         *ModelRef  `json:"judge"`
	Targets       []ModelRef `json:"targets"`
	CollectionIDs []int64    `json:"collection_ids"`
	TriggeredBy   string     `json:"-"`
	// Snapshot is filled by the engine: what decides the run's scores, as JSON.
	Snapshot string `json:"-"`
}

func (in *RunInput) normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	if in.TriggeredBy == "" {
		in.TriggeredBy = "API"
	}
	if in.Snapshot == "" {
		in.Snapshot = "{}"
	}
	if in.Judge == nil || in.Judge.ProviderID == 0 {
		return invalid("judge.provider_id", "is required")
	}
	in.Judge.Model = strings.TrimSpace(in.Judge.Model)
	if in.Judge.Model == "" {
		return invalid("judge.model", "is required")
	}
	if len(in.Targets) == 0 {
		return invalid("targets", "pick at least one model to benchmark")
	}
	seen := map[ModelRef]bool{}
	for i := range in.Targets {
		t := &in.Targets[i]
		t.Model = strings.TrimSpace(t.Model)
		if t.ProviderID == 0 {
			return invalid(fmt.Sprintf("targets[%d].provider_id", i), "is required")
		}
		if t.Model == "" {
			return invalid(fmt.Sprintf("targets[%d].model", i), "is required")
		}
		if seen[*t] {
			return invalid(fmt.Sprintf("targets[%d]", i), "model %q of provider %d is listed twice", t.Model, t.ProviderID)
		}
		seen[*t] = true
	}
	if len(in.CollectionIDs) == 0 {
		return invalid("collection_ids", "pick at least one collection")
	}
	return nil
}

// CreateRun creates the run with its frozen tasks and one item per (task,
// target), all in one transaction. It refuses with ErrConflict while another
// run is active.
func (s *Store) CreateRun(ctx context.Context, in RunInput) (*Run, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	var runID int64
	err := s.Transact(ctx, func(tx *Store) error {
		if err := tx.checkActiveLimit(ctx, 0); err != nil {
			return err
		}
		providers := map[int64]*Provider{}
		provider := func(field string, id int64) (*Provider, error) {
			if p, ok := providers[id]; ok {
				return p, nil
			}
			var p Provider
			if err := tx.conn(ctx).Take(&p, id).Error; err != nil {
				if err == gorm.ErrRecordNotFound {
					return nil, invalid(field, "no provider with id %d", id)
				}
				return nil, fmt.Errorf("store: create run: %w", err)
			}
			providers[id] = &p
			return &p, nil
		}
		judgeProvider, err := provider("judge.provider_id", in.Judge.ProviderID)
		if err != nil {
			return err
		}
		for i, t := range in.Targets {
			if _, err := provider(fmt.Sprintf("targets[%d].provider_id", i), t.ProviderID); err != nil {
				return err
			}
		}
		var cols []Collection
		if err := tx.conn(ctx).Where("id IN ?", in.CollectionIDs).Order("id").Find(&cols).Error; err != nil {
			return fmt.Errorf("store: create run: %w", err)
		}
		if len(cols) != len(uniq(in.CollectionIDs)) {
			found := map[int64]bool{}
			for _, c := range cols {
				found[c.ID] = true
			}
			for _, id := range in.CollectionIDs {
				if !found[id] {
					return invalid("collection_ids", "no collection with id %d", id)
				}
			}
		}

		now := s.now()
		run := Run{Name: in.Name, Status: RunPending, Phase: PhaseBenchmarking, TriggeredBy: in.TriggeredBy,
			Snapshot: in.Snapshot, CreatedAt: now, UpdatedAt: now}
		if err := tx.conn(ctx).Omit("Targets", "Judges", "Collections").Create(&run).Error; err != nil {
			return fmt.Errorf("store: create run: %w", err)
		}
		runID = run.ID
		if run.Name == "" {
			if err := tx.conn(ctx).Model(&Run{}).Where("id = ?", run.ID).Update("name", fmt.Sprintf("Run %d", run.ID)).Error; err != nil {
				return fmt.Errorf("store: name run: %w", err)
			}
		}
		for _, c := range cols {
			id := c.ID
			if err := tx.conn(ctx).Create(&RunCollection{RunID: run.ID, CollectionID: &id, CollectionName: c.Name}).Error; err != nil {
				return fmt.Errorf("store: create run collection: %w", err)
			}
		}
		for i, t := range in.Targets {
			pid := t.ProviderID
			rt := RunTarget{RunID: run.ID, Position: i, ProviderID: &pid, ProviderName: providers[pid].Name,
				Model: t.Model, Settings: "{}", WarmupStatus: WarmupPending}
			if err := tx.conn(ctx).Create(&rt).Error; err != nil {
				return fmt.Errorf("store: create run target: %w", err)
			}
		}
		jpid := in.Judge.ProviderID
		judge := RunJudge{RunID: run.ID, Position: 0, Name: judgeProvider.Name + " / " + in.Judge.Model,
			ProviderID: &jpid, ProviderName: judgeProvider.Name, Model: in.Judge.Model, Settings: "{}"}
		if err := tx.conn(ctx).Create(&judge).Error; err != nil {
			return fmt.Errorf("store: create run judge: %w", err)
		}
		// Freeze the tasks: each task once, even when it sits in several collections.
		err = tx.conn(ctx).Exec(`INSERT INTO run_tasks (run_id, task_id, task_key, category, subcategory, question,
				excellent, good, pass, incorrect_answer_direction)
			SELECT ?, t.id, t.task_key, t.category, t.subcategory, t.question, t.excellent, t.good, t.pass, t.incorrect_answer_direction
			FROM tasks t WHERE t.id IN (SELECT task_id FROM collection_tasks WHERE collection_id IN ?)
			ORDER BY t.task_key`, run.ID, in.CollectionIDs).Error
		if err != nil {
			return fmt.Errorf("store: freeze run tasks: %w", err)
		}
		res := tx.conn(ctx).Exec(`INSERT INTO items (run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
			SELECT ?, rt.id, tg.id, 1, 'NEW', '{}', ? FROM run_tasks rt CROSS JOIN run_targets tg
			WHERE rt.run_id = ? AND tg.run_id = ? ORDER BY tg.position, rt.id`, run.ID, now, run.ID, run.ID)
		if res.Error != nil {
			return fmt.Errorf("store: create items: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return invalid("collection_ids", "the chosen collections hold no tasks; add tasks first")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, runID)
}

// checkActiveLimit refuses with ErrConflict when starting (or restarting)
// a run would exceed the active-run limit; except names a run not to count.
func (s *Store) checkActiveLimit(ctx context.Context, except int64) error {
	if s.dialect == Postgres {
		// Serialises run starts across processes so the check holds.
		if err := s.conn(ctx).Exec("SELECT pg_advisory_xact_lock(7271001)").Error; err != nil {
			return fmt.Errorf("store: lock active runs: %w", err)
		}
	}
	var active []Run
	if err := s.conn(ctx).Where("status IN ? AND id <> ?", ActiveRunStatuses, except).Order("id").Limit(s.maxActive).Find(&active).Error; err != nil {
		return fmt.Errorf("store: active runs: %w", err)
	}
	if len(active) >= s.maxActive {
		return conflict("run %d is still %s; only %d run(s) may be active at a time (a paused run counts: cancel it or wait)", active[0].ID, active[0].Status, s.maxActive)
	}
	return nil
}

// RetryJudging sends the items whose judging failed back to the judge and
// makes the run active again; it reports how many items it re-queued.
func (s *Store) RetryJudging(ctx context.Context, runID int64) (int64, error) {
	var n int64
	err := s.Transact(ctx, func(tx *Store) error {
		run, err := tx.Run(ctx, runID)
		if err != nil {
			return err
		}
		if run.Status == RunCancelled {
			return conflict("run %d was cancelled", runID)
		}
		now := s.now()
		res := tx.conn(ctx).Model(&Item{}).Where("run_id = ? AND status = ? AND failed_phase = ?", runID, ItemFailed, PhaseJudging).
			Updates(map[string]any{"status": ItemWaitingForJudge, "failed_phase": "", "failures": 0, "next_retry_at": nil, "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("store: retry judging: %w", res.Error)
		}
		n = res.RowsAffected
		if n == 0 {
			return nil
		}
		if !run.Active() {
			if err := tx.checkActiveLimit(ctx, runID); err != nil {
				return err
			}
		}
		status := run.Status
		if !run.Active() {
			status = RunRunning
		}
		// Guarded by the status read above, so a cancel that lands meanwhile wins.
		res = tx.conn(ctx).Model(&Run{}).Where("id = ? AND status = ?", runID, run.Status).Updates(map[string]any{
			"status": status, "phase": PhaseJudging, "finished_at": nil, "error": "", "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("store: retry judging: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return conflict("run %d changed meanwhile; try again", runID)
		}
		return nil
	})
	return n, err
}

func uniq(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

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

// RunFilter narrows and pages the run list.
type RunFilter struct {
	Status  RunStatus
	Page    int
	PerPage int
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) (Page[Run], error) {
	page, perPage := normPage(f.Page, f.PerPage, 25)
	q := s.conn(ctx).Model(&Run{})
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	out := Page[Run]{Page: page, PerPage: perPage, Items: []Run{}}
	if err := q.Count(&out.Total).Error; err != nil {
		return out, fmt.Errorf("store: count runs: %w", err)
	}
	q = s.runQuery(ctx)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
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

// RunJudges lists a run's judges in order.
func (s *Store) RunJudges(ctx context.Context, runID int64) ([]RunJudge, error) {
	var js []RunJudge
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("position").Find(&js).Error; err != nil {
		return nil, fmt.Errorf("store: run judges: %w", err)
	}
	return js, nil
}

// DeleteRun removes a run with its items, scores and log.
func (s *Store) DeleteRun(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&Run{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete run: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete run: %w", &NotFoundError{What: "run", ID: id})
	}
	return nil
}

// SetRunStatus moves a run from one of the allowed statuses to another; it
// reports ErrConflict, naming the current status, when the run is elsewhere
// (also when it is already there: only one caller makes a change).
func (s *Store) SetRunStatus(ctx context.Context, id int64, to RunStatus, from ...RunStatus) (*Run, error) {
	now := s.now()
	updates := map[string]any{"status": to, "updated_at": now}
	switch to {
	case RunRunning:
		updates["started_at"] = gorm.Expr("COALESCE(started_at, ?)", now)
	case RunFinished, RunFailed, RunCancelled:
		updates["finished_at"] = now
	}
	res := s.conn(ctx).Model(&Run{}).Where("id = ? AND status IN ?", id, from).Updates(updates)
	if res.Error != nil {
		return nil, fmt.Errorf("store: set run status: %w", res.Error)
	}
	r, err := s.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	if res.RowsAffected == 0 {
		return r, conflict("run %d is %s", id, r.Status)
	}
	return r, nil
}

// FailRun marks an active run FAILED with the reason.
func (s *Store) FailRun(ctx context.Context, id int64, reason string) error {
	now := s.now()
	err := s.conn(ctx).Model(&Run{}).Where("id = ? AND status IN ?", id, ActiveRunStatuses).
		Updates(map[string]any{"status": RunFailed, "error": reason, "finished_at": now, "updated_at": now}).Error
	if err != nil {
		return fmt.Errorf("store: fail run: %w", err)
	}
	return nil
}

// SetRunPhase moves a run to the judging phase once benchmarking is done.
func (s *Store) SetRunPhase(ctx context.Context, id int64, phase Phase) error {
	err := s.conn(ctx).Model(&Run{}).Where("id = ?", id).Updates(map[string]any{"phase": phase, "updated_at": s.now()}).Error
	if err != nil {
		return fmt.Errorf("store: set run phase: %w", err)
	}
	return nil
}
