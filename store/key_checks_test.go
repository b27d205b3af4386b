package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"tribunal/store"
	"tribunal/store/storetest"
)

// blocked runs q in a transaction of its own, rolled back, and reports
// whether it waited for a lock another transaction holds (PostgreSQL's
// lock_timeout, 55P03).
func blocked(t *testing.T, st *store.Store, q string, args ...any) bool {
	t.Helper()
	tx, err := storetest.DB(t, st).Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`SET LOCAL lock_timeout = '300ms'`); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(q, args...)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		return true
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return false
}

// TestCreateRunLocksItsTasks: the run's copies of its tasks are made
// without a key check per row on PostgreSQL, so the copy locks the tasks
// itself: a task's delete waits for the creation, then unlinks its copy.
func TestCreateRunLocksItsTasks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if st.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer: no delete runs during a creation")
		}
		ctx := context.Background()
		in := creationInput(t, st)
		var waited bool
		st.SetFillPartDone(func(int) error { // in the creation's transaction (a small run)
			waited = blocked(t, st, `DELETE FROM tasks WHERE task_key = 't-a'`)
			return nil
		})
		run, err := st.CreateRun(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !waited {
			t.Error("a task's delete went through while a run copied it")
		}
		storetest.Exec(t, st, `DELETE FROM tasks WHERE task_key = 't-a'`)
		var unlinked int
		err = storetest.DB(t, st).QueryRow(`SELECT count(*) FROM run_tasks WHERE run_id = $1 AND task_key = 't-a' AND task_id IS NULL`, run.ID).Scan(&unlinked)
		if err != nil || unlinked != 1 {
			t.Fatalf("%d unlinked copies of the deleted task (%v), want 1", unlinked, err)
		}
	})
}

// TestCollectionLinksLockTheirRows: a collection's task links are made
// without a key check per row on PostgreSQL, so they lock the collection
// and the tasks themselves: deletes of either wait, then cascade.
func TestCollectionLinksLockTheirRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		if st.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer: no delete runs while links are made")
		}
		ctx := context.Background()
		var ids []int64
		for _, key := range []string{"k-a", "k-b"} {
			tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: key, Category: "c", Question: "q"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tk.ID)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c"})
		if err != nil {
			t.Fatal(err)
		}
		err = st.AddCollectionTasksThen(ctx, col.ID, ids, func() error {
			if !blocked(t, st, `DELETE FROM tasks WHERE id = $1`, ids[0]) {
				t.Error("a task's delete went through while a collection linked it")
			}
			if !blocked(t, st, `DELETE FROM collections WHERE id = $1`, col.ID) {
				t.Error("the collection's delete went through while tasks were linked to it")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteTask(ctx, ids[0]); err != nil {
			t.Fatal(err)
		}
		got, err := st.Collection(ctx, col.ID)
		if err != nil || got.TaskCount != 1 {
			t.Fatalf("collection %+v, %v; want 1 task left once the other is deleted", got, err)
		}
	})
}
