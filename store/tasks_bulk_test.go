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

// A task made in bulk reads back exactly as the same task made alone.
func TestCreateTasksStoresEveryField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		full := func(key string) store.TaskInput {
			return store.TaskInput{TaskKey: key, Category: "math", Subcategory: "algebra", Question: "2+2?",
				Excellent: "4, shown", Good: "4", Pass: "four", IncorrectAnswerDirection: "5", Reference: "4",
				Turns: []string{"2+2?", "and 3+3?"}, SystemPrompt: "be brief", UseCase: "school", Tags: []string{"easy", "Sums"},
				Constraints: "max_words: 10", Examples: "1+1=2", JudgeInstructions: "strict", Comments: "c", Input: "data",
				Checks:   []store.Check{{Type: "exact_match"}, {Type: "contains", Value: "4"}},
				Metadata: map[string]string{"source": "unit", "level": "1"}}
		}
		alone, err := st.CreateTask(ctx, full("alone"))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateTasks(ctx, []store.TaskInput{full("bulk"), {TaskKey: "bare", Category: "c", Question: "q"}}); err != nil {
			t.Fatal(err)
		}
		page, err := st.Tasks(ctx, store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]store.Task{}
		for _, task := range page.Items {
			byKey[task.TaskKey] = task
		}
		bulk := byKey["bulk"]
		if bulk.ID == 0 || bulk.CreatedAt.IsZero() || !bulk.UpdatedAt.Equal(bulk.CreatedAt) {
			t.Errorf("bulk task: id %d, created %v, updated %v", bulk.ID, bulk.CreatedAt, bulk.UpdatedAt)
		}
		want := *alone
		want.ID, want.TaskKey, want.CreatedAt, want.UpdatedAt = bulk.ID, bulk.TaskKey, bulk.CreatedAt, bulk.UpdatedAt
		if !reflect.DeepEqual(want, bulk) {
			t.Errorf("bulk task differs from one made alone:\n got %+v\nwant %+v", bulk, want)
		}
		bare := byKey["bare"]
		if bare.Turns == nil || bare.Tags == nil || bare.Checks == nil || bare.Metadata == nil {
			t.Errorf("bare task's lists read back nil: %+v", bare)
		}
	})
}

// CreateTasks is all or nothing across its statements: a taken task_id
// in the last of several chunks leaves no task of the batch behind, and
// an invalid task names its index.
func TestCreateTasksAllOrNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "taken", Category: "c", Question: "q"}); err != nil {
			t.Fatal(err)
		}
		ins := make([]store.TaskInput, 12_001)
		for i := range ins {
			ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("t-%05d", i), Category: "c", Question: "q"}
		}
		ins[len(ins)-1].TaskKey = "taken"
		if err := st.CreateTasks(ctx, ins); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a taken task_id: %v, want a conflict", err)
		}
		if page, _ := st.Tasks(ctx, store.TaskFilter{}); page.Total != 1 {
			t.Errorf("%d tasks after the failed batch, want the 1 there before", page.Total)
		}
		ins[len(ins)-1].TaskKey = "t-00000"
		if err := st.CreateTasks(ctx, ins); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a task_id repeated in the batch: %v, want a conflict", err)
		}
		ins[len(ins)-1] = store.TaskInput{TaskKey: "no-question", Category: "c"}
		var ve *store.ValidationError
		if err := st.CreateTasks(ctx, ins); !errors.As(err, &ve) || ve.Field != "tasks[12000].question" {
			t.Fatalf("an invalid task: %v, want a validation error on tasks[12000].question", err)
		}
		ins[len(ins)-1].Question = "q"
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		if page, _ := st.Tasks(ctx, store.TaskFilter{}); page.Total != int64(len(ins))+1 {
			t.Errorf("%d tasks, want %d", page.Total, len(ins)+1)
		}
	})
}

// A collection takes thousands of tasks named by id and by task_id at
// once, each once; unknown refs are named; removal takes the ones named.
func TestCollectionManyTaskRefs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const n = 2500
		ins := make([]store.TaskInput, n)
		for i := range ins {
			ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("k-%05d", i), Category: "c", Question: "q"}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		one, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "by-id", Category: "c", Question: "q"})
		if err != nil {
			t.Fatal(err)
		}
		refs := []store.TaskRef{{ID: one.ID}, {Key: "by-id"}} // the same task twice
		for _, in := range ins {
			refs = append(refs, store.TaskRef{Key: in.TaskKey})
		}
		var ve *store.ValidationError
		bad := append(append([]store.TaskRef{}, refs...), store.TaskRef{Key: "nope"}, store.TaskRef{ID: one.ID + 1_000_000})
		if _, err := st.CreateCollection(ctx, store.CollectionInput{Name: "bad", TaskIDs: &bad}); !errors.As(err, &ve) ||
			ve.Message != fmt.Sprintf(`no such task: "nope", %d`, one.ID+1_000_000) {
			t.Fatalf("unknown refs: %v, want a validation error naming both", err)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "many", TaskIDs: &refs})
		if err != nil {
			t.Fatal(err)
		}
		if col.TaskCount != n+1 || len(col.TaskIDs) != n+1 {
			t.Fatalf("collection holds %d tasks (%d ids), want %d", col.TaskCount, len(col.TaskIDs), n+1)
		}
		remove := []store.TaskRef{{ID: one.ID}, {Key: "k-00000"}, {Key: "k-02499"}}
		col, err = st.PatchCollectionTasks(ctx, col.ID, refs[:1], remove)
		if err != nil {
			t.Fatal(err)
		}
		members, err := st.CollectionMembers(ctx, col.ID, []int64{one.ID})
		if err != nil {
			t.Fatal(err)
		}
		if col.TaskCount != n-2 || members[one.ID] {
			t.Errorf("after removing 3: %d tasks (by-id member: %v), want %d", col.TaskCount, members[one.ID], n-2)
		}
	})
}
