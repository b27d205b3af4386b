package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ModelRef picks a model of a provider, with the settings of its calls.
type ModelRef struct {
	ProviderID int64          `json:"provider_id"`
	Model      string         `json:"model"`
	Settings   TargetSettings `json:"settings"`
	// Tags label a target (a model under test); judges ignore them.
	Tags []string `json:"tags,omitempty"`
}

// RunInput is what a user sends to start a run.
type RunInput struct {
	Name string `json:"name"`
	// Judge is a single judge model with the default style; JudgeIDs a panel of saved judges.
	Judge         *ModelRef  `json:"judge"`
	JudgeIDs      []int64    `json:"judge_ids"`
	Targets       []ModelRef `json:"targets"`
	CollectionIDs []int64    `json:"collection_ids"`
	// Metrics lists the judge metrics and checks ("check_<type>") that are on; empty = all.
	Metrics []string           `json:"metrics"`
	Repeats int                `json:"repeats"`
	Weights map[string]float64 `json:"weights"`
	// SourceWeights weigh whole sources in an item's overall: "judge" (the
	// panel) and "check:<type>"; missing = 1.
	SourceWeights map[string]float64 `json:"source_weights,omitempty"`
	SystemPrompt  string             `json:"system_prompt"`
	TriggeredBy   string             `json:"-"`
	ScheduleID    *int64             `json:"-"`
	// Snapshot is filled by the engine: what decides the run's scores, as JSON.
	Snapshot string `json:"-"`
	// Pairwise asks the judges to compare the targets' answers in pairs
	// (both orders) and ranks the targets by Bradley–Terry, instead of
	// scoring each answer; it needs two targets or more and a judge.
	Pairwise bool `json:"pairwise,omitempty"`
	// Tags label the run.
	Tags []string `json:"tags,omitempty"`
	// TaskSelection picks N of the collections' tasks (top, bottom or
	// random with a seed); TaskIDs hand-picks them. Neither: all tasks.
	TaskSelection *TaskSelection `json:"task_selection,omitempty"`
	TaskIDs       []TaskRef      `json:"task_ids,omitempty"`
}

// maxRepeats bounds repeat runs; pass@k needs a handful, not thousands.
const maxRepeats = 100

func (in *RunInput) normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	if len(in.Name) > 255 {
		return invalid("name", "is longer than 255 characters")
	}
	if in.TriggeredBy == "" {
		in.TriggeredBy = "API"
	}
	if in.Snapshot == "" {
		in.Snapshot = "{}"
	}
	if in.Repeats == 0 {
		in.Repeats = 1
	}
	if err := in.normalizeSelection(); err != nil {
		return err
	}
	if in.Repeats < 1 || in.Repeats > maxRepeats {
		return invalid("repeats", "must be within 1…%d", maxRepeats)
	}
	if in.Judge != nil && len(in.JudgeIDs) > 0 {
		return invalid("judge_ids", "send either judge or judge_ids, not both")
	}
	if in.Judge != nil {
		if in.Judge.ProviderID == 0 {
			return invalid("judge.provider_id", "is required")
		}
		in.Judge.Model = strings.TrimSpace(in.Judge.Model)
		if in.Judge.Model == "" {
			return invalid("judge.model", "is required")
		}
		if err := in.Judge.Settings.Validate("judge.settings"); err != nil {
			return err
		}
	}
	if len(in.JudgeIDs) > 10 {
		return invalid("judge_ids", "a panel has at most 10 judges")
	}
	for i, id := range in.JudgeIDs {
		for _, prev := range in.JudgeIDs[:i] {
			if prev == id {
				return invalid("judge_ids", "judge %d is listed twice", id)
			}
		}
	}
	in.SystemPrompt = strings.TrimSpace(in.SystemPrompt)
	if len(in.SystemPrompt) > 100_000 {
		return invalid("system_prompt", "is longer than 100,000 characters")
	}
	if len(in.Metrics) > 100 {
		return invalid("metrics", "at most 100 metrics")
	}
	for name, w := range in.Weights {
		if w < 0 || w > 1000 || w != w {
			return invalid("weights", "the weight of %q must be within 0…1000", name)
		}
	}
	for name, w := range in.SourceWeights {
		if name != "judge" && !strings.HasPrefix(name, "check:") {
			return invalid("source_weights", "%q is not a source; use \"judge\" or \"check:<type>\"", name)
		}
		if w < 0 || w > 1000 || w != w {
			return invalid("source_weights", "the weight of %q must be within 0…1000", name)
		}
	}
	if len(in.Targets) == 0 {
		return invalid("targets", "pick at least one model to benchmark")
	}
	if len(in.Targets) > 50 {
		return invalid("targets", "a run has at most 50 targets")
	}
	type key struct {
		provider int64
		model    string
	}
	seen := map[key]bool{}
	for i := range in.Targets {
		t := &in.Targets[i]
		t.Model = strings.TrimSpace(t.Model)
		if t.ProviderID == 0 {
			return invalid(fmt.Sprintf("targets[%d].provider_id", i), "is required")
		}
		if t.Model == "" {
			return invalid(fmt.Sprintf("targets[%d].model", i), "is required")
		}
		if err := t.Settings.Validate(fmt.Sprintf("targets[%d].settings", i)); err != nil {
			return err
		}
		k := key{t.ProviderID, t.Model}
		if seen[k] {
			return invalid(fmt.Sprintf("targets[%d]", i), "model %q of provider %d is listed twice", t.Model, t.ProviderID)
		}
		seen[k] = true
	}
	if in.Pairwise && len(in.Targets) < 2 {
		return invalid("targets", "pairwise judging compares models: pick at least two")
	}
	if in.Pairwise && in.Judge == nil && len(in.JudgeIDs) == 0 {
		return invalid("judge.provider_id", "pairwise judging needs a judge or a panel (judge_ids)")
	}
	if len(in.CollectionIDs) == 0 {
		return invalid("collection_ids", "pick at least one collection")
	}
	return nil
}

