package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"tribunal/store"
)

// notifier batches "run changed" notices for other processes: at most one
// NOTIFY per run every notifyEvery, however many items finish meanwhile.
type notifier struct {
	st   *store.Store
	log  *slog.Logger
	mu   sync.Mutex
	runs map[int64]bool
	kick chan struct{}
}

const notifyEvery = 100 * time.Millisecond

func newNotifier(st *store.Store, log *slog.Logger) *notifier {
	return &notifier{st: st, log: log, runs: map[int64]bool{}, kick: make(chan struct{}, 1)}
}

func (n *notifier) add(runID int64) {
	if n.st.Dialect() != store.Postgres {
		return
	}
	n.mu.Lock()
	n.runs[runID] = true
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *notifier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			n.flush(context.WithoutCancel(ctx))
			return
		case <-n.kick:
		}
		n.flush(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(notifyEvery):
		}
	}
}

func (n *notifier) flush(ctx context.Context) {
	n.mu.Lock()
	ids := make([]int64, 0, len(n.runs))
	for id := range n.runs {
		ids = append(ids, id)
	}
	clear(n.runs)
	n.mu.Unlock()
	slices.Sort(ids)
	if err := n.st.NotifyRuns(ctx, ids); err != nil && ctx.Err() == nil {
		n.log.WarnContext(ctx, "notify other processes", "err", err)
	}
}
