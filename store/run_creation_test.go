package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// creationInput is a run of 3 tasks × 2 targets × 2 repeats (12 items)
// over a new provider and collection.
func creationInput(t *testing.T, st *store.Store) store.RunInput {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	var refs []store.TaskRef
	for _, key := range []string{"t-b", "t-a", "t-c"} {
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: key, Category: "c", Question: "q " + key})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, store.TaskRef{ID: tk.ID})
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	return store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"}, CollectionIDs: []int64{col.ID},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "zeta"}, {ProviderID: p.ID, Model: "alpha"}}, Repeats: 2}
}

// creationOrder is creationInput's items by id, as itemOrder lists them.
func creationOrder() []string {
	var want []string
	for r := 1; r <= 2; r++ {
		for _, model := range []string{"zeta", "alpha"} {
			for _, key := range []string{"t-a", "t-b", "t-c"} {
				want = append(want, fmt.Sprintf("%d %s %s NEW", r, model, key))
			}
		}
	}
	return want
}

// rowCount counts a table's rows, deleted runs' included.
func rowCount(t *testing.T, st *store.Store, table string) int {
	t.Helper()
	var n int
	if err := storetest.DB(t, st).QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// purgeAll runs the purge of deleted runs until it reports none left. On
// PostgreSQL it waits while any run is being started (the run-start lock is
// the database's, shared by other packages' tests).
func purgeAll(t *testing.T, st *store.Store) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		more, err := st.PurgeDeletedRuns(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the purge does not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCreateRunFailingMidway: a creation that fails while its items are
// being made (on PostgreSQL, after some parts of the fill committed) leaves
// no run anyone sees or claims from, the purge removes what it wrote, and
// the next creation succeeds.
func TestCreateRunFailingMidway(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		in := creationInput(t, st)
		killed := errors.New("killed midway")
		// A small run's items are made in its creation's transaction: a
		// failure leaves nothing, without the purge.
		st.SetFillPartDone(func(int) error { return killed })
		if _, err := st.CreateRun(ctx, in); !errors.Is(err, killed) {
			t.Fatalf("small creation failing: %v", err)
		}
		for _, table := range []string{"runs", "items"} {
			if n := rowCount(t, st, table); n != 0 {
				t.Errorf("%d rows of %s left by a small creation that failed", n, table)
			}
		}
		st.SetParallelFillFrom(1) // a big run's path, on PostgreSQL
		st.SetFillPartDone(func(part int) error {
			if part == 0 {
				return killed
			}
			return nil
		})
		if _, err := st.CreateRun(ctx, in); !errors.Is(err, killed) {
			t.Fatalf("creation failing midway: %v", err)
		}
		if page, err := st.Runs(ctx, store.RunFilter{}); err != nil || page.Total != 0 {
			t.Fatalf("runs list %+v, %v; want none", page.Items, err)
		}
		if active, err := st.ActiveRuns(ctx); err != nil || len(active) != 0 {
			t.Fatalf("active runs %+v, %v; want none", active, err)
		}
		if st.Dialect() == store.Postgres && rowCount(t, st, "items") == 0 {
			t.Fatal("no part of the fill committed: the test fails no creation midway")
		}
		storetest.Exec(t, st, "UPDATE runs SET status = 'RUNNING'")
		claimNone(t, st)
		purgeAll(t, st)
		for _, table := range []string{"runs", "items", "run_tasks", "run_targets"} {
			if n := rowCount(t, st, table); n != 0 {
				t.Errorf("%d rows of %s left after the purge", n, table)
			}
		}
		st.SetFillPartDone(nil)
		run, err := st.CreateRun(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := itemOrder(t, st, run.ID); !slices.Equal(got, creationOrder()) {
			t.Errorf("items by id:\n got %q\nwant %q", got, creationOrder())
		}
	})
}

// claimNone fails unless claiming from every run's items finds nothing.
func claimNone(t *testing.T, st *store.Store) {
	t.Helper()
	rows, err := storetest.DB(t, st).Query("SELECT id FROM runs")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		items, err := st.ClaimItems(context.Background(), store.ClaimParams{RunID: id, From: store.ItemNew, To: store.ItemInProgress,
			WorkerID: "w", Lease: time.Minute, Limit: 100})
		if err != nil || len(items) != 0 {
			t.Fatalf("claimed %d items of run %d, hidden, %v", len(items), id, err)
		}
	}
}

