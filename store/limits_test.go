package store_test

import (
	"context"
	"errors"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestMaxRunItems: a run of more than MaxRunItems items (tasks × targets ×
// repeats) is refused before any of its rows is written.
func TestMaxRunItems(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxRunItems: 6}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 2) // 6 items: at the limit
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		in := store.RunInput{Judge: &store.ModelRef{ProviderID: *run.Judges[0].ProviderID, Model: run.Judges[0].Model},
			CollectionIDs: []int64{*run.Collections[0].CollectionID}, Repeats: 2}
		for _, tg := range run.Targets {
			in.Targets = append(in.Targets, store.ModelRef{ProviderID: *tg.ProviderID, Model: tg.Model})
		}
		var ve *store.ValidationError
		if _, err := st.CreateRun(ctx, in); !errors.As(err, &ve) || ve.Error() != "a run of 12 items exceeds --max-run-items (6)" {
			t.Fatalf("CreateRun of 12 items: %v", err)
		}
		if page, err := st.Runs(ctx, store.RunFilter{}); err != nil || page.Total != 1 {
			t.Fatalf("%d runs, %v; the refused one must leave nothing", page.Total, err)
		}
		in.TaskSelection = &store.TaskSelection{Mode: store.SelectTop, N: 1} // 1 × 2 × 2
		if _, err := st.CreateRun(ctx, in); err != nil {
			t.Fatalf("CreateRun of 4 items: %v", err)
		}
	})
}
