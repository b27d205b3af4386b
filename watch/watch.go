package watch

import (
	"context"
	"log/slog"
	"sync"

	"tribunal/store"
)

// Service runs the scheduler, the evaluator and the deliverer together.
type Service struct {
	Scheduler *Scheduler
	Evaluator *Evaluator
	Deliverer *Deliverer
}

// New builds the three loops on one configuration.
func New(cfg Config, st *store.Store, starter Starter, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	log = log.With("worker_id", cfg.WorkerID)
	ev := NewEvaluator(cfg, st, log)
	ev.starter = starter
	return &Service{
		Scheduler: NewScheduler(cfg, st, starter, log),
		Evaluator: ev,
		Deliverer: NewDeliverer(cfg, st, log),
	}
}

// Run runs the loops until ctx ends, then waits for them.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.Scheduler.Run(ctx) })
	wg.Go(func() { s.Evaluator.Run(ctx) })
	wg.Go(func() { s.Deliverer.Run(ctx) })
	s.Scheduler.log.InfoContext(ctx, "watch started: scheduler, evaluator, deliverer")
	wg.Wait()
}
