package engine

import "sync"

// Broker tells subscribers that a run changed. A signal carries no data:
// subscribers read the truth (progress, new log entries) from the database,
// so a burst of changes costs them one read, and nothing is lost if a signal
// is dropped while they are busy.
type Broker struct {
	mu   sync.Mutex
	subs map[int64]map[chan struct{}]struct{}
}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{subs: map[int64]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a signal after each change of the
// run, and a function to unsubscribe.
func (b *Broker) Subscribe(runID int64) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs[runID] == nil {
		b.subs[runID] = map[chan struct{}]struct{}{}
	}
	b.subs[runID][ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[runID], ch)
		if len(b.subs[runID]) == 0 {
			delete(b.subs, runID)
		}
		b.mu.Unlock()
	}
}

// Publish signals every subscriber of the run without blocking.
func (b *Broker) Publish(runID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[runID] {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending; coalesce
		}
	}
}
