package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// CreateRun creates the run with its frozen tasks, targets and judges, and
// one item per (task, target, repeat), all in one transaction. It refuses
// with ErrConflict while the active-run limit is reached.
func (s *Store) CreateRun(ctx context.Context, in RunInput) (*Run, error) {
	if in.Source != nil && in.imported == nil {
		return nil, invalid("source", "a dataset run is imported with POST /api/sources/{id}/import (or a schedule's template)")
	}
	if err := in.normalize(); err != nil {
		return nil, err
	}
	if in.Judge == nil && len(in.JudgeIDs) == 0 && !in.checksOnly() {
		return nil, invalid("judge.provider_id", "is required: pick a judge or a panel (judge_ids), or set metrics to reference checks only")
	}
	var fill itemFill
	runID, err := s.createRun(ctx, &fill, func(tx *Store) error {
		if err := tx.checkActiveLimit(ctx, 0); err != nil {
			return err
		}
		tasks, err := tx.runTaskCount(ctx, in)
		if err != nil {
			return err
		}
		if in.imported != nil {
			tasks, in.Repeats = int64(len(in.imported.Answers)), 1 // one item per answer
		}
		if err := tx.checkItemLimit(tasks, max(len(in.Targets), 1), in.Repeats); err != nil {
			return err
		}
		provider, price := tx.lookups(ctx)
		judges, err := tx.panel(ctx, in, provider, price)
		if err != nil {
			return err
		}
		if err := checkRunMetrics(in.Metrics, judges); err != nil {
			return err
		}
		targets := importedTargets(in.imported)
		if in.imported == nil {
			if targets, err = tx.runTargets(ctx, in, provider, price); err != nil {
				return err
			}
		}
		if err := tx.checkTaskGroups(ctx, in); err != nil {
			return err
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
		kind := RunBenchmark
		if in.imported != nil {
			kind = RunImported
		}
		run := Run{Name: in.Name, Kind: kind, Status: RunPending, Phase: PhaseBenchmarking, TriggeredBy: in.TriggeredBy,
			Snapshot: in.Snapshot, Repeats: in.Repeats, ScheduleID: in.ScheduleID, CreatedAt: now, UpdatedAt: now,
			Options: RunOptions{Metrics: in.Metrics, Weights: in.Weights, SourceWeights: in.SourceWeights, SystemPrompt: in.SystemPrompt, Pairwise: in.Pairwise, Pipeline: in.Pipeline, MaxCostUSD: in.MaxCostUSD,
				UseCases: in.UseCases, Categories: in.Categories}, Tags: in.Tags}
		if err := tx.conn(ctx).Omit("Targets", "Judges", "Collections").Create(&run).Error; err != nil {
			return fmt.Errorf("store: create run: %w", err)
		}
		fill.runID = run.ID
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
		if in.imported != nil {
			return tx.createImportedItems(ctx, run.ID, in.imported, now)
		}
		fill.repeats, fill.now = in.Repeats, now
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, runID)
}

// lookups reads the providers and model prices a run names, each once.
func (s *Store) lookups(ctx context.Context) (func(string, int64) (*Provider, error), func(int64, string) (Price, error)) {
	providers := map[int64]*Provider{}
	provider := func(field string, id int64) (*Provider, error) {
		if p, ok := providers[id]; ok {
			return p, nil
		}
		var p Provider
		if err := s.conn(ctx).Take(&p, id).Error; err != nil {
			if err == gorm.ErrRecordNotFound {
				return nil, invalid(field, "no provider with id %d", id)
			}
			return nil, fmt.Errorf("store: create run: %w", err)
		}
		providers[id] = &p
		return &p, nil
	}
	price := func(providerID int64, model string) (Price, error) {
		pr, err := s.ModelPrice(ctx, providerID, model)
		if err != nil || pr == nil {
			return Price{}, err
		}
		return Price{InputPerMTok: &pr.InputPerMTok, OutputPerMTok: &pr.OutputPerMTok}, nil
	}
	return provider, price
}

// runTargets resolves a run's targets as they will be frozen: each model's
// provider and price, each agent's version (see agentTarget).
func (s *Store) runTargets(ctx context.Context, in RunInput, provider func(string, int64) (*Provider, error),
	price func(int64, string) (Price, error)) ([]RunTarget, error) {
	targets := make([]RunTarget, len(in.Targets))
	for i, t := range in.Targets {
		if t.AgentID != 0 {
			tg, err := s.agentTarget(ctx, fmt.Sprintf("targets[%d].agent_id", i), t.AgentID, provider, price)
			if err != nil {
				return nil, err
			}
			tg.Position, tg.Tags = i, t.Tags
			targets[i] = *tg
			continue
		}
		p, err := provider(fmt.Sprintf("targets[%d].provider_id", i), t.ProviderID)
		if err != nil {
			return nil, err
		}
		pr, err := price(t.ProviderID, t.Model)
		if err != nil {
			return nil, err
		}
		pid := t.ProviderID
		targets[i] = RunTarget{Position: i, ProviderID: &pid, ProviderName: p.Name, Model: t.Model, Version: t.Version,
			Settings: t.Settings, Tags: t.Tags, WarmupStatus: WarmupPending, Price: pr}
	}
	return targets, nil
}

// runTaskColumns are the task columns a run freezes.
const runTaskColumns = `task_key, category, subcategory, question, excellent, good, pass, incorrect_answer_direction,
	reference, turns, system_prompt, usecase, tags, constraints, examples, judge_instructions, comments, checks, input, prompt_template`

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
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
	j.AsksViolations = st.AsksViolations
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
		if err := s.conn(ctx).Exec("SELECT pg_advisory_xact_lock(?)", runStartLock).Error; err != nil {
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
		return tx.reopenForJudging(ctx, run, now)
	})
	return n, err
}

