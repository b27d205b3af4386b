package store_test

import (
	"context"
	"fmt"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestTaskResultsInTaskIDOrder: each target's task results come in task id
// order (byte by byte, as Go compares), whatever the order of the run's
// task rows, each with its own task's figures.
func TestTaskResultsInTaskIDOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		tasks := []string{"a", "b", "c", "d"}
		var res []storetest.ItemResult
		for i, k := range tasks {
			if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: k, Category: "c", Question: "q " + k}); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"m1", "m2"} {
				res = append(res, storetest.ItemResult{Model: m, Task: k, Overall: 0.5, TimeMs: int64(100 * (i + 1))})
			}
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"m1", "m2"}, tasks, res)
		// The first task row now sorts last, and "B" before the rest.
		storetest.Exec(t, st, `UPDATE run_tasks SET task_key = 'z' WHERE run_id = ? AND task_key = 'a'`, run.ID)
		storetest.Exec(t, st, `UPDATE run_tasks SET task_key = 'B' WHERE run_id = ? AND task_key = 'c'`, run.ID)
		results, err := st.TaskResults(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range results {
			got = append(got, fmt.Sprintf("%s %g", r.TaskKey, *r.TimeMs))
		}
		if want := "[B 300 b 200 d 400 z 100 B 300 b 200 d 400 z 100]"; fmt.Sprint(got) != want {
			t.Errorf("task results %v\nwant %s", got, want)
		}
		if results[0].RunTargetID != results[3].RunTargetID || results[3].RunTargetID == results[4].RunTargetID {
			t.Errorf("targets %d, %d, %d: want one target's four results, then the other's", results[0].RunTargetID, results[3].RunTargetID, results[4].RunTargetID)
		}
	})
}
