package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestGradingPlaceOneJudge pins the grading queue of a run with one judge
// on a mixed run (two models, completed and unanswered items, grades from
// before and during the session): for every filter and session kind, and
// every item asked for (queued, graded before, outside the filter, none),
// the place is the one the queue's definition gives — the items not graded
// before the session, then those graded before, each by id — and the
// panel's statement, whose spreads are all 0 with one judge, agrees.
func TestGradingPlaceOneJudge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 8)
		ins := make([]store.TaskInput, len(keys))
		for i := range keys {
			keys[i] = fmt.Sprintf("t%d", i)
			ins[i] = store.TaskInput{TaskKey: keys[i], Category: "c", Question: "q " + keys[i]}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		var results []storetest.ItemResult
		for i := 0; i < len(keys); i += 3 { // the rest stay NEW
			results = append(results, storetest.ItemResult{Model: "a", Task: keys[i], Overall: 0.5}, storetest.ItemResult{Model: "b", Task: keys[i], Overall: 0.7})
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"a", "b"}, keys, results)
		all, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		since := time.Now().Add(-time.Hour)
		gradedAt := map[int64]time.Time{}
		grade := func(i int, at time.Time) {
			id := all.Items[i].ID
			if _, err := st.SetGrade(ctx, id, store.GradeInput{Grade: "correct"}); err != nil {
				t.Fatal(err)
			}
			storetest.Exec(t, st, `UPDATE grades SET updated_at = ? WHERE item_id = ?`, at.UTC(), id)
			gradedAt[id] = at
		}
		for _, i := range []int{1, 4, 5, 12} { // graded before the session: the queue's tail
			grade(i, since.Add(-time.Minute))
		}
		for _, i := range []int{2, 9, 15} { // graded during it: they keep their places
			grade(i, since.Add(time.Minute))
		}
		filters := []store.ItemFilter{{}, {Model: "a"}, {Status: store.ItemCompleted}, {Status: store.ItemFailed}}
		for _, f := range filters {
			for _, ungradedOnly := range []bool{false, true} {
				g := store.GradingSession{Filter: f, UngradedOnly: ungradedOnly, Since: since}
				page, err := st.RunItems(ctx, run.ID, store.ItemFilter{Status: f.Status, Model: f.Model, PerPage: 100})
				if err != nil {
					t.Fatal(err)
				}
				asks := []int64{0, all.Items[0].ID, all.Items[1].ID, all.Items[2].ID, all.Items[len(all.Items)-1].ID}
				for _, it := range page.Items {
					asks = append(asks, it.ID)
				}
				for _, ask := range asks {
					want := expectedPlace(page.Items, gradedAt, g, ask)
					got, err := st.GradingPlace(ctx, run.ID, g, ask)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("%+v ungraded only %v, item %d:\n got %+v\nwant %+v", f, ungradedOnly, ask, got, want)
					}
					panel, err := st.PanelGradingPlace(ctx, run.ID, g, ask)
					if err != nil {
						t.Fatal(err)
					}
					if panel != want {
						t.Errorf("%+v ungraded only %v, item %d: the panel's statement gives\n %+v\nwant %+v", f, ungradedOnly, ask, panel, want)
					}
				}
			}
		}
		// A total the caller knows is taken as it is.
		n := int64(99)
		got, err := st.GradingPlace(ctx, run.ID, store.GradingSession{Filter: store.ItemFilter{Total: &n}, Since: since}, 0)
		if err != nil || got.Total != 99 || got.Queue != 99 {
			t.Errorf("with a known total: %+v, %v", got, err)
		}
	})
}

// expectedPlace is GradingPlace by the queue's definition, over the
// filter's items in id order.
func expectedPlace(items []store.ItemView, gradedAt map[int64]time.Time, g store.GradingSession, ask int64) store.GradingPlace {
	var fresh, old, queue []int64
	p := store.GradingPlace{Total: int64(len(items))}
	for _, it := range items {
		at, graded := gradedAt[it.ID]
		if graded {
			p.Graded++
		}
		if graded && at.Before(g.Since) {
			old = append(old, it.ID)
		} else {
			fresh = append(fresh, it.ID)
		}
	}
	queue = fresh
	if !g.UngradedOnly {
		queue = append(slices.Clone(fresh), old...)
	}
	p.Queue = int64(len(queue))
	if len(queue) == 0 {
		return p
	}
	at := max(slices.Index(queue, ask), 0)
	p.ItemID, p.Position = queue[at], int64(at)+1
	if at > 0 {
		p.PrevID = queue[at-1]
	}
	if at+1 < len(queue) {
		p.NextID = queue[at+1]
	}
	ungraded := func(id int64) bool { _, graded := gradedAt[id]; return !graded && id != ask }
	from := 0 // where to look for the next to grade: after the item asked for, when queued
	if queue[at] == ask {
		from = at + 1
	}
	for _, span := range [][]int64{queue[from:], queue} {
		if i := slices.IndexFunc(span, ungraded); i >= 0 {
			p.NextToGrade = span[i]
			return p
		}
	}
	p.NextToGrade = ask
	if queue[at] == ask && p.NextID != 0 {
		p.NextToGrade = p.NextID
	}
	return p
}
