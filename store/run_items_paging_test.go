package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunItemsPaging: whichever way a page is reached — by its number
// (from the start or, in the second half, from the end), by the cursor
// after the previous page's last id or before the next page's first — it
// holds the same items, those of the filtered list in id order cut into
// pages; a known total is taken as it is.
func TestRunItemsPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 23)
		ins := make([]store.TaskInput, len(keys))
		for i := range keys {
			keys[i] = fmt.Sprintf("t%02d", i)
			ins[i] = store.TaskInput{TaskKey: keys[i], Category: "c", Question: "q " + keys[i]}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		var results []storetest.ItemResult
		for i := 0; i < len(keys); i += 2 { // the rest stay NEW
			results = append(results, storetest.ItemResult{Model: "a", Task: keys[i], Overall: 0.5}, storetest.ItemResult{Model: "c", Task: keys[i], Overall: 0.5})
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"a", "b", "c"}, keys, results)
		all, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: 500})
		if err != nil {
			t.Fatal(err)
		}
		const perPage = 7
		for _, f := range []store.ItemFilter{{}, {Model: "a"}, {Status: store.ItemCompleted}, {Status: store.ItemNew, Model: "b"}, {Status: store.ItemFailed}} {
			var want [][]int64 // the filtered list's pages
			var list []int64
			for _, it := range all.Items {
				if (f.Model == "" || it.Model == f.Model) && (f.Status == "" || it.Status == f.Status) {
					list = append(list, it.ID)
				}
			}
			for chunk := range slices.Chunk(list, perPage) {
				want = append(want, chunk)
			}
			read := func(g store.ItemFilter) store.Page[store.ItemView] {
				t.Helper()
				g.Status, g.Model, g.PerPage = f.Status, f.Model, perPage
				page, err := st.RunItems(ctx, run.ID, g)
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != int64(len(list)) {
					t.Errorf("%+v: total %d, want %d", f, page.Total, len(list))
				}
				return page
			}
			for n, ids := range want {
				if got := idsOf(read(store.ItemFilter{Page: n + 1})); !slices.Equal(got, ids) {
					t.Errorf("%+v page %d by number: %v, want %v", f, n+1, got, ids)
				}
				if n > 0 {
					if got := idsOf(read(store.ItemFilter{AfterID: want[n-1][perPage-1]})); !slices.Equal(got, ids) {
						t.Errorf("%+v page %d after the previous: %v, want %v", f, n+1, got, ids)
					}
				}
				if n+1 < len(want) {
					if got := idsOf(read(store.ItemFilter{BeforeID: want[n+1][0]})); !slices.Equal(got, ids) {
						t.Errorf("%+v page %d before the next: %v, want %v", f, n+1, got, ids)
					}
				}
			}
			if got := idsOf(read(store.ItemFilter{Page: len(want) + 1})); len(got) != 0 {
				t.Errorf("%+v past the last page: %v", f, got)
			}
		}
		// A run's ids need not be dense (one creation statement makes them
		// so, but nothing promises it): with a hole, a page by number is
		// found by the index walk.
		hole := all.Items[len(all.Items)/2].ID
		storetest.Exec(t, st, `DELETE FROM items WHERE id = ?`, hole)
		rest := slices.DeleteFunc(idsOf(all), func(id int64) bool { return id == hole })
		for n, ids := range slices.Collect(slices.Chunk(rest, perPage)) {
			page, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: perPage, Page: n + 1})
			if err != nil || !slices.Equal(idsOf(page), ids) {
				t.Errorf("with a hole, page %d by number: %v, want %v (%v)", n+1, idsOf(page), ids, err)
			}
		}
		all.Items = slices.DeleteFunc(all.Items, func(it store.ItemView) bool { return it.ID == hole })
		n := int64(len(all.Items))
		if page, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: perPage, Page: 2, Total: &n}); err != nil ||
			!slices.Equal(idsOf(page), idsOf(all)[perPage:2*perPage]) {
			t.Errorf("page 2 with a known total: %v, %v", idsOf(page), err)
		}
	})
}

func idsOf(p store.Page[store.ItemView]) []int64 {
	out := []int64{}
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}
