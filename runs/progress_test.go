package runs

import (
	"testing"
	"time"

	"tribunal/store"
)

func TestProgressRisesFromTheFirstAnswer(t *testing.T) {
	counts := store.Progress{Total: 10, ByStatus: map[store.ItemStatus]int64{store.ItemNew: 9, store.ItemWaitingForJudge: 1}}
	p := progressOf(counts)
	if p.Answered != 1 || p.Judged != 0 || p.Percent != 5 {
		t.Errorf("one answer: %+v", p)
	}
	counts.ByStatus = map[store.ItemStatus]int64{store.ItemCompleted: 6, store.ItemFailed: 2, store.ItemJudging: 2}
	p = progressOf(counts)
	if p.Answered != 10 || p.Judged != 8 || p.Failed != 2 || p.Completed != 6 || p.Percent != 90 {
		t.Errorf("judging: %+v", p)
	}
}

func TestETA(t *testing.T) {
	var b rateBook
	t0 := time.Unix(1_700_000_000, 0)
	if eta := b.eta(1, t0, 0, 100); eta != nil {
		t.Errorf("first sample: eta %d", *eta)
	}
	if eta := b.eta(1, t0.Add(time.Second), 10, 100); eta != nil {
		t.Errorf("too soon: eta %d", *eta)
	}
	// 20 units in 4 s: 5 per second, 80 left → 16 s.
	if eta := b.eta(1, t0.Add(4*time.Second), 20, 100); eta == nil || *eta != 16 {
		t.Errorf("eta %v, want 16", eta)
	}
	// Samples older than the window leave it, but for the last one before it:
	// from (4 s, 20) to (4 min, 50) is 30 units in 236 s, 50 left → 393 s.
	b.eta(1, t0.Add(3*time.Minute), 40, 100)
	if eta := b.eta(1, t0.Add(4*time.Minute), 50, 100); eta == nil || *eta != 393 {
		t.Errorf("recent eta %v, want 393", eta)
	}
	if eta := b.eta(1, t0.Add(5*time.Minute), 100, 100); eta != nil {
		t.Errorf("done: eta %d", *eta)
	}
}

// A live run's summary is computed again only once four times its cost has passed.
func TestPaceOfLiveSummaries(t *testing.T) {
	var p pace
	t0 := time.Unix(1_700_000_000, 0)
	if p.recent(1, t0) {
		t.Error("recent before any computation")
	}
	p.done(1, t0, t0.Add(time.Second))
	if !p.recent(1, t0.Add(4*time.Second)) {
		t.Error("computed again 3 s after a 1 s scan")
	}
	if p.recent(1, t0.Add(6*time.Second)) || p.recent(2, t0.Add(2*time.Second)) {
		t.Error("held back too long, or another run's pace applied")
	}
}
