package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestCreateRunItemOrder: a run has one item per (task, target, repeat),
// numbered repeat by repeat, each target (in the form's order) through the
// tasks (in task id order), the order the claim and the pages read them in;
// a re-run numbers its items alike.
func TestCreateRunItemOrder(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxActiveRuns: 2}, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run, err := st.CreateRun(ctx, creationInput(t, st))
		if err != nil {
			t.Fatal(err)
		}
		want := creationOrder()
		if got := itemOrder(t, st, run.ID); !slices.Equal(got, want) {
			t.Errorf("items by id:\n got %q\nwant %q", got, want)
		}
		rerun, err := st.RerunRun(ctx, run.ID, "MANUAL", "{}")
		if err != nil {
			t.Fatal(err)
		}
		if got := itemOrder(t, st, rerun.ID); !slices.Equal(got, want) {
			t.Errorf("re-run's items by id:\n got %q\nwant %q", got, want)
		}
	})
}

// itemOrder lists a run's items by id as "repeat model task status".
func itemOrder(t *testing.T, st *store.Store, runID int64) []string {
	t.Helper()
	page, err := st.RunItems(context.Background(), runID, store.ItemFilter{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	last := int64(0)
	for _, it := range page.Items {
		if it.ID <= last {
			t.Fatalf("items not listed by id: %d after %d", it.ID, last)
		}
		last = it.ID
		out = append(out, fmt.Sprintf("%d %s %s %s", it.RepeatIndex, it.Model, it.TaskID, it.Status))
	}
	return out
}