// reopenForJudging puts a run whose items went back to the judges in its
// judging phase, RUNNING again if it had ended. It is guarded by the status
// read before, so a cancel that lands meanwhile wins.
func (s *Store) reopenForJudging(ctx context.Context, run *Run, now time.Time) error {
	status := run.Status
	if !run.Active() {
		status = RunRunning
	}
	res := s.conn(ctx).Model(&Run{}).Where("id = ? AND status = ?", run.ID, run.Status).Updates(map[string]any{
		"status": status, "phase": PhaseJudging, "finished_at": nil, "error": "", "updated_at": now})
	if res.Error != nil {
		return fmt.Errorf("store: reopen run %d for judging: %w", run.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return conflict("run %d changed meanwhile; try again", run.ID)
	}
	return nil
}

func uniq(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// RunJudges lists a run's judges in order.
func (s *Store) RunJudges(ctx context.Context, runID int64) ([]RunJudge, error) {
	var js []RunJudge
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("position").Find(&js).Error; err != nil {
		return nil, fmt.Errorf("store: run judges: %w", err)
	}
	return js, nil
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
	var fill itemFill
	runID, err := s.createRun(ctx, &fill, func(tx *Store) error {
		src, err := tx.Run(ctx, sourceID)
		if err != nil {
			return err
		}
		if src.Kind == RunImported {
			return &ConflictError{Message: fmt.Sprintf("run %d holds imported answers, which cannot be asked for again: retry its judging, or import again", src.ID)}
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
		run := Run{Name: src.Name + " (re-run)", Kind: RunBenchmark, Status: RunPending, Phase: PhaseBenchmarking, TriggeredBy: triggeredBy,
			Snapshot: snapshot, Repeats: max(src.Repeats, 1), Options: src.Options, Tags: src.Tags, SourceRunID: &srcID, CreatedAt: now, UpdatedAt: now}
		if err := tx.conn(ctx).Omit("Targets", "Judges", "Collections").Create(&run).Error; err != nil {
			return fmt.Errorf("store: rerun: %w", err)
		}
		fill.runID = run.ID
		for _, c := range src.Collections {
			if err := tx.conn(ctx).Create(&RunCollection{RunID: run.ID, CollectionID: c.CollectionID, CollectionName: c.CollectionName}).Error; err != nil {
				return fmt.Errorf("store: rerun collections: %w", err)
			}
		}
		targets := src.Targets
		for i := range targets {
			t := &targets[i]
			t.ID, t.RunID, t.WarmupStatus, t.WarmupError, t.WarmupWorker, t.WarmupUntil = 0, run.ID, WarmupPending, "", "", nil
			if t.VersionReported { // the provider says again which build answers this run
				t.Version, t.VersionReported = "", false
			}
			// An agent keeps its frozen version; its tools are listed again at warm-up.
			t.Tools = nil
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
		// The re-run keeps the use cases' fields its source froze.
		err = tx.conn(ctx).Exec(`INSERT INTO run_tasks (run_id, task_id, `+runTaskColumns+`, usecase_fields)
			SELECT ?, task_id, `+runTaskColumns+`, usecase_fields FROM run_tasks WHERE run_id = ? ORDER BY id`, run.ID, src.ID).Error
		if err != nil {
			return fmt.Errorf("store: rerun tasks: %w", err)
		}
		fill.repeats, fill.now = run.Repeats, now
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, runID)
}
