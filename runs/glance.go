package runs

import (
	"context"
	"time"

	"tribunal/store"
)

// Glance is what the runs list shows of one run.
type Glance struct {
	// Model is the best model overall (for a one-model run, its model) and
	// Overall its overall, 0–100; "" and nil when none is named.
	Model   string
	Overall *float64
	// Note says why no model is named, or that the figures are provisional.
	Note     string
	PassRate *float64
	// CostUSD is what the models and judges cost; nil while no price is known.
	CostUSD *float64
	Failed  int64
	// Duration is from start to finish (to now while the run goes on); 0 before it starts.
	Duration time.Duration
	// Provisional: the run is still going, so the figures may change.
	Provisional bool
}

// Glance sums a run up for the runs list. An ended run's figures come from
// its summary, read from the snapshot stored when the run ended (whatever
// grades it counted: the list shows none). A live run's
// come from the summary last computed in this process, whatever counts it
// was for, and none is computed here: a page of fifty runs must not rescan
// a big run on every view. Without one its figures are nil.
func (s *Service) Glance(ctx context.Context, run *store.Run, prog Progress, now time.Time) (Glance, error) {
	g := Glance{Failed: prog.Failed, Provisional: run.Status.Active()}
	g.Duration = run.Elapsed(now)
	var sum *Summary
	if g.Provisional {
		sum, _, _ = s.summaries.get(run.ID, "")
	} else {
		var err error
		if sum, err = s.summary(ctx, run, prog, nil); err != nil {
			return g, err
		}
	}
	if sum == nil {
		return g, nil
	}
	g.PassRate = sum.Overall.PassRate
	g.CostUSD = sum.Overall.TotalCostUSD()
	g.Note = sum.Best.Note
	best := sum.Best.OverallTargetID
	if best == 0 && len(run.Targets) == 1 {
		best = run.Targets[0].ID
	}
	for _, m := range sum.Models {
		if m.TargetID != best || m.Overall == nil {
			continue
		}
		for _, t := range run.Targets {
			if t.ID == best {
				g.Model, g.Overall = t.Label(), m.Overall
			}
		}
	}
	return g, nil
}
