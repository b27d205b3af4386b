package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
