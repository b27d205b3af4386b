package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"tribunal/store"
)

// snapshot is what decides a run's scores, frozen into the run at creation
// so the results can be explained and the run repeated exactly.
type snapshot struct {
	JudgeContract     string           `json:"judge_contract"`
	JudgeSystemPrompt string           `json:"judge_system_prompt"`
	JudgeSchema       json.RawMessage  `json:"judge_schema"`
	WarmupPrompt      string           `json:"warmup_prompt"`
	MaxAttempts       int              `json:"max_attempts"`
	Judge             store.ModelRef   `json:"judge"`
	Targets           []store.ModelRef `json:"targets"`
	CollectionIDs     []int64          `json:"collection_ids"`
}

// StartRun creates a run with its items and wakes the engine to start it at once.
func (e *Engine) StartRun(ctx context.Context, in store.RunInput) (*store.Run, error) {
	snap := snapshot{JudgeContract: JudgeContract, JudgeSystemPrompt: judgeSystemPrompt, JudgeSchema: JudgeSchema,
		WarmupPrompt: WarmupPrompt, MaxAttempts: e.cfg.MaxAttempts, Targets: in.Targets, CollectionIDs: in.CollectionIDs}
	if in.Judge != nil {
		snap.Judge = *in.Judge
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return nil, fmt.Errorf("engine: snapshot: %w", err)
	}
	in.Snapshot = string(b)
	run, err := e.store.CreateRun(ctx, in)
	if err != nil {
		return nil, err
	}
	e.logRun(ctx, run.ID, store.LogInfo, "run", fmt.Sprintf("Run created by %s", run.TriggeredBy), "")
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
