package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

func importTasks(keys ...string) []store.TaskInput {
	out := make([]store.TaskInput, len(keys))
	for i, k := range keys {
		out[i] = store.TaskInput{TaskKey: k, Category: "cat", Question: "Question " + k + "?", Reference: "ref " + k}
	}
	return out
}

// TestUpsertTasks: an import creates new tasks, updates those whose task_id
// exists (never duplicating them), reports which, and adds all of them to
// the named collection, creating it once.
func TestUpsertTasks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: importTasks("a", "b"), Collection: "imported", CollectionTags: []string{"team-a"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != 2 || res.Updated != 0 || !res.CollectionCreated || res.Collection.TaskCount != 2 ||
			!reflect.DeepEqual(res.TaskIDs, []string{"a", "b"}) || !reflect.DeepEqual([]string(res.Collection.Tags), []string{"team-a"}) {
			t.Fatalf("first import: %+v (collection %+v)", res, res.Collection)
		}
		again := importTasks("b", "c")
		again[0].Question = "Changed?"
		res, err = st.UpsertTasks(ctx, store.ImportInput{Tasks: again, Collection: "imported", CollectionTags: []string{"team-b"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != 1 || res.Updated != 1 || res.CollectionCreated || !reflect.DeepEqual(res.UpdatedIDs, []string{"b"}) ||
			!reflect.DeepEqual(res.CreatedIDs, []string{"c"}) || res.Collection.TaskCount != 3 {
			t.Fatalf("re-import: %+v (collection %+v)", res, res.Collection)
		}
		if !reflect.DeepEqual([]string(res.Collection.Tags), []string{"team-a", "team-b"}) {
			t.Errorf("collection tags = %v", res.Collection.Tags)
		}
		page, err := st.Tasks(ctx, store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 3 {
			t.Fatalf("%d tasks, want 3 (no duplicates)", page.Total)
		}
		for _, task := range page.Items {
			if task.TaskKey == "b" && task.Question != "Changed?" {
				t.Errorf("b was not updated: %q", task.Question)
			}
		}
		cols, _ := st.Collections(ctx)
		if len(cols) != 1 {
			t.Errorf("%d collections, want 1", len(cols))
		}
	})
}

// TestUpsertTasksAllOrNothing: one bad task, or a task_id twice, imports nothing.
func TestUpsertTasksAllOrNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		bad := importTasks("a", "b", "c")
		bad[2].Question = ""
		_, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: bad, Collection: "x"})
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != "tasks[2].question" {
			t.Fatalf("err = %v, want a validation error on tasks[2].question", err)
		}
		_, err = st.UpsertTasks(ctx, store.ImportInput{Tasks: importTasks("a", "b", "a"), Collection: "x"})
		if !errors.As(err, &ve) || ve.Field != "tasks[2].task_id" {
			t.Fatalf("err = %v, want a validation error on tasks[2].task_id", err)
		}
		page, _ := st.Tasks(ctx, store.TaskFilter{})
		cols, _ := st.Collections(ctx)
		if page.Total != 0 || len(cols) != 0 {
			t.Fatalf("a failed import wrote %d tasks and %d collections", page.Total, len(cols))
		}
	})
}

// TestUpsertTasksDryRun reports what would change and writes nothing.
func TestUpsertTasksDryRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: importTasks("a")}); err != nil {
			t.Fatal(err)
		}
		res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: importTasks("a", "b"), Collection: "new", DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != 1 || res.Updated != 1 || !res.CollectionCreated || !res.DryRun {
			t.Fatalf("dry run: %+v", res)
		}
		page, _ := st.Tasks(ctx, store.TaskFilter{})
		cols, _ := st.Collections(ctx)
		if page.Total != 1 || len(cols) != 0 {
			t.Fatalf("a dry run wrote: %d tasks, %d collections", page.Total, len(cols))
		}
	})
}

// selectionRun starts a run on a collection of tasks t01…t10 with sel and ids.
func selectionRun(t *testing.T, st *store.Store, sel *store.TaskSelection, ids []store.TaskRef) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for i := 1; i <= 10; i++ {
		keys = append(keys, fmt.Sprintf("t%02d", i))
	}
	res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: importTasks(keys...), Collection: "ten"})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := st.Providers(ctx)
	var pid int64
	if len(ps) == 0 {
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		pid = p.ID
	} else {
		pid = ps[0].ID
	}
	run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: pid, Model: "j"},
		Targets: []store.ModelRef{{ProviderID: pid, Model: "m", Tags: []string{"local"}}}, CollectionIDs: []int64{res.Collection.ID},
		TaskSelection: sel, TaskIDs: ids, Tags: []string{"Nightly", "team-a"}})
	if err != nil {
		return nil, err
	}
	tasks, err := st.RunTaskList(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rt := range tasks {
		got = append(got, rt.TaskKey)
	}
	// Leave no active run behind for the next call.
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
		t.Fatal(err)
	}
	return got, nil
}

