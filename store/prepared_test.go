package store_test

import (
	"context"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestPrepareWhileATransactionRuns: a result write whose statement is new to
// SQLite (so it is prepared, which waits for the single connection) while a
// transaction holds that connection and still has a claim to make: both
// finish, neither waits for the other forever.
func TestPrepareWhileATransactionRuns(t *testing.T) {
	st := storetest.SQLite(t)
	ctx := context.Background()
	run := makeRun(t, st, 4, 1)
	claim := store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
		Lease: time.Minute, Limit: 1, SlotKey: "k", SlotLimit: 4}
	first, err := st.ClaimItems(ctx, claim)
	if err != nil || len(first) != 1 {
		t.Fatalf("claim: %v %v", first, err)
	}
	done := make(chan error, 2)
	inTx := make(chan struct{})
	go func() {
		done <- st.Transact(ctx, func(tx *store.Store) error {
			close(inTx)
			time.Sleep(200 * time.Millisecond) // meanwhile the write below waits to prepare
			_, err := tx.ClaimItems(ctx, claim)
			return err
		})
	}()
	<-inTx
	go func() {
		// The first result this store writes: its statement is not prepared yet.
		_, err := st.CompleteBenchmark(ctx, &first[0], store.BenchmarkResult{Request: "{}", Response: "a", Judged: true}, nil)
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("deadlock: the statement being prepared and the transaction wait for each other")
		}
	}
}
