package handlers

import (
	"context"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestLogCursorPicksUpLateCommits: entry A takes its id first but commits
// after entry B (two processes writing at once); the stream sends B, then A,
// each once.
func TestLogCursorPicksUpLateCommits(t *testing.T) {
	st := storetest.Postgres(t)
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := st.CreateTask(ctx, store.TaskInput{TaskKey: "t", Category: "c", Question: "q"})
	col, _ := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{ID: task.ID}}})
	run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}}, CollectionIDs: []int64{col.ID}})
	if err != nil {
		t.Fatal(err)
	}
	cur := newLogCursor(st, 0)

	inserted, commit, done := make(chan int64), make(chan struct{}), make(chan error)
	go func() {
		done <- st.Transact(ctx, func(tx *store.Store) error {
			a := &store.RunLog{RunID: run.ID, Kind: "t", Message: "A"}
			if err := tx.AppendLog(ctx, a); err != nil {
				return err
			}
			inserted <- a.ID
			<-commit
			return nil
		})
	}()
	aID := <-inserted
	b := &store.RunLog{RunID: run.ID, Kind: "t", Message: "B"}
	if err := st.AppendLog(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b.ID <= aID {
		t.Fatalf("ids %d, %d: B should have the higher id", aID, b.ID)
	}
	got, _, err := cur.next(ctx, run.ID)
	if err != nil || len(got) != 1 || got[0].Message != "B" {
		t.Fatalf("first read: %+v %v", got, err)
	}
	close(commit)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _, err = cur.next(ctx, run.ID)
	if err != nil || len(got) != 1 || got[0].Message != "A" {
		t.Fatalf("after A committed: %+v %v", got, err)
	}
	if got, _, _ = cur.next(ctx, run.ID); len(got) != 0 {
		t.Fatalf("entries sent twice: %+v", got)
	}
}
