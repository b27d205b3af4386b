package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestSQLiteFilesOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, err := store.Open(context.Background(), store.Config{DataDir: dir, Box: storetest.Box(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "tribunal.db"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
	// The WAL copies the database file's mode.
	if fi, err := os.Stat(filepath.Join(dir, "tribunal.db-wal")); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("WAL file: mode %o, want 600", fi.Mode().Perm())
	}
}

func TestPing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if err := st.Ping(ctx); err != nil {
			t.Fatalf("ping an open store: %v", err)
		}
		st.Close()
		if err := st.Ping(ctx); err == nil {
			t.Fatal("ping a closed store: no error")
		}
	})
}

func TestStatusCounts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 2)
		if _, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress,
			WorkerID: "w", Lease: time.Minute, Limit: 2}); err != nil {
			t.Fatal(err)
		}
		runs, err := st.RunCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if runs[store.RunRunning] != 1 || runs[store.RunCancelled] != 0 || len(runs) != len(store.RunStatuses) {
			t.Errorf("run counts: %v", runs)
		}
		items, err := st.ActiveItemCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if items[store.ItemNew] != 4 || items[store.ItemInProgress] != 2 || items[store.ItemFailed] != 0 || len(items) != len(store.ItemStatuses) {
			t.Errorf("item counts: %v", items)
		}

		// A cancelled run's items are no longer counted.
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		runs, _ = st.RunCounts(ctx)
		items, _ = st.ActiveItemCounts(ctx)
		if runs[store.RunCancelled] != 1 || runs[store.RunRunning] != 0 || items[store.ItemNew] != 0 || items[store.ItemInProgress] != 0 {
			t.Errorf("after cancel: runs %v, items %v", runs, items)
		}

		// A deleted run is counted no more, though its rows wait to be purged.
		if err := st.DeleteRun(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if runs, _ = st.RunCounts(ctx); runs[store.RunCancelled] != 0 {
			t.Errorf("after delete: runs %v", runs)
		}
	})
}

// TestPostgresWithoutJIT: the pool's sessions plan without JIT compilation,
// unless the URL asks for it.
func TestPostgresWithoutJIT(t *testing.T) {
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	for _, c := range []struct{ url, want string }{{url, "off"}, {url + "&jit=on", "on"}, {url + "&options=-c%20jit%3Don", "on"}} {
		st, err := store.Open(ctx, store.Config{DatabaseURL: c.url, Box: storetest.Box(t)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Setting(ctx, "jit")
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: jit %s, want %s", c.url, got, c.want)
		}
	}
}
