package store_test

import (
	"context"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunFilter: the run list narrows by the collection a run drew from,
// by creation time and by status, and the count agrees with the page.
func TestRunFilter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		var cols []int64
		var runIDs []int64
		for _, name := range []string{"a", "b"} {
			tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "k" + name, Category: "c", Question: "q"})
			if err != nil {
				t.Fatal(err)
			}
			col, err := st.CreateCollection(ctx, store.CollectionInput{Name: name, TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
			if err != nil {
				t.Fatal(err)
			}
			run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"},
				Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}}, CollectionIDs: []int64{col.ID}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, col.ID)
			runIDs = append(runIDs, run.ID)
		}
		hourAgo, inAnHour := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		for _, tc := range []struct {
			name string
			f    store.RunFilter
			want []int64
		}{
			{"all", store.RunFilter{}, []int64{runIDs[1], runIDs[0]}},
			{"collection a", store.RunFilter{CollectionID: cols[0]}, []int64{runIDs[0]}},
			{"collection b", store.RunFilter{CollectionID: cols[1]}, []int64{runIDs[1]}},
			{"no such collection", store.RunFilter{CollectionID: cols[1] + 100}, nil},
			{"from an hour ago", store.RunFilter{From: &hourAgo}, []int64{runIDs[1], runIDs[0]}},
			{"from in an hour", store.RunFilter{From: &inAnHour}, nil},
			{"to an hour ago", store.RunFilter{To: &hourAgo}, nil},
			{"window", store.RunFilter{From: &hourAgo, To: &inAnHour, CollectionID: cols[0], Status: store.RunCancelled}, []int64{runIDs[0]}},
			{"window, other status", store.RunFilter{From: &hourAgo, To: &inAnHour, Status: store.RunFinished}, nil},
		} {
			page, err := st.Runs(ctx, tc.f)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var got []int64
			for _, r := range page.Items {
				got = append(got, r.ID)
			}
			if len(got) != len(tc.want) || page.Total != int64(len(tc.want)) {
				t.Errorf("%s: runs %v (total %d), want %v", tc.name, got, page.Total, tc.want)
				continue
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("%s: runs %v, want %v", tc.name, got, tc.want)
					break
				}
			}
		}
	})
}
