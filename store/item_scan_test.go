package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestClaimedItemsReadWhole: the items a claim and a completion's successor
// return (scanned by hand) equal their rows as GORM reads them, field by
// field, on both databases.
func TestClaimedItemsReadWhole(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 1)
		params := store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
			Lease: time.Minute, Limit: 1, SlotKey: "k", SlotLimit: 1}
		claimed, err := st.ClaimItems(ctx, params)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d: %v", len(claimed), err)
		}
		sameAsRow(t, st, "claimed", claimed[0])
		succ, err := st.CompleteBenchmark(ctx, &claimed[0], store.BenchmarkResult{Request: `{"model":"m"}`, Response: "a"}, &params)
		if err != nil || succ == nil {
			t.Fatalf("no successor: %v", err)
		}
		sameAsRow(t, st, "successor", *succ)
	})
}

func sameAsRow(t *testing.T, st *store.Store, what string, got store.Item) {
	t.Helper()
	want, err := st.ItemRow(context.Background(), got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s item scanned as\n%+v\nits row is\n%+v", what, got, want)
	}
}
