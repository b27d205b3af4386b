package store

import (
	"context"
	"fmt"
	"math"
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

// EstimateTask is what a task sends: its texts, measured for a cost estimate.
type EstimateTask struct {
	SystemPrompt string
	Question     string
	Turns        []string `gorm:"serializer:json"`
	Reference    string
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
	q := s.conn(ctx).Model(&Task{}).Select("system_prompt, question, turns, reference").Order("task_key")
	if in.picksAll() {
		pool, args := in.taskPool()
		q = q.Where(pool, args...)
		if err := q.Find(&out.Tasks).Error; err != nil {
			return nil, fmt.Errorf("store: estimate tasks: %w", err)
		}
		return out, nil
	}
	ids, err := s.pickTasks(ctx, in)
	if err != nil {
		return nil, err
	}
	err = inChunks(ids, func(part []int64) error {
		var tasks []EstimateTask
		if err := s.conn(ctx).Model(&Task{}).Select("system_prompt, question, turns, reference").
			Where("id IN ?", part).Order("task_key").Find(&tasks).Error; err != nil {
			return fmt.Errorf("store: estimate tasks: %w", err)
		}
		out.Tasks = append(out.Tasks, tasks...)
		return nil
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
