package handlers

import (
	"context"
	"fmt"
	"sync"

	"tribunal/store"
)

// summaryCache keeps run aggregates keyed by the run's item counts: while
// the counts stand still the aggregates do too, so a finished run's page
// computes them once, and a live run's at most once per change.
type summaryCache struct {
	mu sync.Mutex
	m  map[int64]cachedSummary
}

type cachedSummary struct {
	key string
	sum *store.RunSummary
}

const summaryCacheSize = 256

// runSummary returns the run's aggregates (per task up to perTaskLimit).
func (h *Handler) runSummary(ctx context.Context, run *store.Run, prog store.Progress) (*store.RunSummary, error) {
	runID := run.ID
	key := fmt.Sprint(prog.ByStatus)
	h.summaries.mu.Lock()
	c, ok := h.summaries.m[runID]
	h.summaries.mu.Unlock()
	if ok && c.key == key {
		return c.sum, nil
	}
	sum, err := h.store.RunSummary(ctx, runID, perTaskLimit)
	if err != nil {
		return nil, err
	}
	b, err := h.store.RunBreakdown(ctx, runID)
	if err != nil {
		return nil, err
	}
	sum.Breakdown = b
	sum.Models = store.OverallScores(b, run.Judges, run.Options.Weights, sum.PerModel)
	sum.BestOverall, sum.BestValue = store.Best(sum.Models)
	h.summaries.mu.Lock()
	if h.summaries.m == nil || len(h.summaries.m) >= summaryCacheSize {
		h.summaries.m = map[int64]cachedSummary{}
	}
	h.summaries.m[runID] = cachedSummary{key: key, sum: sum}
	h.summaries.mu.Unlock()
	return sum, nil
}