// MeasuredMetrics can be stored as scores of every answer (source
// "measure") when a run names them in its metrics; they are off unless named.
var MeasuredMetrics = []string{"latency_ms", "tokens", "tokens_per_s", "cost_usd"}

// checksOnly reports whether the run's metrics name reference checks alone,
// so it needs no judge.
func (in *RunInput) checksOnly() bool {
	if len(in.Metrics) == 0 {
		return false
	}
	for _, m := range in.Metrics {
		if !strings.HasPrefix(m, "check_") && !slices.Contains(MeasuredMetrics, m) {
			return false
		}
	}
	return true
}

// CreateRun creates the run with its frozen tasks, targets and judges, and
// one item per (task, target, repeat), all in one transaction. It refuses
// with ErrConflict while the active-run limit is reached.
func (s *Store) CreateRun(ctx context.Context, in RunInput) (*Run, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	if in.Judge == nil && len(in.JudgeIDs) == 0 && !in.checksOnly() {
		return nil, invalid("judge.provider_id", "is required: pick a judge or a panel (judge_ids), or set metrics to reference checks only")
	}
	var runID int64
	err := s.Transact(ctx, func(tx *Store) error {
		if err := tx.checkActiveLimit(ctx, 0); err != nil {
			return err
		}
		tasks, err := tx.runTaskCount(ctx, in)
		if err != nil {
			return err
		}
		if err := tx.checkItemLimit(tasks, len(in.Targets), in.Repeats); err != nil {
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
		price := func(providerID int64, model string) (Price, error) {
			pr, err := tx.ModelPrice(ctx, providerID, model)
			if err != nil || pr == nil {
				return Price{}, err
			}
			return Price{InputPerMTok: &pr.InputPerMTok, OutputPerMTok: &pr.OutputPerMTok}, nil
		}
		judges, err := tx.panel(ctx, in, provider, price)
		if err != nil {
			return err
		}
		if err := checkRunMetrics(in.Metrics, judges); err != nil {
			return err
		}
		targets := make([]RunTarget, len(in.Targets))
		for i, t := range in.Targets {
			p, err := provider(fmt.Sprintf("targets[%d].provider_id", i), t.ProviderID)
			if err != nil {
				return err
			}
			pr, err := price(t.ProviderID, t.Model)
			if err != nil {
				return err
			}
			pid := t.ProviderID
			targets[i] = RunTarget{Position: i, ProviderID: &pid, ProviderName: p.Name, Model: t.Model,
				Settings: t.Settings, Tags: t.Tags, WarmupStatus: WarmupPending, Price: pr}
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
			Snapshot: in.Snapshot, Repeats: in.Repeats, ScheduleID: in.ScheduleID, CreatedAt: now, UpdatedAt: now,
			Options: RunOptions{Metrics: in.Metrics, Weights: in.Weights, SourceWeights: in.SourceWeights, SystemPrompt: in.SystemPrompt, Pairwise: in.Pairwise}, Tags: in.Tags}
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
		for i := range targets {
			targets[i].RunID = run.ID
		}
		if err := tx.conn(ctx).Create(&targets).Error; err != nil {
			return fmt.Errorf("store: create run targets: %w", err)
		}
		for i := range judges {
			judges[i].RunID = run.ID
		}
		if len(judges) > 0 {
			if err := tx.conn(ctx).Create(&judges).Error; err != nil {
				return fmt.Errorf("store: create run judges: %w", err)
			}
		}
		// Freeze the tasks (all, or those the query picker chose; see selection.go).
		if err := tx.freezeTasks(ctx, run.ID, in); err != nil {
			return err
		}
		return tx.createItems(ctx, run.ID, in.Repeats, now)
	})
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, runID)
}

