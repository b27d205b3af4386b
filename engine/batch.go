package engine

import (
	"context"
	"fmt"
	"sync"

	"tribunal/store"
)

// writeQueues groups the result writes of chains that share a successor
// query (same run, target or judge, and slot): a write that comes while
// another is in the store waits and goes with the next batch, and the first
// of them writes it. Chains that finish together thus share one transaction
// and one claim, and no write waits for more than the one before it.
//
// Only on SQLite: its one connection serializes the writes anyway, and a
// batch saves a commit per item. PostgreSQL runs the writes side by side on
// its connections; batching them there measured slower.
type writeQueues struct {
	on     bool
	mu     sync.Mutex
	queues map[string]*writeQueue
}

type writeQueue struct {
	busy    bool // a batch of this queue is being written
	pending []*queuedWrite
}

type queuedWrite struct {
	c *store.Completion
	// turn receives true when this write is to lead the next batch, false
	// when another wrote it.
	turn chan bool
}

// complete writes c, with its successor claimed by next when next is set.
// It returns once c.Err and c.Successor are known.
func (e *Engine) complete(ctx context.Context, c *store.Completion, next *store.ClaimParams) {
	ctx = context.WithoutCancel(ctx) // a call's outcome is stored even while the engine stops
	c.Next = next != nil
	if next == nil || !e.writes.on {
		e.store.CompleteAll(ctx, []*store.Completion{c}, next)
		return
	}
	key := successorKey(next)
	w := &queuedWrite{c: c, turn: make(chan bool, 1)}
	wq := &e.writes
	wq.mu.Lock()
	q := wq.queues[key]
	if q == nil {
		q = &writeQueue{}
		wq.queues[key] = q
	}
	q.pending = append(q.pending, w)
	if q.busy {
		wq.mu.Unlock()
		if lead := <-w.turn; !lead {
			return
		}
		wq.mu.Lock()
	}
	q.busy = true
	batch := q.pending
	q.pending = nil
	wq.mu.Unlock()

	cs := make([]*store.Completion, len(batch))
	for i, b := range batch {
		cs[i] = b.c
	}
	e.store.CompleteAll(ctx, cs, next)

	wq.mu.Lock()
	defer wq.mu.Unlock()
	for _, b := range batch {
		if b != w {
			b.turn <- false
		}
	}
	if len(q.pending) > 0 {
		q.pending[0].turn <- true // it leads the next batch; the queue stays busy
		return
	}
	delete(wq.queues, key)
}

func successorKey(p *store.ClaimParams) string {
	pos := -1
	if p.JudgePos != nil {
		pos = *p.JudgePos
	}
	return fmt.Sprintf("%d/%d/%d/%s/%s", p.RunID, p.TargetID, pos, p.From, p.SlotKey)
}
