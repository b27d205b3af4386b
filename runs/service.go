package runs

import (
	"context"
	"fmt"
	"time"

	"tribunal/engine"
	"tribunal/format"
	"tribunal/store"
)

// Service is the use cases of runs. It is safe for concurrent use; its
// caches live as long as it does.
type Service struct {
	store  *store.Store
	engine *engine.Engine
	now    func() time.Time

	// counts keeps ended runs' item counts (see itemCounts).
	counts      stampCache[int64, store.Progress]
	summaries   stampCache[int64, *Summary]
	pace        pace
	analyses    stampCache[int64, Analysis]
	comparisons stampCache[string, cachedComparison]
	// leaderboards keeps pairwise fits by the number of comparisons done (done ones never change).
	leaderboards stampCache[int64, store.PairwiseReport]
	rates        rateBook
}

// New returns the use cases over a store and the engine that runs the work;
// a nil engine serves reading only (summaries and exports).
func New(st *store.Store, eng *engine.Engine) *Service {
	return &Service{store: st, engine: eng, now: time.Now}
}

// StartRun creates a run and sets the engine on it; a template that names
// a trace source (a schedule's) imports its dataset run instead. The
// scheduler starts its runs here too.
func (s *Service) StartRun(ctx context.Context, in store.RunInput) (*store.Run, error) {
	if p := in.Source; p != nil {
		// A schedule's template that pulls a trace source: MOSAICO's loop.
		checks := make([]CheckSpec, len(p.Checks))
		for i, c := range p.Checks {
			checks[i] = CheckSpec(c)
		}
		out, err := s.ImportSource(ctx, p.SourceID, SourceImport{Dataset: p.Dataset, Run: p.Run, Collection: p.Collection,
			Judge: in.Judge, JudgeIDs: in.JudgeIDs, Checks: checks, Name: in.Name, Tags: in.Tags, TriggeredBy: in.TriggeredBy, ScheduleID: in.ScheduleID})
		if err != nil {
			return nil, err
		}
		return s.store.Run(ctx, out.RunID)
	}
	return s.engine.StartRun(ctx, in)
}

// SetBudget changes a run's budget (max_cost_usd); a run paused at its
// budget stays paused until resumed.
func (s *Service) SetBudget(ctx context.Context, id int64, usd *float64) (*store.Run, error) {
	run, err := s.store.SetRunBudget(ctx, id, usd)
	if err == nil && s.engine != nil {
		s.engine.Refresh()
	}
	return run, err
}

// RaiseBudget sets a run's budget to usd through SetBudget (as PATCH
// /api/runs/{id} does) and resumes the run when it is paused and the new
// budget leaves room: the run page's "raise and resume". A budget at or
// below the spend so far is refused, as it would pause the run again.
func (s *Service) RaiseBudget(ctx context.Context, id int64, usd float64) (*store.Run, error) {
	run, err := s.store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	b, err := s.Budget(ctx, run)
	if err != nil {
		return nil, err
	}
	if usd <= b.SpentUSD {
		return nil, &store.ValidationError{Field: "max_cost_usd",
			Message: fmt.Sprintf("must be more than the %s spent so far", format.USD(&b.SpentUSD))}
	}
	if run, err = s.SetBudget(ctx, id, &usd); err != nil {
		return nil, err
	}
	if run.Status != store.RunPaused {
		return run, nil
	}
	return s.Resume(ctx, id)
}

// Budget is a run's spend against its budget.
type Budget struct {
	SpentUSD float64  `json:"spent_usd"`
	MaxUSD   *float64 `json:"max_cost_usd"`
	// Reached: the spend is at the budget or past it (a paused run's reason).
	Reached bool `json:"reached"`
}

// Budget reads a run's spend against its budget.
func (s *Service) Budget(ctx context.Context, run *store.Run) (Budget, error) {
	spent, err := s.store.RunSpend(ctx, run.ID)
	if err != nil {
		return Budget{}, err
	}
	b := Budget{SpentUSD: spent, MaxUSD: run.Options.MaxCostUSD}
	b.Reached = b.MaxUSD != nil && spent >= *b.MaxUSD
	return b, nil
}

// Rerun starts a new run from a run's frozen settings.
func (s *Service) Rerun(ctx context.Context, id int64, triggeredBy string) (*store.Run, error) {
	return s.engine.Rerun(ctx, id, triggeredBy)
}

// Pause stops claiming a run's items; the calls in flight finish.
func (s *Service) Pause(ctx context.Context, id int64) (*store.Run, error) {
	return s.engine.Pause(ctx, id)
}

// Resume lets a paused run go on.
func (s *Service) Resume(ctx context.Context, id int64) (*store.Run, error) {
	return s.engine.Resume(ctx, id)
}

// Cancel ends a run for good.
func (s *Service) Cancel(ctx context.Context, id int64) (*store.Run, error) {
	return s.engine.Cancel(ctx, id)
}

// RetryJudging sends a finished run's items whose judging failed back to the judges.
func (s *Service) RetryJudging(ctx context.Context, id int64) (int64, error) {
	return s.engine.RetryJudging(ctx, id)
}

// RetryFailed sends an ended run's failed items back, each to the phase it
// failed in (a fresh warm-up for answers, the same judge for verdicts).
func (s *Service) RetryFailed(ctx context.Context, id int64) (int64, error) {
	return s.engine.RetryFailed(ctx, id)
}

// Rejudge sends every answer of an ended run back to its judges, their
// verdicts forgotten (an imported run's "Judge again"); it answers how many.
func (s *Service) Rejudge(ctx context.Context, id int64) (int64, error) {
	return s.engine.Rejudge(ctx, id)
}

// Delete removes a run and everything it holds.
func (s *Service) Delete(ctx context.Context, id int64) error {
	if err := s.store.DeleteRun(ctx, id); err != nil {
		return err
	}
	s.engine.Broker().Publish(id)
	return nil
}

// Store is the store the use cases work on, for callers that stream a run's
// rows (the exports).
func (s *Service) Store() *store.Store { return s.store }

// Results returns a run's progress and summary.
func (s *Service) Results(ctx context.Context, run *store.Run) (Progress, *Summary, error) {
	prog, err := s.Progress(ctx, run)
	if err != nil {
		return prog, nil, err
	}
	sum, err := s.Summary(ctx, run, prog)
	return prog, sum, err
}