// runTaskColumns are the task columns a run freezes.
const runTaskColumns = `task_key, category, subcategory, question, excellent, good, pass, incorrect_answer_direction,
	reference, turns, system_prompt, usecase, tags, constraints, examples, judge_instructions, comments, checks`

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// createItems makes one item per (task, target, repeat) of a run.
func (s *Store) createItems(ctx context.Context, runID int64, repeats int, now time.Time) error {
	for r := 1; r <= repeats; r++ {
		res := s.conn(ctx).Exec(`INSERT INTO items (run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
			SELECT ?, rt.id, tg.id, ?, 'NEW', '{}', ? FROM run_tasks rt CROSS JOIN run_targets tg
			WHERE rt.run_id = ? AND tg.run_id = ? ORDER BY tg.position, rt.id`, runID, r, now, runID, runID)
		if res.Error != nil {
			return fmt.Errorf("store: create items: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return invalid("collection_ids", "the chosen collections hold no tasks; add tasks first")
		}
	}
	return nil
}

// panel freezes the run's judges: a single model with the default style, or
// saved judges with their current style versions. A panel shares one scale,
// so their scores average meaningfully.
func (s *Store) panel(ctx context.Context, in RunInput, provider func(string, int64) (*Provider, error),
	price func(int64, string) (Price, error)) ([]RunJudge, error) {
	var out []RunJudge
	if in.Judge != nil {
		p, err := provider("judge.provider_id", in.Judge.ProviderID)
		if err != nil {
			return nil, err
		}
		st, err := s.DefaultStyle(ctx)
		if err != nil {
			return nil, err
		}
		pr, err := price(in.Judge.ProviderID, in.Judge.Model)
		if err != nil {
			return nil, err
		}
		pid := in.Judge.ProviderID
		out = append(out, RunJudge{Name: p.Name + " / " + in.Judge.Model, ProviderID: &pid, ProviderName: p.Name,
			Model: in.Judge.Model, Settings: in.Judge.Settings, Price: pr}.withStyle(st))
	}
	for i, id := range in.JudgeIDs {
		field := fmt.Sprintf("judge_ids[%d]", i)
		var j Judge
		if err := s.conn(ctx).Take(&j, id).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil, invalid(field, "no judge with id %d", id)
			}
			return nil, fmt.Errorf("store: run judge: %w", err)
		}
		if j.ProviderID == nil {
			return nil, invalid(field, "judge %q has no provider (it was deleted); pick another", j.Name)
		}
		p, err := provider(field, *j.ProviderID)
		if err != nil {
			return nil, err
		}
		st, err := s.Style(ctx, j.StyleID)
		if err != nil {
			return nil, err
		}
		pr, err := price(*j.ProviderID, j.Model)
		if err != nil {
			return nil, err
		}
		jid := j.ID
		out = append(out, RunJudge{Position: i, Name: j.Name, ProviderID: j.ProviderID, ProviderName: p.Name, Model: j.Model,
			Settings: j.Settings, JudgeID: &jid, JudgeVersion: j.Version, PersonalityName: j.PersonalityName,
			PersonalityDescription: j.PersonalityDescription, Price: pr}.withStyle(st))
	}
	for i := 1; i < len(out); i++ {
		if out[i].ScaleMin != out[0].ScaleMin || out[i].ScaleMax != out[0].ScaleMax {
			return nil, invalid("judge_ids", "judges of a panel must share a scoring scale: %q scores %d–%d, %q %d–%d",
				out[0].Name, out[0].ScaleMin, out[0].ScaleMax, out[i].Name, out[i].ScaleMin, out[i].ScaleMax)
		}
	}
	return out, nil
}

func (j RunJudge) withStyle(st *JudgementStyle) RunJudge {
	id := st.ID
	j.StyleID, j.StyleName, j.StyleVersion = &id, st.Name, st.Version
	j.ScaleMin, j.ScaleMax, j.Metrics, j.PromptTemplate = st.ScaleMin, st.ScaleMax, st.Metrics, st.PromptTemplate
	return j
}

