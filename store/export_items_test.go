package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestEachRunItemMatchesRunItems: the export's batched reads give every
// item exactly as the items pages show it — judge and reasoning from the
// first verdict, the checks' names when no judge scored, the grade.
func TestEachRunItemMatchesRunItems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		const tasks = 700 // × 2 models: 1,400 items
		keys := make([]string, tasks)
		ins := make([]store.TaskInput, tasks)
		for i := range ins {
			keys[i] = fmt.Sprintf("t%04d", i)
			ins[i] = store.TaskInput{TaskKey: keys[i], Category: "c", Question: "q " + keys[i]}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		var results []storetest.ItemResult
		for i := 0; i < 500; i += 2 { // every other item of the first 500 judged (FixedRun sees a page of 500); the rest stay NEW
			results = append(results, storetest.ItemResult{Model: "a", Task: keys[i], Overall: 0.5, TimeMs: 10})
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"a", "b"}, keys, results)
		want := allItems(t, st, run.ID)
		if len(want) != 2*tasks {
			t.Fatalf("%d items, want %d", len(want), 2*tasks)
		}
		// A reasoning on a verdict, checks on unjudged items (and after a
		// verdict, where the judge still names the item), and grades.
		storetest.Exec(t, st, `UPDATE scores SET reasoning = 'why' WHERE item_id = ? AND metric = 'score'`, want[0].ID)
		for _, i := range []int{1, 999, 1399} {
			for _, check := range []string{"check:exact_match", "check:contains"} {
				storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, source, metric, score, created_at)
					SELECT run_id, id, run_target_id, ?, ?, 1, CURRENT_TIMESTAMP FROM items WHERE run_id = ? AND id = ?`,
					check, check[len("check:"):], run.ID, want[i].ID)
			}
		}
		storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, source, metric, score, created_at)
					SELECT run_id, id, run_target_id, 'check:regex', 'regex', 0, CURRENT_TIMESTAMP FROM items WHERE run_id = ? AND id = ?`,
			run.ID, want[0].ID)
		for _, i := range []int{0, 1, 1200} {
			if _, err := st.SetGrade(ctx, want[i].ID, store.GradeInput{Grade: "partial"}); err != nil {
				t.Fatal(err)
			}
		}
		want = allItems(t, st, run.ID)
		if want[0].Judge == "" || want[0].Reasoning != "why" || want[1].Judge != "check:exact_match check:contains" || want[1].Grade == nil {
			t.Fatalf("fixture: item 0 judge %q reasoning %q, item 1 judge %q grade %v", want[0].Judge, want[0].Reasoning, want[1].Judge, want[1].Grade)
		}
		// Compared during the call: the item is valid only then.
		n := 0
		err = st.EachRunItem(ctx, run.ID, func(v *store.ItemView) error {
			if n < len(want) && !reflect.DeepEqual(*v, want[n]) {
				return fmt.Errorf("item %d:\nexport %+v\npage   %+v", n, *v, want[n])
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(want) {
			t.Fatalf("exported %d items, want %d", n, len(want))
		}
	})
}

// allItems reads every item of a run through RunItems, page after page.
func allItems(t *testing.T, st *store.Store, runID int64) []store.ItemView {
	t.Helper()
	var out []store.ItemView
	for {
		f := store.ItemFilter{PerPage: 500}
		if len(out) > 0 {
			f.AfterID = out[len(out)-1].ID
		}
		page, err := st.RunItems(context.Background(), runID, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == 0 {
			return out
		}
		out = append(out, page.Items...)
	}
}

// TestEachExportItemStopsOnError: an error from fn ends the export with
// that error while the next batch is being read, and the store reads on.
func TestEachExportItemStopsOnError(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 2500) // × 2 models: three export batches
		ins := make([]store.TaskInput, len(keys))
		for i := range keys {
			keys[i] = fmt.Sprintf("t%04d", i)
			ins[i] = store.TaskInput{TaskKey: keys[i], Category: "c", Question: "q"}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"a", "b"}, keys, nil)
		stop := errors.New("client went away")
		for _, at := range []int{1, 2500} {
			n := 0
			err := st.EachExportItem(ctx, run.ID, func(*store.ExportItem) error {
				if n++; n == at {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || n != at {
				t.Fatalf("stop at %d: %v after %d items", at, err, n)
			}
		}
		n := 0
		if err := st.EachRunItem(ctx, run.ID, func(*store.ItemView) error { n++; return nil }); err != nil || n != 2*len(keys) {
			t.Fatalf("after the stops: %d items, %v", n, err)
		}
	})
}
