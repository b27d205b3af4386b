package handlers

import (
	"context"
	"fmt"
	"sync"

	"tribunal/store"
)

// stampCache keeps one value per key with the stamp it was computed for
// (say, a run's item counts): while the stamp stands still the value does
// too, so a finished run's page computes it once and a live run's at most
// once per change. It forgets everything when full; entries are cheap to redo.
type stampCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]stamped[V]
}

type stamped[V any] struct {
	stamp string
	v     V
}

const stampCacheSize = 256

// get returns the value cached for k, and whether it was computed for stamp.
func (c *stampCache[K, V]) get(k K, stamp string) (v V, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e.v, ok && e.stamp == stamp, ok
}

func (c *stampCache[K, V]) put(k K, stamp string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= stampCacheSize {
		c.m = map[K]stamped[V]{}
	}
	c.m[k] = stamped[V]{stamp: stamp, v: v}
}

// runSummary returns the run's aggregates (per task up to perTaskLimit).
func (h *Handler) runSummary(ctx context.Context, run *store.Run, prog store.Progress) (*store.RunSummary, error) {
	runID := run.ID
	key := fmt.Sprint(prog.ByStatus)
	if sum, fresh, _ := h.summaries.get(runID, key); fresh {
		return sum, nil
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
	h.summaries.put(runID, key, sum)
	return sum, nil
}