// TestCreateRunHiddenWhileFilling: on PostgreSQL, while a run's items are
// being filled, the run is in no list and none of its items is claimed,
// even RUNNING; the purge of deleted runs leaves it alone; once filled it
// shows with every item in order.
func TestCreateRunHiddenWhileFilling(t *testing.T) {
	st := storetest.Postgres(t)
	st.SetParallelFillFrom(1)
	ctx := context.Background()
	in := creationInput(t, st)
	filling, release := make(chan struct{}), make(chan struct{})
	st.SetFillPartDone(func(part int) error {
		if part == 0 {
			close(filling)
			<-release
		}
		return nil
	})
	type result struct {
		run *store.Run
		err error
	}
	done := make(chan result, 1)
	go func() {
		run, err := st.CreateRun(ctx, in)
		done <- result{run, err}
	}()
	<-filling
	if page, err := st.Runs(ctx, store.RunFilter{}); err != nil || page.Total != 0 {
		t.Errorf("runs list while filling %+v, %v; want none", page.Items, err)
	}
	if active, err := st.ActiveRuns(ctx); err != nil || len(active) != 0 {
		t.Errorf("active runs while filling %+v, %v; want none", active, err)
	}
	storetest.Exec(t, st, "UPDATE runs SET status = 'RUNNING'")
	claimNone(t, st)
	if more, err := st.PurgeDeletedRuns(ctx); err != nil || !more {
		t.Errorf("the purge while filling: more %v, %v; want it to wait and try again", more, err)
	}
	if n := rowCount(t, st, "runs"); n != 1 {
		t.Errorf("%d runs while filling, want the hidden one", n)
	}
	close(release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if page, err := st.Runs(ctx, store.RunFilter{}); err != nil || page.Total != 1 || page.Items[0].ID != r.run.ID {
		t.Fatalf("runs list once filled %+v, %v; want run %d", page.Items, err, r.run.ID)
	}
	if got := itemOrder(t, st, r.run.ID); !slices.Equal(got, creationOrder()) {
		t.Errorf("items by id:\n got %q\nwant %q", got, creationOrder())
	}
}

// TestCreateRunsWaitingForTheLock: a creation that fills in parallel takes
// no connection from the pool once it holds the run-start lock, so it ends
// even when every other connection of the pool (20) is held by a creation
// waiting for that lock. Each ends made, or refused by the active-run limit.
func TestCreateRunsWaitingForTheLock(t *testing.T) {
	st := storetest.Postgres(t)
	st.SetParallelFillFrom(1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, not blocks
	defer cancel()
	in := creationInput(t, st)
	outside := storetest.DB(t, st) // a pool of its own
	holder, err := outside.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "SELECT pg_advisory_lock(7271001)"); err != nil { // runStartLock
		t.Fatal(err)
	}
	const creations = 20
	errs := make(chan error, creations)
	for range creations {
		in, judge := in, *in.Judge // CreateRun normalises its input in place: each its own
		in.Targets, in.Judge = slices.Clone(in.Targets), &judge
		go func() {
			_, err := st.CreateRun(ctx, in)
			errs <- err
		}()
	}
	for waiting := 0; waiting < creations; {
		if err := outside.QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&waiting); err != nil {
			t.Fatalf("%d creations waiting for the lock: %v", waiting, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := holder.ExecContext(ctx, "SELECT pg_advisory_unlock(7271001)"); err != nil {
		t.Fatal(err)
	}
	made := 0
	for range creations {
		switch err := <-errs; {
		case err == nil:
			made++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("creation: %v", err)
		}
	}
	if made == 0 {
		t.Error("no creation made its run")
	}
}
