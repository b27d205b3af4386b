package store

import (
	"context"
	"fmt"
	"math"

	"gorm.io/gorm"

	"tribunal/prompt"
)

// ValidBudget refuses a negative or non-finite budget; nil (none) is fine.
func ValidBudget(field string, usd *float64) error {
	if usd != nil && (*usd < 0 || math.IsNaN(*usd) || math.IsInf(*usd, 0) || *usd > 1e9) {
		return invalid(field, "must be a number of USD within 0…1,000,000,000")
	}
	return nil
}

// RunSpend is what a run has cost so far: its answers' and judges' cost in USD.
func (s *Store) RunSpend(ctx context.Context, runID int64) (float64, error) {
	var usd float64
	err := s.conn(ctx).Raw(`SELECT COALESCE(SUM(COALESCE(cost_usd, 0) + judge_cost_usd), 0) FROM items WHERE run_id = ?`,
		runID).Scan(&usd).Error
	if err != nil {
		return 0, fmt.Errorf("store: run spend: %w", err)
	}
	return usd, nil
}

// SetRunBudget changes a run's budget (max_cost_usd; nil removes it), the
// one option that may change while the run is active.
func (s *Store) SetRunBudget(ctx context.Context, id int64, usd *float64) (*Run, error) {
	if err := ValidBudget("max_cost_usd", usd); err != nil {
		return nil, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		r, err := tx.Run(ctx, id)
		if err != nil {
			return err
		}
		r.Options.MaxCostUSD = usd
		if err := tx.conn(ctx).Model(&Run{ID: id}).Select("options", "updated_at").
			Updates(&Run{Options: r.Options, UpdatedAt: s.now()}).Error; err != nil {
			return fmt.Errorf("store: set run budget: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, id)
}

// EstimateTask is what a task sends, measured for a cost estimate: the
// characters of each user turn as the model gets it (the first built by
// package prompt, as Task.SentPrompt builds it, with what its saved use
// case adds), and the texts a judge reads.
type EstimateTask struct {
	SystemPrompt string
	Question     string
	Reference    string
	TurnChars    []int
}

// estimateTask measures t; ucs holds the saved use cases' prompt fields.
func estimateTask(ctx context.Context, t *Task, ucs map[string]prompt.UseCase) EstimateTask {
	first, err := t.SentPrompt(ctx, ucs[t.UseCase])
	if err != nil {
		// A template that fails to render fails the item at run time, as
		// the run page says; the estimate counts the question alone.
		first = t.Question
		if len(t.Turns) > 0 {
			first = t.Turns[0]
		}
	}
	et := EstimateTask{SystemPrompt: t.SystemPrompt, Question: t.Question, Reference: t.Reference, TurnChars: []int{len(first)}}
	for _, turn := range t.Turns[min(1, len(t.Turns)):] {
		et.TurnChars = append(et.TurnChars, len(turn))
	}
	return et
}

// EstimateBasis is what a run of in would call, read without creating it:
// its tasks, its targets and its judges (prices included).
type EstimateBasis struct {
	Tasks   []EstimateTask
	Targets []RunTarget
	Judges  []RunJudge
}

// EstimateBasis resolves in as CreateRun would (same validation, same task
// pick) but writes nothing.
func (s *Store) EstimateBasis(ctx context.Context, in RunInput) (*EstimateBasis, error) {
	if in.Source != nil {
		return nil, invalid("source", "a dataset run's answers exist already: there is nothing to estimate")
	}
	if err := in.normalize(); err != nil {
		return nil, err
	}
	if in.Judge == nil && len(in.JudgeIDs) == 0 && !in.checksOnly() {
		return nil, invalid("judge.provider_id", "is required: pick a judge or a panel (judge_ids), or set metrics to reference checks only")
	}
	// A use case or category no task has is refused, as CreateRun refuses it.
	if err := s.checkTaskGroups(ctx, in); err != nil {
		return nil, err
	}
	provider, price := s.lookups(ctx)
	judges, err := s.panel(ctx, in, provider, price)
	if err != nil {
		return nil, err
	}
	if err := checkRunMetrics(in.Metrics, judges); err != nil {
		return nil, err
	}
	targets, err := s.runTargets(ctx, in, provider, price)
	if err != nil {
		return nil, err
	}
	out := &EstimateBasis{Judges: judges, Tasks: []EstimateTask{}, Targets: targets}
	var saved []useCaseRow
	if err := s.conn(ctx).Find(&saved).Error; err != nil {
		return nil, fmt.Errorf("store: estimate use cases: %w", err)
	}
	ucs := make(map[string]prompt.UseCase, len(saved))
	for _, uc := range saved {
		ucs[uc.Name] = uc.PromptUseCase()
	}
	// Tasks are read a chunk at a time and only their sizes kept: their
	// input data may be large.
	measure := func(q *gorm.DB) error {
		var tasks []Task
		if err := q.Order("task_key").Find(&tasks).Error; err != nil {
			return fmt.Errorf("store: estimate tasks: %w", err)
		}
		for i := range tasks {
			out.Tasks = append(out.Tasks, estimateTask(ctx, &tasks[i], ucs))
		}
		return nil
	}
	var ids []int64
	if in.picksAll() {
		pool, args := in.taskPool()
		if err := s.conn(ctx).Model(&Task{}).Where(pool, args...).Order("task_key").Pluck("id", &ids).Error; err != nil {
			return nil, fmt.Errorf("store: estimate tasks: %w", err)
		}
	} else if ids, err = s.pickTasks(ctx, in); err != nil {
		return nil, err
	}
	err = inChunks(ids, func(part []int64) error {
		return measure(s.conn(ctx).Model(&Task{}).Where("id IN ?", part))
	})
	return out, err
}

// AvgCompletionTokens is a model's mean completion tokens per answer in
// finished runs, with how many answers it averages (0: none yet).
func (s *Store) AvgCompletionTokens(ctx context.Context, providerID int64, model string) (float64, int64, error) {
	var row struct {
		Avg *float64
		N   int64
	}
	err := s.conn(ctx).Raw(`SELECT AVG(i.completion_tokens) AS avg, COUNT(i.completion_tokens) AS n
		FROM items i JOIN run_targets tg ON tg.id = i.run_target_id JOIN runs r ON r.id = i.run_id
		WHERE tg.provider_id = ? AND tg.model = ? AND r.status = ? AND r.deleted_at IS NULL
		AND i.completion_tokens IS NOT NULL`, providerID, model, RunFinished).Scan(&row).Error
	if err != nil {
		return 0, 0, fmt.Errorf("store: average completion tokens: %w", err)
	}
	if row.Avg == nil {
		return 0, 0, nil
	}
	return *row.Avg, row.N, nil
}
