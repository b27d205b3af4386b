package handlers

import (
	"context"
	"slices"
	"time"

	"tribunal/store"
)

// logCursor follows a run's live log in id order. On PostgreSQL the ids come
// from one sequence, but batches written by several processes can commit out
// of id order; so for settleWindow after an id is sent, entries that appear
// below it are still picked up, before the low-water mark moves past them.
type logCursor struct {
	st   *store.Store
	late bool                // look for late commits (PostgreSQL)
	low  int64               // every entry at or below was sent, or will never come
	high int64               // the newest id sent
	sent map[int64]time.Time // ids in (low, high] already sent, and when
}

const settleWindow = 2 * time.Second

func newLogCursor(st *store.Store, after int64) *logCursor {
	return &logCursor{st: st, late: st.Dialect() == store.Postgres, low: after, high: after, sent: map[int64]time.Time{}}
}

// next returns the entries not sent yet, late ones first, and whether more
// new ones are waiting (a backlog longer than one batch).
func (lc *logCursor) next(ctx context.Context, runID int64) (logs []store.RunLog, more bool, err error) {
	if lc.late && lc.high > lc.low {
		window, err := lc.st.RunLogsBetween(ctx, runID, lc.low, lc.high, sseLogBatch+len(lc.sent))
		if err != nil {
			return nil, false, err
		}
		for _, l := range window {
			if _, ok := lc.sent[l.ID]; !ok {
				logs = append(logs, l)
			}
		}
	}
	fresh, err := lc.st.RunLogs(ctx, runID, lc.high, sseLogBatch)
	if err != nil {
		return nil, false, err
	}
	logs = append(logs, fresh...)
	now := time.Now()
	for _, l := range logs {
		lc.sent[l.ID] = now
		lc.high = max(lc.high, l.ID)
	}
	lc.settle(now)
	return logs, len(fresh) == sseLogBatch, nil
}

// settle moves the low-water mark over ids sent longer than settleWindow ago.
func (lc *logCursor) settle(now time.Time) {
	if !lc.late {
		lc.low, lc.sent = lc.high, map[int64]time.Time{}
		return
	}
	ids := make([]int64, 0, len(lc.sent))
	for id := range lc.sent {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if now.Sub(lc.sent[id]) < settleWindow {
			return
		}
		lc.low = id
		delete(lc.sent, id)
	}
}
