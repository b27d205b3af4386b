package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunPicksTasksByUseCaseAndCategory: a run draws on its collections,
// use cases and categories together (each task once), a category counts
// within its use case only, and a name no task has is refused.
func TestRunPicksTasksByUseCaseAndCategory(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]int64{}
		for _, tk := range []struct{ key, uc, cat string }{
			{"a1", "support", "refunds"}, {"a2", "support", "shipping"},
			{"b1", "sales", "refunds"}, {"b2", "sales", "leads"}, {"c1", "", "misc"},
		} {
			task, err := st.CreateTask(ctx, store.TaskInput{TaskKey: tk.key, UseCase: tk.uc, Category: tk.cat, Question: "q " + tk.key})
			if err != nil {
				t.Fatal(err)
			}
			ids[tk.key] = task.ID
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "col", TaskIDs: &[]store.TaskRef{{ID: ids["c1"]}, {ID: ids["a1"]}}})
		if err != nil {
			t.Fatal(err)
		}
		base := store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"}, Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}}}
		frozen := func(in store.RunInput) []string {
			t.Helper()
			run, err := st.CreateRun(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := st.RunTasksFrom(ctx, run.ID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, tk := range tasks {
				keys = append(keys, tk.TaskKey)
			}
			return keys
		}
		for _, tc := range []struct {
			name string
			edit func(*store.RunInput)
			want []string
		}{
			{"use case", func(in *store.RunInput) { in.UseCases = []string{"support"} }, []string{"a1", "a2"}},
			{"category within its use case", func(in *store.RunInput) {
				in.Categories = []store.CategoryRef{{UseCase: "sales", Category: "refunds"}}
			}, []string{"b1"}},
			{"collection, use case and category together", func(in *store.RunInput) {
				in.CollectionIDs = []int64{col.ID}
				in.UseCases = []string{" support "}
				in.Categories = []store.CategoryRef{{UseCase: "sales", Category: "leads"}, {UseCase: "support", Category: "refunds"}}
			}, []string{"a1", "a2", "b2", "c1"}},
			{"the task selection applies to the pool", func(in *store.RunInput) {
				in.UseCases = []string{"sales"}
				in.TaskSelection = &store.TaskSelection{Mode: store.SelectTop, N: 1}
			}, []string{"b1"}},
		} {
			in := base
			tc.edit(&in)
			if got := frozen(in); !slices.Equal(got, tc.want) {
				t.Errorf("%s: froze %v, want %v", tc.name, got, tc.want)
			}
		}
		for _, tc := range []struct {
			edit  func(*store.RunInput)
			field string
		}{
			{func(in *store.RunInput) { in.UseCases = []string{"nope"} }, "usecases[0]"},
			{func(in *store.RunInput) {
				in.Categories = []store.CategoryRef{{UseCase: "support", Category: "leads"}}
			}, "categories[0]"},
			{func(in *store.RunInput) {}, "collection_ids"},
		} {
			in := base
			tc.edit(&in)
			var ve *store.ValidationError
			if _, err := st.CreateRun(ctx, in); !errors.As(err, &ve) || ve.Field != tc.field {
				t.Errorf("want a validation error on %s, got %v", tc.field, err)
			}
		}
	})
}
