package runs

import (
	"context"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestGlance: an ended run's row reads its summary; a live run's row
// computes none, showing the summary last computed for the run (marked
// provisional) or nothing.
func TestGlance(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, MinScored, map[string]int{"good": 9, "bad": 2}, nil)
		run := b.run(t, store.RunInput{}, "good", "bad")
		s := New(st, nil)
		prog, err := s.Progress(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		g, err := s.Glance(ctx, run, prog, now)
		if err != nil {
			t.Fatal(err)
		}
		if g.Model != "fake / good" || g.Overall == nil || g.PassRate == nil || g.Provisional || g.Duration <= 0 {
			t.Fatalf("ended run: %+v", g)
		}

		live := *run
		live.Status, live.FinishedAt = store.RunRunning, nil
		fresh := New(st, nil)
		if g, err := fresh.Glance(ctx, &live, prog, now); err != nil || g.Model != "" || g.Overall != nil || g.PassRate != nil || !g.Provisional {
			t.Fatalf("live run without a summary in memory: %+v, %v", g, err)
		}
		if _, err := fresh.Summary(ctx, &live, prog); err != nil {
			t.Fatal(err)
		}
		if g, err := fresh.Glance(ctx, &live, prog, now); err != nil || g.Model != "fake / good" || !g.Provisional || g.Duration != now.Sub(*run.StartedAt) {
			t.Fatalf("live run after its page was seen: %+v, %v", g, err)
		}
	})
}