// TestTaskSelection: the query picker takes all tasks, N from the top or the
// bottom, N at random (the same seed, the same tasks), or hand-picked ones.
func TestTaskSelection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		pick := func(sel *store.TaskSelection, ids ...store.TaskRef) []string {
			t.Helper()
			got, err := selectionRun(t, st, sel, ids)
			if err != nil {
				t.Fatalf("%+v %v: %v", sel, ids, err)
			}
			return got
		}
		if got := pick(nil); len(got) != 10 {
			t.Errorf("all: %v", got)
		}
		if got := pick(&store.TaskSelection{Mode: "top", N: 3}); !reflect.DeepEqual(got, []string{"t01", "t02", "t03"}) {
			t.Errorf("top 3: %v", got)
		}
		if got := pick(&store.TaskSelection{Mode: "bottom", N: 2}); !reflect.DeepEqual(got, []string{"t09", "t10"}) {
			t.Errorf("bottom 2: %v", got)
		}
		r1 := pick(&store.TaskSelection{Mode: "random", N: 4, Seed: 7})
		r2 := pick(&store.TaskSelection{Mode: "random", N: 4, Seed: 7})
		r3 := pick(&store.TaskSelection{Mode: "random", N: 4, Seed: 8})
		if len(r1) != 4 || !reflect.DeepEqual(r1, r2) || !slices.IsSorted(r1) {
			t.Errorf("random seed 7 twice: %v and %v", r1, r2)
		}
		if reflect.DeepEqual(r1, r3) {
			t.Errorf("seeds 7 and 8 picked the same tasks %v (possible, but unlikely enough to flag)", r1)
		}
		if got := pick(nil, store.TaskRef{Key: "t05"}, store.TaskRef{Key: "t02"}); !reflect.DeepEqual(got, []string{"t02", "t05"}) {
			t.Errorf("hand-picked: %v", got)
		}
		if got := pick(&store.TaskSelection{Mode: "top", N: 1}, store.TaskRef{Key: "t05"}, store.TaskRef{Key: "t02"}); !reflect.DeepEqual(got, []string{"t02"}) {
			t.Errorf("top 1 of hand-picked: %v", got)
		}
		if got := pick(&store.TaskSelection{Mode: "top", N: 50}); len(got) != 10 {
			t.Errorf("top 50 of 10: %v", got)
		}
		var ve *store.ValidationError
		if _, err := selectionRun(t, st, &store.TaskSelection{Mode: "random"}, nil); !errors.As(err, &ve) || ve.Field != "task_selection.n" {
			t.Errorf("random without n: %v", err)
		}
		if _, err := selectionRun(t, st, &store.TaskSelection{Mode: "sideways", N: 1}, nil); !errors.As(err, &ve) || ve.Field != "task_selection.mode" {
			t.Errorf("unknown mode: %v", err)
		}
		ctx := context.Background()
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "outside", Category: "c", Question: "q"}); err != nil {
			t.Fatal(err)
		}
		if _, err := selectionRun(t, st, nil, []store.TaskRef{{Key: "t01"}, {Key: "outside"}}); !errors.As(err, &ve) || ve.Field != "task_ids" {
			t.Errorf("a task outside the collections: %v", err)
		}
	})
}

// TestTags: runs, their targets and collections carry tags, and lists filter by one.
func TestTags(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := selectionRun(t, st, nil, nil); err != nil {
			t.Fatal(err)
		}
		runs, err := st.Runs(ctx, store.RunFilter{Tag: "nightly"})
		if err != nil {
			t.Fatal(err)
		}
		if runs.Total != 1 || !reflect.DeepEqual([]string(runs.Items[0].Tags), []string{"Nightly", "team-a"}) ||
			!reflect.DeepEqual([]string(runs.Items[0].Targets[0].Tags), []string{"local"}) {
			t.Fatalf("runs tagged nightly: %+v", runs.Items)
		}
		if runs, _ := st.Runs(ctx, store.RunFilter{Tag: "team"}); runs.Total != 0 {
			t.Errorf("the tag filter matched part of a tag: %d runs", runs.Total)
		}
		cols, _ := st.Collections(ctx)
		tags := []string{"eval", "team-b"}
		if _, err := st.UpdateCollection(ctx, cols[0].ID, store.CollectionInput{Name: cols[0].Name, Tags: &tags}); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.CollectionsTagged(ctx, "EVAL"); len(got) != 1 || !got[0].Tags.Has("team-b") {
			t.Errorf("collections tagged eval: %+v", got)
		}
		if got, _ := st.CollectionsTagged(ctx, "other"); len(got) != 0 {
			t.Errorf("collections tagged other: %+v", got)
		}
		all, err := st.AllTags(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(all, []string{"eval", "Nightly", "team-a", "team-b"}) {
			t.Errorf("AllTags = %v", all)
		}
		if _, err := st.SetRunTags(ctx, runs.Items[0].ID, []string{" x ", "X", ""}); err != nil {
			t.Fatal(err)
		}
		if r, _ := st.Run(ctx, runs.Items[0].ID); !reflect.DeepEqual([]string(r.Tags), []string{"x"}) {
			t.Errorf("run tags after SetRunTags = %v", r.Tags)
		}
	})
}
