package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"tribunal/kpi"
	"tribunal/rubric"
)

// KPI is a named formula over run metrics (seed 002 §6, §12.1). It applies
// to every run, or only to the runs of one collection or one schedule.
type KPI struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Formula      string `json:"formula"`
	Description  string `json:"description"`
	CollectionID *int64 `json:"collection_id"`
	ScheduleID   *int64 `json:"schedule_id"`
	// Revision is bumped when the formula or scope changes; values are then recomputed.
	Revision  int       `json:"revision"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TableName maps KPI to kpis.
func (KPI) TableName() string { return "kpis" }

// KPIInput is what a user sends to create or replace a KPI.
type KPIInput struct {
	Name         string `json:"name"`
	Formula      string `json:"formula"`
	Description  string `json:"description"`
	CollectionID *int64 `json:"collection_id"`
	ScheduleID   *int64 `json:"schedule_id"`
}

// BuiltinMetrics are the run metrics every run may have, besides judge
// metrics and checks (see RunMetrics).
var BuiltinMetrics = []string{"score", "pass_rate", "latency_ms", "tokens_per_s", "cost_usd", "error_rate"}

// KnownMetrics returns every metric name a formula or alert may use (the
// names of MetricList).
func (s *Store) KnownMetrics(ctx context.Context) (map[string]bool, error) {
	list, err := s.MetricList(ctx)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(list))
	for _, m := range list {
		known[m.Name] = true
	}
	return known, nil
}

// MetricList is every metric a formula or alert may read: the KPI
// vocabulary (run metrics, then check_<type> for each check), then by name
// the judge metrics of the built-in ones, every judgement style version and
// every run judge, each with the first description found. A judge's score
// reaches a KPI normalised to 0–1, so each has that scale.
func (s *Store) MetricList(ctx context.Context) ([]kpi.MetricInfo, error) {
	judge := map[string]string{}
	add := func(ms []Metric) {
		for _, m := range ms {
			name := strings.ToLower(m.Name)
			if judge[name] == "" {
				judge[name] = m.Description
			}
		}
	}
	add(rubric.BuiltinMetrics)
	for _, table := range []string{"judgement_style_versions", "run_judges"} {
		var lists []string
		if err := s.conn(ctx).Table(table).Distinct("metrics").Pluck("metrics", &lists).Error; err != nil {
			return nil, fmt.Errorf("store: known metrics: %w", err)
		}
		for _, l := range lists {
			var ms []Metric
			if json.Unmarshal([]byte(l), &ms) == nil {
				add(ms)
			}
		}
	}
	out := slices.Clone(kpi.Vocabulary)
	for _, name := range slices.Sorted(maps.Keys(judge)) {
		if kpi.Canonical(name) != name || slices.ContainsFunc(out, func(m kpi.MetricInfo) bool { return m.Name == name }) {
			continue // the vocabulary's own, or an alias that stands for another metric
		}
		out = append(out, kpi.MetricInfo{Name: name, Aliases: []string{}, Scale: kpi.ScaleUnit,
			Description: cmp.Or(judge[name], "judge metric")})
	}
	return out, nil
}

// ValidateFormula checks a formula against the known metrics.
func (s *Store) ValidateFormula(ctx context.Context, formula string) (kpi.Validation, error) {
	known, err := s.KnownMetrics(ctx)
	if err != nil {
		return kpi.Validation{}, err
	}
	return kpi.Validate(formula, known), nil
}

func (s *Store) normalizeKPI(ctx context.Context, in *KPIInput) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Formula = strings.TrimSpace(in.Formula)
	in.Description = strings.TrimSpace(in.Description)
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case len(in.Description) > 10_000:
		return invalid("description", "is longer than 10,000 characters")
	case in.CollectionID != nil && in.ScheduleID != nil:
		return invalid("schedule_id", "a KPI belongs to a collection or a schedule, not both")
	}
	if in.Formula == "" {
		return invalid("formula", "is required, e.g. AVERAGE(accuracy, coherence)")
	}
	v, err := s.ValidateFormula(ctx, in.Formula)
	if err != nil {
		return err
	}
	if !v.OK {
		msg := v.Errors[0].Error()
		if len(v.Errors) > 1 {
			msg += fmt.Sprintf(" (and %d more problem(s))", len(v.Errors)-1)
		}
		return invalid("formula", "%s", msg)
	}
	return s.checkScope(ctx, in.CollectionID, in.ScheduleID)
}

// checkScope refuses a collection or schedule id that does not exist.
func (s *Store) checkScope(ctx context.Context, collectionID, scheduleID *int64) error {
	for _, ref := range []struct {
		id           *int64
		table, field string
	}{{collectionID, "collections", "collection_id"}, {scheduleID, "schedules", "schedule_id"}} {
		if ref.id == nil {
			continue
		}
		var n int64
		if err := s.conn(ctx).Table(ref.table).Where("id = ?", *ref.id).Count(&n).Error; err != nil {
			return fmt.Errorf("store: check %s: %w", ref.field, err)
		}
		if n == 0 {
			return invalid(ref.field, "no %s with id %d", strings.TrimSuffix(ref.table, "s"), *ref.id)
		}
	}
	return nil
}

// KPIs lists the KPIs by name.
func (s *Store) KPIs(ctx context.Context) ([]KPI, error) {
	out := []KPI{}
	if err := s.conn(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: kpis: %w", err)
	}
	return out, nil
}

// KPI returns one KPI.
func (s *Store) KPI(ctx context.Context, id int64) (*KPI, error) {
	var k KPI
	if err := s.conn(ctx).Take(&k, id).Error; err != nil {
		return nil, fmt.Errorf("store: kpi: %w", notFound(err, "KPI", id))
	}
	return &k, nil
}

// CreateKPI saves a KPI after validating its formula.
func (s *Store) CreateKPI(ctx context.Context, in KPIInput) (*KPI, error) {
	if err := s.normalizeKPI(ctx, &in); err != nil {
		return nil, err
	}
	now := s.now()
	k := KPI{Name: in.Name, Formula: in.Formula, Description: in.Description, CollectionID: in.CollectionID,
		ScheduleID: in.ScheduleID, Revision: 1, CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Create(&k).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, conflict("a KPI named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: create kpi: %w", err)
	}
	return &k, nil
}

// UpdateKPI replaces a KPI. A new formula or scope bumps its revision and
// drops its stored values (recompute them with SetKPIValues); recomputed
// reports that.
func (s *Store) UpdateKPI(ctx context.Context, id int64, in KPIInput) (k *KPI, recomputed bool, err error) {
	if err := s.normalizeKPI(ctx, &in); err != nil {
		return nil, false, err
	}
	err = s.Transact(ctx, func(tx *Store) error {
		var cur KPI
		if err := tx.conn(ctx).Clauses(lockForUpdate(s.dialect)...).Take(&cur, id).Error; err != nil {
			return fmt.Errorf("store: update kpi: %w", notFound(err, "KPI", id))
		}
		updates := map[string]any{"name": in.Name, "formula": in.Formula, "description": in.Description,
			"collection_id": in.CollectionID, "schedule_id": in.ScheduleID, "updated_at": s.now()}
		if cur.Formula != in.Formula || !sameID(cur.CollectionID, in.CollectionID) || !sameID(cur.ScheduleID, in.ScheduleID) {
			recomputed = true
			updates["revision"] = cur.Revision + 1
			if err := tx.conn(ctx).Where("kpi_id = ?", id).Delete(&KPIValue{}).Error; err != nil {
				return fmt.Errorf("store: update kpi: %w", err)
			}
		}
		if err := tx.conn(ctx).Model(&KPI{}).Where("id = ?", id).Updates(updates).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return conflict("a KPI named %q already exists", in.Name)
			}
			return fmt.Errorf("store: update kpi: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	k, err = s.KPI(ctx, id)
	return k, recomputed, err
}

func sameID(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// DeleteKPI removes a KPI with its values and alerts.
func (s *Store) DeleteKPI(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&KPI{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete kpi: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete kpi: %w", &NotFoundError{What: "KPI", ID: id})
	}
	return nil
}

// kpiScope restricts a query of runs (column col holds the run id) to
// the runs a KPI or alert applies to.
func kpiScope(q *gorm.DB, col string, collectionID, scheduleID *int64) *gorm.DB {
	switch {
	case collectionID != nil:
		return q.Where(col+" IN (SELECT run_id FROM run_collections WHERE collection_id = ?)", *collectionID)
	case scheduleID != nil:
		return q.Where(col+" IN (SELECT id FROM runs WHERE schedule_id = ? AND deleted_at IS NULL)", *scheduleID)
	}
	return q
}

// appliesToRun restricts a query of KPIs or alerts (with collection_id and
// schedule_id columns) to those for every run, for one of the run's
// collections, or for its schedule; the inverse of kpiScope.
func appliesToRun(q *gorm.DB, run *Run) *gorm.DB {
	sched := int64(-1)
	if run.ScheduleID != nil {
		sched = *run.ScheduleID
	}
	return q.Where(`(collection_id IS NULL AND schedule_id IS NULL) OR schedule_id = ?
		OR collection_id IN (SELECT collection_id FROM run_collections WHERE run_id = ? AND collection_id IS NOT NULL)`, sched, run.ID)
}

// KPIsForRun lists the KPIs that apply to a run: those for every run, for
// one of its collections, or for its schedule.
func (s *Store) KPIsForRun(ctx context.Context, run *Run) ([]KPI, error) {
	var out []KPI
	err := appliesToRun(s.conn(ctx), run).Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: kpis for run: %w", err)
	}
	return out, nil
}

// RunMetric is one metric value of a finished run; Model "" is the whole run.
type RunMetric struct {
	RunID     int64   `json:"-"`
	Model     string  `json:"model"`
	ModelName string  `json:"-"`
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
}

// TableName maps RunMetric to run_metrics.
func (RunMetric) TableName() string { return "run_metrics" }

// KPIValue is a KPI's value for a run and model ("" = the whole run). Value
// is nil and Error says why when it could not be computed.
type KPIValue struct {
	ID          int64     `json:"-"`
	KPIID       int64     `json:"kpi_id" gorm:"column:kpi_id"`
	RunID       int64     `json:"run_id"`
	Model       string    `json:"model"`
	ModelName   string    `json:"-"`
	Value       *float64  `json:"value"`
	Error       string    `json:"error,omitempty"`
	KPIRevision int       `json:"-" gorm:"column:kpi_revision"`
	CreatedAt   time.Time `json:"-"`
}

// TableName maps KPIValue to kpi_values.
func (KPIValue) TableName() string { return "kpi_values" }

// SaveRunEvaluation replaces a run's stored metrics and KPI values, in one transaction.
func (s *Store) SaveRunEvaluation(ctx context.Context, runID int64, metrics []RunMetric, values []KPIValue) error {
	now := s.now()
	return s.Transact(ctx, func(tx *Store) error {
		if err := tx.conn(ctx).Where("run_id = ?", runID).Delete(&RunMetric{}).Error; err != nil {
			return fmt.Errorf("store: save run metrics: %w", err)
		}
		if err := tx.conn(ctx).Where("run_id = ?", runID).Delete(&KPIValue{}).Error; err != nil {
			return fmt.Errorf("store: save kpi values: %w", err)
		}
		for i := range metrics {
			metrics[i].RunID = runID
		}
		if len(metrics) > 0 {
			if err := tx.conn(ctx).CreateInBatches(metrics, 200).Error; err != nil {
				return fmt.Errorf("store: save run metrics: %w", err)
			}
		}
		for i := range values {
			values[i].ID, values[i].RunID, values[i].CreatedAt = 0, runID, now
		}
		if len(values) > 0 {
			if err := tx.conn(ctx).CreateInBatches(values, 200).Error; err != nil {
				return fmt.Errorf("store: save kpi values: %w", err)
			}
		}
		return nil
	})
}

// SetKPIValues stores values of one KPI (computed afresh after an edit),
// replacing any it had for the same runs and models.
func (s *Store) SetKPIValues(ctx context.Context, kpiID int64, values []KPIValue) error {
	if len(values) == 0 {
		return nil
	}
	now := s.now()
	for i := range values {
		values[i].ID, values[i].KPIID, values[i].CreatedAt = 0, kpiID, now
	}
	err := s.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "kpi_id"}, {Name: "run_id"}, {Name: "model"}},
		DoUpdates: clause.AssignmentColumns([]string{"model_name", "value", "error", "kpi_revision", "created_at"}),
	}).CreateInBatches(values, 200).Error
	if err != nil {
		return fmt.Errorf("store: set kpi values: %w", err)
	}
	return nil
}

// KPIRuns returns the ids of the evaluated runs a KPI applies to, oldest first.
func (s *Store) KPIRuns(ctx context.Context, k *KPI) ([]int64, error) {
	var ids []int64
	q := s.conn(ctx).Model(&RunMetric{}).Distinct("run_id")
	if err := kpiScope(q, "run_id", k.CollectionID, k.ScheduleID).Order("run_id").Pluck("run_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("store: kpi runs: %w", err)
	}
	return ids, nil
}

// RunMetricsOf returns the stored metrics of the given runs, by run.
func (s *Store) RunMetricsOf(ctx context.Context, runIDs []int64) (map[int64][]RunMetric, error) {
	out := map[int64][]RunMetric{}
	for start := 0; start < len(runIDs); start += 500 {
		var rows []RunMetric
		chunk := runIDs[start:min(start+500, len(runIDs))]
		if err := s.conn(ctx).Where("run_id IN ?", chunk).Order("run_id, model, metric").Find(&rows).Error; err != nil {
			return nil, fmt.Errorf("store: run metrics: %w", err)
		}
		for _, r := range rows {
			out[r.RunID] = append(out[r.RunID], r)
		}
	}
	return out, nil
}

// RunKPI is a KPI's values for one run: the whole run and each model.
type RunKPI struct {
	KPIID    int64      `json:"kpi_id"`
	Name     string     `json:"name"`
	Formula  string     `json:"formula"`
	Value    *float64   `json:"value"`
	Error    string     `json:"error,omitempty"`
	PerModel []ModelKPI `json:"per_model"`
}

// ModelKPI is a KPI's value for one model ("provider / model") of a run.
type ModelKPI struct {
	Model string   `json:"model"`
	Value *float64 `json:"value"`
	Error string   `json:"error,omitempty"`
}

// RunKPIValues lists the KPI values stored for a run, by KPI name; empty
// until the run has finished and been evaluated.
func (s *Store) RunKPIValues(ctx context.Context, runID int64) ([]RunKPI, error) {
	var rows []struct {
		KPIValue
		Name    string
		Formula string
	}
	err := s.conn(ctx).Table("kpi_values v").Select("v.*, k.name, k.formula").Joins("JOIN kpis k ON k.id = v.kpi_id").
		Where("v.run_id = ?", runID).Order("k.name, v.kpi_id, v.model").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: run kpi values: %w", err)
	}
	out := []RunKPI{}
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].KPIID != r.KPIID {
			out = append(out, RunKPI{KPIID: r.KPIID, Name: r.Name, Formula: r.Formula, PerModel: []ModelKPI{}})
		}
		last := &out[len(out)-1]
		if r.Model == "" {
			last.Value, last.Error = r.Value, r.Error
		} else {
			last.PerModel = append(last.PerModel, ModelKPI{Model: r.Model, Value: r.Value, Error: r.Error})
		}
	}
	return out, nil
}

// KPIPoint is one stored value of a KPI with its run.
type KPIPoint struct {
	RunID      int64      `json:"run_id"`
	RunName    string     `json:"run_name"`
	FinishedAt *time.Time `json:"finished_at"`
	Model      string     `json:"model"`
	Value      *float64   `json:"value"`
	Error      string     `json:"error,omitempty"`
}

// KPITrend returns a KPI's values over its latest limit runs, oldest run first.
func (s *Store) KPITrend(ctx context.Context, kpiID int64, limit int) ([]KPIPoint, error) {
	var runIDs []int64
	if err := s.conn(ctx).Model(&KPIValue{}).Distinct("run_id").Where("kpi_id = ?", kpiID).
		Order("run_id DESC").Limit(max(limit, 1)).Pluck("run_id", &runIDs).Error; err != nil {
		return nil, fmt.Errorf("store: kpi trend: %w", err)
	}
	out := []KPIPoint{}
	if len(runIDs) == 0 {
		return out, nil
	}
	err := s.conn(ctx).Table("kpi_values v").
		Select("v.run_id, r.name AS run_name, r.finished_at, v.model, v.value, v.error").
		Joins("JOIN runs r ON r.id = v.run_id").
		Where("v.kpi_id = ? AND v.run_id IN ?", kpiID, runIDs).Order("v.run_id, v.model").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: kpi trend: %w", err)
	}
	return out, nil
}

// LatestKPIValues returns each KPI's whole-run value of its latest evaluated run.
func (s *Store) LatestKPIValues(ctx context.Context) (map[int64]KPIPoint, error) {
	var rows []struct {
		KPIID int64 `gorm:"column:kpi_id"`
		KPIPoint
	}
	err := s.conn(ctx).Table("kpi_values v").
		Select("v.kpi_id, v.run_id, r.name AS run_name, r.finished_at, v.model, v.value, v.error").
		Joins("JOIN runs r ON r.id = v.run_id").
		Where("v.model = '' AND v.run_id = (SELECT MAX(w.run_id) FROM kpi_values w WHERE w.kpi_id = v.kpi_id AND w.model = '')").
		Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: latest kpi values: %w", err)
	}
	out := map[int64]KPIPoint{}
	for _, r := range rows {
		out[r.KPIID] = r.KPIPoint
	}
	return out, nil
}

// EvalTask is a finished run claimed for evaluation (metrics, KPIs, alerts).
type EvalTask struct {
	RunID      int64
	Status     RunStatus
	ScheduleID *int64
	FinishedAt time.Time
}

// ClaimEvaluations claims up to limit runs that ended (FINISHED, FAILED or
// CANCELLED) and have not been evaluated for their current finished_at, or
// whose evaluation's lease ran out. A run that finishes again (judging
// retried) is evaluated again. Each run is claimed by one worker only.
// A non-zero since looks only at runs that finished since then (an
// indexed range); the zero time looks at every run.
func (s *Store) ClaimEvaluations(ctx context.Context, workerID string, lease time.Duration, limit int, now, since time.Time) ([]EvalTask, error) {
	now = now.UTC()
	type cand struct {
		ID         int64
		Status     RunStatus
		ScheduleID *int64
		FinishedAt time.Time
		Known      bool
	}
	var cands []cand
	ended := []RunStatus{RunFinished, RunFailed, RunCancelled}
	q := s.conn(ctx).Table("runs r").
		Select("r.id, r.status, r.schedule_id, r.finished_at, e.run_id IS NOT NULL AS known").
		Joins("LEFT JOIN run_evaluations e ON e.run_id = r.id").
		Where("r.deleted_at IS NULL").
		Where("e.run_id IS NULL OR (e.status = 'DONE' AND e.finished_at <> r.finished_at)")
	if since.IsZero() {
		q = q.Where("r.finished_at IS NOT NULL AND r.status IN ?", ended)
	} else {
		// (status || '') keeps SQLite's planner, which has no statistics,
		// on the finished_at index rather than the status one.
		q = q.Where("r.finished_at IS NOT NULL AND r.finished_at >= ? AND (r.status || '') IN ?", since.UTC(), ended)
	}
	if err := q.Order("r.id").Limit(max(limit, 1)).Scan(&cands).Error; err != nil {
		return nil, fmt.Errorf("store: evaluation candidates: %w", err)
	}
	// Claims whose worker stopped before finishing.
	var expired []cand
	err := s.conn(ctx).Table("run_evaluations e").
		Select("r.id, r.status, r.schedule_id, r.finished_at, TRUE AS known").
		Joins("JOIN runs r ON r.id = e.run_id").
		Where("e.status = 'CLAIMED' AND e.lease_until < ? AND r.finished_at IS NOT NULL AND (r.status || '') IN ? AND r.deleted_at IS NULL", now, ended).
		Order("e.run_id").Limit(max(limit, 1)).Scan(&expired).Error
	if err != nil {
		return nil, fmt.Errorf("store: expired evaluations: %w", err)
	}
	var out []EvalTask
	for _, c := range append(cands, expired...) {
		fin := c.FinishedAt.UTC()
		var res *gorm.DB
		if !c.Known {
			res = s.conn(ctx).Exec(`INSERT INTO run_evaluations (run_id, finished_at, status, worker_id, lease_until)
				VALUES (?, ?, 'CLAIMED', ?, ?) ON CONFLICT (run_id) DO NOTHING`, c.ID, fin, workerID, now.Add(lease))
		} else {
			res = s.conn(ctx).Exec(`UPDATE run_evaluations SET finished_at = ?, status = 'CLAIMED', worker_id = ?, lease_until = ?
				WHERE run_id = ? AND ((status = 'DONE' AND finished_at <> ?) OR (status = 'CLAIMED' AND lease_until < ?))`,
				fin, workerID, now.Add(lease), c.ID, fin, now)
		}
		if res.Error != nil {
			return out, fmt.Errorf("store: claim evaluation: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			out = append(out, EvalTask{RunID: c.ID, Status: c.Status, ScheduleID: c.ScheduleID, FinishedAt: fin})
		}
	}
	return out, nil
}

// FinishEvaluation marks a claimed evaluation done, with the error if it failed.
func (s *Store) FinishEvaluation(ctx context.Context, runID int64, workerID, errText string, now time.Time) error {
	err := s.conn(ctx).Exec(`UPDATE run_evaluations SET status = 'DONE', error = ?, evaluated_at = ?, lease_until = NULL
		WHERE run_id = ? AND worker_id = ? AND status = 'CLAIMED'`, clipMessage(errText, 2000), now.UTC(), runID, workerID).Error
	if err != nil {
		return fmt.Errorf("store: finish evaluation: %w", err)
	}
	return nil
}
