package runs

import (
	"context"
	"time"

	"tribunal/engine"
	"tribunal/store"
)

// Service is the use cases of runs. It is safe for concurrent use; its
// caches live as long as it does.
type Service struct {
	store  *store.Store
	engine *engine.Engine
	now    func() time.Time

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

// StartRun creates a run and sets the engine on it (the scheduler starts
// its runs here too).
func (s *Service) StartRun(ctx context.Context, in store.RunInput) (*store.Run, error) {
	return s.engine.StartRun(ctx, in)
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
