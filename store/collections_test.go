package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// "Add all matching" adds exactly the tasks the same filter lists, counts
// only those not yet in the collection, and leaves other collections alone.
func TestAddMatchingTasks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for i, c := range []string{"math", "math", "math", "prose", "prose"} {
			in := store.TaskInput{TaskKey: fmt.Sprintf("%s-%d", c, i), Category: c, Question: fmt.Sprintf("question %d", i)}
			if i == 1 {
				in.Question = "100% sure_thing" // LIKE's wildcards are matched literally
			}
			if _, err := st.CreateTask(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "Math", TaskIDs: &[]store.TaskRef{{Key: "math-0"}}})
		if err != nil {
			t.Fatal(err)
		}
		other, err := st.CreateCollection(ctx, store.CollectionInput{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		f := store.TaskFilter{Category: "math", Page: 2, PerPage: 1} // paging is ignored
		listed, err := st.Tasks(ctx, store.TaskFilter{Category: "math"})
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.AddMatchingTasks(ctx, col.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		if want := listed.Total - 1; n != want { // math-0 was in already
			t.Errorf("added %d, want %d", n, want)
		}
		got, _ := st.Collection(ctx, col.ID)
		if got.TaskCount != listed.Total {
			t.Errorf("collection holds %d tasks, want the %d listed", got.TaskCount, listed.Total)
		}
		if n, err := st.AddMatchingTasks(ctx, col.ID, f); err != nil || n != 0 {
			t.Errorf("adding again: %d, %v; want 0, nil", n, err)
		}
		if o, _ := st.Collection(ctx, other.ID); o.TaskCount != 0 {
			t.Errorf("another collection changed: %d tasks", o.TaskCount)
		}
		if n, err := st.AddMatchingTasks(ctx, other.ID, store.TaskFilter{Query: "0% SURE_"}); err != nil || n != 1 {
			t.Errorf("a search for the one task with %%: added %d, %v; want 1", n, err)
		}
		if n, err := st.AddMatchingTasks(ctx, other.ID, store.TaskFilter{Query: "%"}); err != nil || n != 0 {
			t.Errorf("%% is not a wildcard: added %d, %v; want 0", n, err)
		}
		var nf *store.NotFoundError
		if _, err := st.AddMatchingTasks(ctx, col.ID+other.ID+100, f); !errors.As(err, &nf) {
			t.Errorf("missing collection: %v, want not found", err)
		}
	})
}
