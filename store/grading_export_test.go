package store

import "context"

// PanelGradingPlace is the panel's statement, which tests compare to the
// walk a run of one judge takes.
func (s *Store) PanelGradingPlace(ctx context.Context, runID int64, g GradingSession, itemID int64) (GradingPlace, error) {
	return s.panelGradingPlace(ctx, runID, g, itemID)
}
