// Package bench builds big runs for benchmarks and the `tribunal bench`
// command: runs whose items hold results without any model being called.
package bench

import (
	"context"
	"fmt"

	"tribunal/runs"
	"tribunal/store"
)

// FillCompleted completes every item of run runID that is not yet COMPLETED
// or FAILED with synthetic answers, verdicts and scores, written as the
// engine writes them (store.CompleteSynthetic: one item in 50 fails, the
// rest complete with each judge's scores, violations where a style asks for
// them, and costs from the run's prices). It reports how many items it
// wrote; the run's status is left as it is. Like the engine, it keeps the
// items' overalls, here all at once from their scores.
func FillCompleted(ctx context.Context, st *store.Store, runID int64) (int64, error) {
	run, err := st.Run(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("bench: fill run %d: %w", runID, err)
	}
	n, err := st.CompleteSynthetic(ctx, runID, runs.ItemWeights(run))
	if err != nil {
		return 0, fmt.Errorf("bench: fill run %d: %w", runID, err)
	}
	return n, nil
}
