package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ImportedRun is what an IMPORTED run is made of beside its judges and
// checks: where its answers came from (one target per model or dataset
// run) and the answers themselves.
type ImportedRun struct {
	Targets []ImportedTarget
	Answers []ImportedAnswer
}

// ImportedTarget is one origin of answers: a model named in a file of
// outputs, or a trace source's dataset run (Source).
type ImportedTarget struct {
	Provider string // who produced the answers, for people: "Langfuse", "imported"
	Model    string
	Source   *RunSource
}

// ImportedAnswer is one answer (or, with Response nil, the reason there is
// none) of one target to one task.
type ImportedAnswer struct {
	TaskKey          string
	Target           int // index into ImportedRun.Targets
	Response         *string
	Error            string // why there is no answer (Response nil): the item fails with it
	TimeMs           *int64
	PromptTokens     *int64
	CompletionTokens *int64
	CostUSD          *float64
}

// maxImportedTargets bounds the models of one import, like a run's targets.
const maxImportedTargets = 50

func (im *ImportedRun) validate() error {
	switch {
	case len(im.Targets) == 0:
		return invalid("targets", "the import names no model")
	case len(im.Targets) > maxImportedTargets:
		return invalid("targets", "an import has at most %d models", maxImportedTargets)
	case len(im.Answers) == 0:
		return invalid("answers", "the import has no answers")
	}
	for i, a := range im.Answers {
		if a.Target < 0 || a.Target >= len(im.Targets) {
			return fmt.Errorf("store: imported answer %d names target %d of %d", i, a.Target, len(im.Targets))
		}
	}
	return nil
}

// AlreadyImportedError is the conflict of importing a dataset run twice.
type AlreadyImportedError struct {
	RunID  int64
	Source RunSource
}

func (e *AlreadyImportedError) Error() string {
	return fmt.Sprintf("dataset run %q of %q is already imported, in run %d (send \"rejudge\": true to judge it again)",
		e.Source.Run, e.Source.Dataset, e.RunID)
}

// Is makes it an ErrConflict (409).
func (e *AlreadyImportedError) Is(target error) bool { return target == ErrConflict }

