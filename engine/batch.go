package engine

import (
	"context"
	"fmt"
	"sync"

	"tribunal/store"
)

// writeQueues groups the result writes of chains that share a successor
// query (same run, target or judge, and slot): a write that comes while the
// queue's writers are busy waits and goes with the next batch, which the
// first of the waiting writes then writes. Chains that finish together thus
// share one statement (or transaction) and one claim, and a write waits
// only while its queue's writers are busy.
type writeQueues struct {
	// writers is how many batches of a queue may be written at once: one on
	// SQLite, whose single connection serializes writes anyway; two on
	// PostgreSQL, so that its connections work side by side.
	writers int

	mu     sync.Mutex
	queues map[string]*writeQueue
}

type writeQueue struct {
	writing int // batches of this queue being written
	pending []*queuedWrite
}

type queuedWrite struct {
	c *store.Completion
	// turn receives true when this write is to lead the next batch, false
	// when another wrote it.
	turn chan bool
}

func newWriteQueues(d store.Dialect) *writeQueues {
	wq := &writeQueues{writers: 1, queues: map[string]*writeQueue{}}
	if d == store.Postgres {
		wq.writers = 2
	}
	return wq
}

// complete writes c, with its successor claimed by next when next is set.
// It returns once c.Err and c.Successor are known.
func (e *Engine) complete(ctx context.Context, c *store.Completion, next *store.ClaimParams) {
	ctx = context.WithoutCancel(ctx) // a call's outcome is stored even while the engine stops
	c.Next = next != nil
	if next == nil {
		e.store.CompleteAll(ctx, []*store.Completion{c}, nil)
		return
	}
	key := successorKey(next)
	w := &queuedWrite{c: c, turn: make(chan bool, 1)}
	wq := e.writes
	wq.mu.Lock()
	q := wq.queues[key]
	if q == nil {
		q = &writeQueue{}
		wq.queues[key] = q
	}
	if q.writing < wq.writers {
		q.writing++
	} else {
		q.pending = append(q.pending, w)
		wq.mu.Unlock()
		if lead := <-w.turn; !lead {
			return // written with another's batch
		}
		wq.mu.Lock() // promoted: taken off pending, in the writing place of the batch before
	}
	// The whole queue goes: a batch's statement text does not depend on its size.
	batch := append([]*queuedWrite{w}, q.pending...)
	q.pending = nil
	wq.mu.Unlock()

	cs := make([]*store.Completion, len(batch))
	for i, b := range batch {
		cs[i] = b.c
	}
	e.store.CompleteAll(ctx, cs, next)

	wq.mu.Lock()
	defer wq.mu.Unlock()
	for _, b := range batch[1:] {
		b.turn <- false
	}
	if len(q.pending) > 0 {
		lead := q.pending[0]
		q.pending = q.pending[1:]
		lead.turn <- true // it writes the next batch in this one's place
		return
	}
	if q.writing--; q.writing == 0 {
		delete(wq.queues, key)
	}
}

func successorKey(p *store.ClaimParams) string {
	pos := -1
	if p.JudgePos != nil {
		pos = *p.JudgePos
	}
	return fmt.Sprintf("%d/%d/%d/%s/%s", p.RunID, p.TargetID, pos, p.From, p.SlotKey)
}