// checkRunMetrics refuses metric names that neither a judge nor a check scores.
func checkRunMetrics(metrics []string, judges []RunJudge) error {
	known := map[string]bool{"score": true}
	for _, m := range MeasuredMetrics {
		known[m] = true
	}
	for _, t := range CheckTypes {
		known["check_"+t] = true
	}
	for _, j := range judges {
		for _, m := range j.Metrics {
			known[m.Name] = true
		}
	}
	for i, m := range metrics {
		if !known[m] {
			return invalid(fmt.Sprintf("metrics[%d]", i), "%q is neither a metric of the run's judges nor a check (check_<type>)", m)
		}
	}
	return nil
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

// checkItemLimit refuses a run of more than maxItems items (tasks × targets
// × repeats) before any of its rows is written.
func (s *Store) checkItemLimit(tasks int64, targets, repeats int) error {
	if n := tasks * int64(targets) * int64(repeats); n > int64(s.maxItems) {
		return invalid("", "a run of %d items exceeds --max-run-items (%d)", n, s.maxItems)
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
	Status       RunStatus
	Tag          string     // runs carrying this tag
	CollectionID int64      // runs that drew tasks from this collection
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

// RunJudges lists a run's judges in order.
func (s *Store) RunJudges(ctx context.Context, runID int64) ([]RunJudge, error) {
	var js []RunJudge
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("position").Find(&js).Error; err != nil {
		return nil, fmt.Errorf("store: run judges: %w", err)
	}
	return js, nil
}

// DeleteRun marks a run deleted: from then on it is in no list, lookup,
// claim, trend or baseline, and PurgeDeletedRuns removes its rows in
// batches. Deleting them here, in one statement, took 98 s for a run of 400k
// items, and SQLite's one connection served no request meanwhile.
func (s *Store) DeleteRun(ctx context.Context, id int64) error {
	return s.Transact(ctx, func(tx *Store) error {
		res := tx.conn(ctx).Delete(&Run{}, id) // soft: sets deleted_at
		if res.Error != nil {
			return fmt.Errorf("store: delete run: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("store: delete run: %w", &NotFoundError{What: "run", ID: id})
		}
		// The few rows KPIs, alerts and trends read go at once, so none of
		// their queries needs to know about deleted runs.
		for _, table := range []string{"run_metrics", "kpi_values", "run_evaluations", "run_summaries"} {
			if err := tx.conn(ctx).Exec("DELETE FROM "+table+" WHERE run_id = ?", id).Error; err != nil {
				return fmt.Errorf("store: delete run %s: %w", table, err)
			}
		}
		return nil
	})
}

// purgeBatch is how many rows one purge transaction deletes: small enough
// that a request waiting for SQLite's connection waits a fraction of a
// second (an item takes its scores and grade with it).
const purgeBatch = 1000

// PurgeDeletedRuns deletes one batch of the rows of a run marked deleted
// and reports whether any such run was left; the caller repeats it,
// pausing between batches so other requests get the connection.
func (s *Store) PurgeDeletedRuns(ctx context.Context) (bool, error) {
	var ids []int64
	if err := s.conn(ctx).Unscoped().Model(&Run{}).Where("deleted_at IS NOT NULL").Order("id").Limit(1).Pluck("id", &ids).Error; err != nil {
		return false, fmt.Errorf("store: deleted runs: %w", err)
	}
	if len(ids) == 0 {
		return false, nil
	}
	id := ids[0]
	// Children before parents: comparisons cite items, items cite run_tasks.
	for _, table := range []string{"comparisons", "items", "run_logs", "run_tasks"} {
		res := s.conn(ctx).Exec("DELETE FROM "+table+" WHERE id IN (SELECT id FROM "+table+" WHERE run_id = ? LIMIT ?)", id, purgeBatch)
		if res.Error != nil {
			return false, fmt.Errorf("store: purge run %d %s: %w", id, table, res.Error)
		}
		if res.RowsAffected > 0 {
			return true, nil
		}
	}
	// What is left (targets, judges, collections) is small: the run row takes it along.
	if err := s.conn(ctx).Unscoped().Delete(&Run{}, id).Error; err != nil {
		return false, fmt.Errorf("store: purge run %d: %w", id, err)
	}
	return true, nil
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

// EndRun marks a RUNNING run FINISHED or FAILED, but only while none of its
// items (or pairwise comparisons) is still to do: checked in the same
// statement, so an item sent back meanwhile (retry judging) keeps the run
// running. The closing log entry commits with the status, so whoever sees
// the run over sees its last entry too. It reports whether the run ended.
func (s *Store) EndRun(ctx context.Context, id int64, to RunStatus, reason string, entry *RunLog) (bool, error) {
	ended := false
	err := s.Transact(ctx, func(tx *Store) error {
		now := s.now()
		res := tx.conn(ctx).Model(&Run{}).
			Where("id = ? AND status = ?", id, RunRunning).
			Where("NOT EXISTS (SELECT 1 FROM items WHERE items.run_id = ? AND items.status NOT IN ('COMPLETED', 'FAILED'))", id).
			Where("NOT EXISTS (SELECT 1 FROM comparisons WHERE comparisons.run_id = ? AND comparisons.status IN ('NEW', 'JUDGING'))", id).
			Updates(map[string]any{"status": to, "error": reason, "finished_at": now, "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("store: end run: %w", res.Error)
		}
		if ended = res.RowsAffected == 1; !ended || entry == nil {
			return nil
		}
		return tx.AppendLog(ctx, entry)
	})
	return ended, err
}

// SetRunPhase moves a run to the judging phase once benchmarking is done.
func (s *Store) SetRunPhase(ctx context.Context, id int64, phase Phase) error {
	err := s.conn(ctx).Model(&Run{}).Where("id = ?", id).Updates(map[string]any{"phase": phase, "updated_at": s.now()}).Error
	if err != nil {
		return fmt.Errorf("store: set run phase: %w", err)
	}
	return nil
}

// RerunRun creates a new run from an earlier run's frozen tasks, targets,
// judges and options, so it repeats the earlier run exactly even after the
// tasks, providers or judges have been edited since.
func (s *Store) RerunRun(ctx context.Context, sourceID int64, triggeredBy, snapshot string) (*Run, error) {
	var runID int64
	err := s.Transact(ctx, func(tx *Store) error {
		src, err := tx.Run(ctx, sourceID)
		if err != nil {
			return err
		}
		if err := tx.checkActiveLimit(ctx, 0); err != nil {
			return err
		}
		var tasks int64
		if err := tx.conn(ctx).Model(&RunTask{}).Where("run_id = ?", src.ID).Count(&tasks).Error; err != nil {
			return fmt.Errorf("store: rerun: %w", err)
		}
		if err := tx.checkItemLimit(tasks, len(src.Targets), max(src.Repeats, 1)); err != nil {
			return err
		}
		now := s.now()
		srcID := src.ID
		run := Run{Name: src.Name + " (re-run)", Status: RunPending, Phase: PhaseBenchmarking, TriggeredBy: triggeredBy,
			Snapshot: snapshot, Repeats: max(src.Repeats, 1), Options: src.Options, Tags: src.Tags, SourceRunID: &srcID, CreatedAt: now, UpdatedAt: now}
		if err := tx.conn(ctx).Omit("Targets", "Judges", "Collections").Create(&run).Error; err != nil {
			return fmt.Errorf("store: rerun: %w", err)
		}
		runID = run.ID
		for _, c := range src.Collections {
			if err := tx.conn(ctx).Create(&RunCollection{RunID: run.ID, CollectionID: c.CollectionID, CollectionName: c.CollectionName}).Error; err != nil {
				return fmt.Errorf("store: rerun collections: %w", err)
			}
		}
		targets := src.Targets
		for i := range targets {
			t := &targets[i]
			t.ID, t.RunID, t.WarmupStatus, t.WarmupError, t.WarmupWorker, t.WarmupUntil = 0, run.ID, WarmupPending, "", "", nil
		}
		if err := tx.conn(ctx).Create(&targets).Error; err != nil {
			return fmt.Errorf("store: rerun targets: %w", err)
		}
		judges := src.Judges
		for i := range judges {
			judges[i].ID, judges[i].RunID = 0, run.ID
		}
		if len(judges) > 0 {
			if err := tx.conn(ctx).Create(&judges).Error; err != nil {
				return fmt.Errorf("store: rerun judges: %w", err)
			}
		}
		err = tx.conn(ctx).Exec(`INSERT INTO run_tasks (run_id, task_id, `+runTaskColumns+`)
			SELECT ?, task_id, `+runTaskColumns+` FROM run_tasks WHERE run_id = ? ORDER BY id`, run.ID, src.ID).Error
		if err != nil {
			return fmt.Errorf("store: rerun tasks: %w", err)
		}
		return tx.createItems(ctx, run.ID, run.Repeats, now)
	})
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, runID)
}
