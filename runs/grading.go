package runs

import (
	"context"

	"tribunal/store"
)

// GradingPlace finds item itemID (0: the head) in a run's grading queue
// (store.GradingPlace); an ended run's kept counts spare counting its items.
func (s *Service) GradingPlace(ctx context.Context, run *store.Run, g store.GradingSession, itemID int64) (store.GradingPlace, error) {
	if err := s.knownTotal(ctx, run, &g.Filter); err != nil {
		return store.GradingPlace{}, err
	}
	return s.store.GradingPlace(ctx, run.ID, g, itemID)
}
