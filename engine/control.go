package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"tribunal/store"
)

// snapshot records how a run was asked for and the engine constants that
// shape its calls. The run's frozen tasks, targets and judges (with their
// style versions and prompt templates) hold the rest, so a re-run repeats it exactly.
type snapshot struct {
	JudgeContract string         `json:"judge_contract"`
	WarmupPrompt  string         `json:"warmup_prompt"`
	MaxAttempts   int            `json:"max_attempts"`
	Input         store.RunInput `json:"input"`
	RerunOf       int64          `json:"rerun_of,omitempty"`
}

// JudgeContract names how judges are asked and answered (package rubric).
const JudgeContract = "tribunal-rubric-v2 (style template, per-metric JSON schema)"

func (e *Engine) snapshot(in store.RunInput, rerunOf int64) (string, error) {
	b, err := json.Marshal(snapshot{JudgeContract: JudgeContract, WarmupPrompt: WarmupPrompt,
		MaxAttempts: e.cfg.MaxAttempts, Input: in, RerunOf: rerunOf})
	if err != nil {
		return "", fmt.Errorf("engine: snapshot: %w", err)
	}
	return string(b), nil
}

// StartRun creates a run with its items and wakes the engine to start it at once.
func (e *Engine) StartRun(ctx context.Context, in store.RunInput) (*store.Run, error) {
	snap, err := e.snapshot(in, 0)
	if err != nil {
		return nil, err
	}
	in.Snapshot = snap
	run, err := e.store.CreateRun(ctx, in)
	if err != nil {
		return nil, err
	}
	// Who started it (run.TriggeredBy) is on the run; a schedule adds its own line.
	e.logRun(ctx, run.ID, store.LogInfo, "run", "Run created", "")
	e.Refresh()
	return run, nil
}

// Rerun starts a new run with exactly the settings of an earlier one: its
// frozen tasks, targets, judges, style versions and options.
func (e *Engine) Rerun(ctx context.Context, id int64, triggeredBy string) (*store.Run, error) {
	src, err := e.store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	var old snapshot
	_ = json.Unmarshal([]byte(src.Snapshot), &old) // runs from before snapshots had inputs rerun from their rows alone
	snap, err := e.snapshot(old.Input, id)
	if err != nil {
		return nil, err
	}
	run, err := e.store.RerunRun(ctx, id, triggeredBy, snap)
	if err != nil {
		return nil, err
	}
	e.logRun(ctx, run.ID, store.LogInfo, "run", fmt.Sprintf("Run created: a re-run of run %d with the same settings", id), "")
	e.Refresh()
	return run, nil
}

// Pause stops claiming new items of a run; the call in flight finishes.
func (e *Engine) Pause(ctx context.Context, id int64) (*store.Run, error) {
	return e.transition(ctx, id, store.RunPaused, "Run paused", store.RunPending, store.RunRunning)
}

// Resume continues a paused run from its next unfinished item.
func (e *Engine) Resume(ctx context.Context, id int64) (*store.Run, error) {
	run, err := e.transition(ctx, id, store.RunRunning, "Run resumed", store.RunPaused)
	if err == nil {
		e.Refresh()
	}
	return run, err
}

// Cancel stops a run for good.
func (e *Engine) Cancel(ctx context.Context, id int64) (*store.Run, error) {
	return e.transition(ctx, id, store.RunCancelled, "Run cancelled", store.RunPending, store.RunRunning, store.RunPaused)
}

func (e *Engine) transition(ctx context.Context, id int64, to store.RunStatus, msg string, from ...store.RunStatus) (*store.Run, error) {
	run, err := e.store.SetRunStatus(ctx, id, to, from...)
	if errors.Is(err, store.ErrConflict) && run != nil && run.Status == to {
		return run, nil // already there: asking twice is fine
	}
	if err != nil {
		return run, err
	}
	e.logRun(ctx, id, store.LogInfo, "run", msg, "")
	e.changed(id)
	e.Refresh()
	return run, nil
}

// RetryJudging sends the items whose judging failed back to the judge.
func (e *Engine) RetryJudging(ctx context.Context, id int64) (int64, error) {
	n, err := e.store.RetryJudging(ctx, id)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		e.logRun(ctx, id, store.LogInfo, "run", fmt.Sprintf("Retrying judging of %d failed item(s)", n), "")
		e.Refresh()
	}
	return n, nil
}

// RetryFailed sends an ended run's failed items back to the phase they
// failed in (see store.RetryFailed) and starts the run again.
func (e *Engine) RetryFailed(ctx context.Context, id int64) (int64, error) {
	n, err := e.store.RetryFailed(ctx, id)
	if err != nil || n == 0 {
		return n, err
	}
	// Its targets warm up afresh: forget the ones this process remembers as warm.
	e.mu.Lock()
	delete(e.runs, id)
	e.mu.Unlock()
	e.logRun(ctx, id, store.LogInfo, "run", fmt.Sprintf("Retrying %d failed item(s), each in the phase it failed in", n), "")
	e.changed(id)
	e.Refresh()
	return n, nil
}

// Rejudge sends an ended run's answers back to its judges, their verdicts forgotten.
func (e *Engine) Rejudge(ctx context.Context, id int64) (int64, error) {
	n, err := e.store.RejudgeRun(ctx, id)
	if err != nil {
		return 0, err
	}
	e.logRun(ctx, id, store.LogInfo, "run", fmt.Sprintf("Judging %d answer(s) again", n), "")
	e.Refresh()
	e.changed(id)
	return n, nil
}
