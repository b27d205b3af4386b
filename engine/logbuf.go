package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"tribunal/store"
)

// logBuffer batches live-log entries into one INSERT every logFlushEvery
// (or logFlushSize entries), then tells subscribers which runs changed.
// A crash loses at most the last moments of the log, never a result.
type logBuffer struct {
	st      *store.Store
	log     *slog.Logger
	changed func(runID int64)

	mu      sync.Mutex
	entries []*store.RunLog
	kick    chan struct{}
}

const (
	logFlushEvery = 100 * time.Millisecond
	logFlushSize  = 500
)

func newLogBuffer(st *store.Store, log *slog.Logger, changed func(int64)) *logBuffer {
	return &logBuffer{st: st, log: log, changed: changed, kick: make(chan struct{}, 1)}
}

func (b *logBuffer) add(e *store.RunLog) {
	b.mu.Lock()
	b.entries = append(b.entries, e)
	full := len(b.entries) >= logFlushSize
	b.mu.Unlock()
	if full {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

func (b *logBuffer) run(ctx context.Context) {
	t := time.NewTicker(logFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.kick:
		}
		b.flush(ctx)
	}
}

func (b *logBuffer) flush(ctx context.Context) {
	b.mu.Lock()
	entries := b.entries
	b.entries = nil
	b.mu.Unlock()
	if len(entries) == 0 {
		return
	}
	wctx := context.WithoutCancel(ctx)
	if err := b.st.AppendLog(wctx, entries...); err != nil {
		// One bad entry (its run was just deleted) must not lose the others.
		for _, e := range entries {
			if err := b.st.AppendLog(wctx, e); err != nil {
				b.log.WarnContext(ctx, "append run log", "run_id", e.RunID, "err", err)
			}
		}
	}
	seen := map[int64]bool{}
	for _, e := range entries {
		if !seen[e.RunID] {
			seen[e.RunID] = true
			b.changed(e.RunID)
		}
	}
}
