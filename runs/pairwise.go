package runs

import (
	"context"
	"fmt"

	"tribunal/store"
)

// Pairwise is a pairwise run's leaderboard (Bradley–Terry with bootstrap
// intervals), its judges' flip rates and its comparison counts. The fit (a
// thousand bootstrap refits) is computed again only when comparisons were
// judged since: DONE comparisons never change, so their count keys it.
func (s *Service) Pairwise(ctx context.Context, run *store.Run) (*store.PairwiseReport, error) {
	counts, err := s.store.ComparisonProgress(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	stamp := fmt.Sprint(counts.Done)
	if rep, fresh, _ := s.leaderboards.get(run.ID, stamp); fresh {
		rep.Comparisons = counts
		return &rep, nil
	}
	tallies, err := s.store.PairTallies(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	rep := store.PairwiseLeaderboard(run.Targets, run.Judges, tallies, uint64(run.ID))
	rep.Comparisons = counts
	s.leaderboards.put(run.ID, stamp, rep)
	return &rep, nil
}