// CreateImportedRun saves an import in one transaction, all or nothing: its
// tasks (created, or updated by task_id) in the named collection, and an
// IMPORTED run of them whose items hold their answers. The engine then
// scores the answers — checks, then judges — like any run's. A dataset run
// already imported is refused with an AlreadyImportedError.
func (s *Store) CreateImportedRun(ctx context.Context, in RunInput, tasks ImportInput, imported ImportedRun) (*Run, *ImportResult, error) {
	var run *Run
	var res *ImportResult
	err := s.Transact(ctx, func(tx *Store) error {
		for _, t := range imported.Targets {
			if t.Source == nil {
				continue
			}
			if id, err := tx.ImportedRunOf(ctx, *t.Source); err != nil || id != 0 {
				if err == nil {
					err = &AlreadyImportedError{RunID: id, Source: *t.Source}
				}
				return err
			}
		}
		var err error
		if res, err = tx.UpsertTasks(ctx, tasks); err != nil {
			return err
		}
		in.CollectionIDs = []int64{res.Collection.ID}
		in.TaskIDs = make([]TaskRef, len(res.TaskIDs))
		for i, key := range res.TaskIDs {
			in.TaskIDs[i] = TaskRef{Key: key}
		}
		in.imported, in.Targets = &imported, nil // the answers' origins are the targets
		run, err = tx.CreateRun(ctx, in)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return run, res, nil
}

// ImportedRunOf names the live run that holds a dataset run, or 0.
func (s *Store) ImportedRunOf(ctx context.Context, src RunSource) (int64, error) {
	var ids []int64
	err := s.conn(ctx).Model(&RunTarget{}).Where("source_key = ? AND run_id IN (?)", src.Key(),
		s.conn(ctx).Model(&Run{}).Select("id")).Order("run_id").Limit(1).Pluck("run_id", &ids).Error
	if err != nil {
		return 0, fmt.Errorf("store: imported run: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}

// importedTargets are the run targets of an import: nothing to warm up
// (none without an import).
func importedTargets(im *ImportedRun) []RunTarget {
	if im == nil {
		return nil
	}
	out := make([]RunTarget, len(im.Targets))
	for i, t := range im.Targets {
		out[i] = RunTarget{Position: i, ProviderName: t.Provider, Model: t.Model, WarmupStatus: WarmupOK, Imported: true, Source: t.Source}
		if t.Source != nil {
			out[i].SourceKey = t.Source.Key()
		}
	}
	return out
}

// createImportedItems makes one item per answer, holding it: NEW for the
// engine to score, or FAILED with the reason there is no answer.
func (s *Store) createImportedItems(ctx context.Context, runID int64, im *ImportedRun, now time.Time) error {
	var tasks []RunTask
	if err := s.conn(ctx).Select("id", "task_key").Where("run_id = ?", runID).Find(&tasks).Error; err != nil {
		return fmt.Errorf("store: imported items: %w", err)
	}
	taskOf := make(map[string]int64, len(tasks))
	for _, t := range tasks {
		taskOf[t.TaskKey] = t.ID
	}
	var targets []RunTarget
	if err := s.conn(ctx).Select("id", "position").Where("run_id = ?", runID).Order("position").Find(&targets).Error; err != nil {
		return fmt.Errorf("store: imported items: %w", err)
	}
	items := make([]Item, 0, len(im.Answers))
	for _, a := range im.Answers {
		taskID, ok := taskOf[a.TaskKey]
		if !ok {
			return fmt.Errorf("store: imported answer for task %q, which the run did not freeze", a.TaskKey)
		}
		it := Item{RunID: runID, RunTaskID: taskID, RunTargetID: targets[a.Target].ID, RepeatIndex: 1, Status: ItemNew, Request: "{}",
			Response: a.Response, TimeMs: a.TimeMs, PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens,
			CostUSD: a.CostUSD, UpdatedAt: now}
		if a.Response == nil {
			it.Status, it.FailedPhase = ItemFailed, string(PhaseBenchmarking)
			it.Error = strings.TrimSpace(a.Error)
			if it.Error == "" {
				it.Error = "no answer was imported"
			}
		} else {
			r := storable(*a.Response)
			it.Response = &r
		}
		items = append(items, it)
	}
	// Under the run-start lock (CreateRun's checkActiveLimit), as every
	// insert of items must be: see reserveItemIDs.
	if err := s.conn(ctx).CreateInBatches(items, 500).Error; err != nil {
		return fmt.Errorf("store: imported items: %w", err)
	}
	return nil
}

// RejudgeRun sends every answered item of an ended run back to its first
// judge, its verdicts forgotten, and runs it again: the judging of an
// import, done afresh. An active run is refused.
func (s *Store) RejudgeRun(ctx context.Context, runID int64) (int64, error) {
	var n int64
	err := s.Transact(ctx, func(tx *Store) error {
		run, err := tx.Run(ctx, runID)
		if err != nil {
			return err
		}
		if run.Active() {
			return conflict("run %d is still %s: judge it again once it ended", runID, run.Status)
		}
		if len(run.Judges) == 0 {
			return conflict("run %d has no judges to judge it again", runID)
		}
		if err := tx.checkActiveLimit(ctx, runID); err != nil {
			return err
		}
		answered := tx.conn(ctx).Model(&Item{}).Select("id").
			Where("run_id = ? AND response IS NOT NULL AND (status = ? OR failed_phase = ?)", runID, ItemCompleted, PhaseJudging)
		if err := tx.conn(ctx).Where("item_id IN (?) AND run_judge_id IS NOT NULL", answered).Delete(&Score{}).Error; err != nil {
			return fmt.Errorf("store: rejudge: %w", err)
		}
		if err := tx.conn(ctx).Where("item_id IN (?)", answered).Delete(&Violation{}).Error; err != nil {
			return fmt.Errorf("store: rejudge: %w", err)
		}
		now := s.now()
		// The items' overalls lose their judges' part: unknown until read
		// again (FillItemOveralls), as their checks' part is in their scores.
		res := tx.conn(ctx).Model(&Item{}).Where("id IN (?)", answered).Updates(map[string]any{"status": ItemWaitingForJudge,
			"judge_pos": 0, "score": nil, "overall_sum": nil, "overall_weight": nil, "judge_cost_usd": 0, "judge_cost_source": "", "judge_attempts": 0, "failed_phase": "", "error": "", "failures": 0,
			"next_retry_at": nil, "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("store: rejudge: %w", res.Error)
		}
		if n = res.RowsAffected; n == 0 {
			return conflict("run %d has no answers to judge", runID)
		}
		if err := tx.dropSnapshots(ctx, runID); err != nil {
			return fmt.Errorf("store: rejudge: %w", err)
		}
		return tx.reopenForJudging(ctx, run, now)
	})
	return n, err
}
