package runs

import (
	"context"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
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

// TestEndedRunCountsFollowItsEnd: an ended run's counts are kept, but a
// run that ends again (after a retry) is counted afresh, and a caller
// changing the counts it got changes no other caller's.
func TestEndedRunCountsFollowItsEnd(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, MinScored, map[string]int{"good": 3}, nil)
		run := b.run(t, store.RunInput{}, "good")
		s := New(st, nil)
		p, err := s.Progress(ctx, run)
		total := p.Total
		if err != nil || total == 0 || p.Completed != total || p.Failed != 0 {
			t.Fatalf("finished run: %+v, %v", p, err)
		}
		p.ByStatus[store.ItemCompleted] = 99

		// As a retry would: an item changes, the run goes back to RUNNING
		// and ends again (by this test or by the bench's engine, whichever
		// comes first).
		storetest.Exec(t, st, `UPDATE items SET status = 'FAILED' WHERE id = (SELECT MIN(id) FROM items WHERE run_id = ?)`, run.ID)
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunFinished); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EndRun(ctx, run.ID, store.RunFinished, "", nil); err != nil {
			t.Fatal(err)
		}
		again, err := st.Run(ctx, run.ID)
		if err != nil || again.Status != store.RunFinished {
			t.Fatalf("run after ending again: %+v, %v", again, err)
		}
		p, err = s.Progress(ctx, again)
		if err != nil || p.Completed != total-1 || p.Failed != 1 || p.ByStatus[store.ItemCompleted] != total-1 {
			t.Fatalf("ended again: %+v, %v", p, err)
		}
	})
}

// TestEndedRunItemTotals: an ended run's item pages take their totals from
// the kept counts, and they equal what a count of the filter gives.
func TestEndedRunItemTotals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, MinScored, map[string]int{"good": 3}, nil)
		run := b.run(t, store.RunInput{}, "good")
		storetest.Exec(t, st, `UPDATE items SET status = 'FAILED' WHERE id = (SELECT MIN(id) FROM items WHERE run_id = ?)`, run.ID)
		s := New(st, nil)
		for _, status := range []store.ItemStatus{"", store.ItemCompleted, store.ItemFailed, store.ItemNew} {
			f := store.ItemFilter{Status: status, PerPage: 2}
			got, err := s.Items(ctx, run, f)
			if err != nil {
				t.Fatal(err)
			}
			counted, err := st.RunItems(ctx, run.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != counted.Total || len(got.Items) != len(counted.Items) {
				t.Errorf("status %q: total %d (%d rows), counted %d (%d rows)", status, got.Total, len(got.Items), counted.Total, len(counted.Items))
			}
		}
	})
}
