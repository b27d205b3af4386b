package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestDeleteRunInBatches: DeleteRun hides a run at once (no lookup, list or
// claim sees it) and PurgeDeletedRuns removes its rows later, batch by
// batch, from whatever the database says is marked: a restart resumes it.
func TestDeleteRunInBatches(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxActiveRuns: 2}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 2) // running
		kept := makeRun2(t, st)
		if err := st.AppendLog(ctx, &store.RunLog{RunID: run.ID, Level: store.LogInfo, Kind: "x", Message: "m"}); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteRun(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Run(ctx, run.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Run of a deleted run: %v", err)
		}
		if err := st.DeleteRun(ctx, run.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleting twice: %v", err)
		}
		if page, err := st.Runs(ctx, store.RunFilter{}); err != nil || page.Total != 1 || page.Items[0].ID != kept {
			t.Fatalf("runs list %+v, %v; want only run %d", page.Items, err, kept)
		}
		if active, err := st.ActiveRuns(ctx); err != nil || len(active) != 1 || active[0].ID != kept {
			t.Fatalf("active runs %+v, %v", active, err)
		}
		items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w", Lease: time.Minute, Limit: 10})
		if err != nil || len(items) != 0 {
			t.Fatalf("claimed %d items of a deleted run, %v", len(items), err)
		}
		if page, _ := st.RunItems(ctx, run.ID, store.ItemFilter{}); page.Total != 6 {
			t.Fatalf("%d items before the purge, want 6 still there", page.Total)
		}
		purgeAll(t, st)
		if page, _ := st.RunItems(ctx, run.ID, store.ItemFilter{}); page.Total != 0 {
			t.Errorf("%d items left after the purge", page.Total)
		}
		if logs, _ := st.RunLogs(ctx, run.ID, 0, 10); len(logs) != 0 {
			t.Errorf("%d log entries left after the purge", len(logs))
		}
		if page, _ := st.RunItems(ctx, kept, store.ItemFilter{}); page.Total != 1 {
			t.Errorf("the other run has %d items, want 1", page.Total)
		}
	})
}

// makeRun2 adds a second, pending run of one item beside makeRun's.
func makeRun2(t *testing.T, st *store.Store) int64 {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p2", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "other", Category: "c", Question: "q"})
	if err != nil {
		t.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c2", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"}, CollectionIDs: []int64{col.ID},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	return run.ID
}
