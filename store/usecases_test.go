package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestUseCasesSavedAndNamedByTasks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, tk := range []store.TaskInput{
			{TaskKey: "a", Category: "chunking", Question: "q", UseCase: "lecture notes"},
			{TaskKey: "b", Category: "chunking", Question: "q", UseCase: "lecture notes"},
			{TaskKey: "c", Category: "summary", Question: "q", UseCase: "lecture notes"},
			{TaskKey: "d", Category: "math", Question: "q", UseCase: "grading"},
		} {
			if _, err := st.CreateTask(ctx, tk); err != nil {
				t.Fatal(err)
			}
		}
		uc, err := st.CreateUseCase(ctx, store.UseCaseInput{Name: " lecture notes ", Goal: " Split transcripts ",
			Constraints:            map[string]any{"chunk_min": 500, "chunk_max": 2000.0, "coverage_required": true},
			DefaultCandidateModels: []string{"openai/gpt-4o-mini", " ", "openai/gpt-4o-mini", "anthropic/claude-haiku"},
			ContextNeededTokens:    32000})
		if err != nil {
			t.Fatal(err)
		}
		if uc.Name != "lecture notes" || uc.Goal != "Split transcripts" || uc.CostPriority != store.CostBalanced ||
			uc.Tasks != 3 || len(uc.Categories) != 2 || uc.Categories[0] != (store.CategoryCount{Name: "chunking", Tasks: 2}) ||
			strings.Join(uc.DefaultCandidateModels, ",") != "openai/gpt-4o-mini,anthropic/claude-haiku" ||
			uc.Constraints["chunk_min"] != 500.0 || uc.Constraints["coverage_required"] != true {
			t.Errorf("created = %+v", uc)
		}
		if _, err := st.CreateUseCase(ctx, store.UseCaseInput{Name: "lecture notes"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name: %v", err)
		}

		// The list holds saved and task-only use cases, by name.
		list, err := st.UseCases(ctx)
		if err != nil || len(list) != 2 {
			t.Fatalf("UseCases = %+v, %v", list, err)
		}
		if list[0].Name != "grading" || list[0].ID != 0 || list[0].Tasks != 1 || list[1].ID != uc.ID || list[1].Goal != "Split transcripts" {
			t.Errorf("UseCases = %+v", list)
		}

		// Renaming carries the name to the tasks.
		in := uc.UseCaseInput
		in.Name, in.CostPriority = "lectures", "LOW"
		up, err := st.UpdateUseCase(ctx, uc.ID, in)
		if err != nil || up.Name != "lectures" || up.CostPriority != store.CostLow || up.Tasks != 3 {
			t.Fatalf("UpdateUseCase = %+v, %v", up, err)
		}
		if _, err := st.UseCaseNamed(ctx, "lecture notes"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("old name still found: %v", err)
		}

		// Saving by name replaces the fields of the saved one or creates it.
		again, created, err := st.SaveUseCase(ctx, store.UseCaseInput{Name: "lectures", Notes: "v2"})
		if err != nil || created || again.ID != uc.ID || again.Notes != "v2" || again.Goal != "" {
			t.Errorf("SaveUseCase existing = %+v, %v, %v", again, created, err)
		}
		fresh, created, err := st.SaveUseCase(ctx, store.UseCaseInput{Name: "grading", CostPriority: "high"})
		if err != nil || !created || fresh.Tasks != 1 {
			t.Errorf("SaveUseCase new = %+v, %v, %v", fresh, created, err)
		}
		if _, err := st.UpdateUseCase(ctx, fresh.ID, store.UseCaseInput{Name: "lectures"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("rename onto another: %v", err)
		}
	})
}

func TestUseCaseInputChecks(t *testing.T) {
	for _, c := range []struct {
		in    store.UseCaseInput
		field string
	}{
		{store.UseCaseInput{}, "name"},
		{store.UseCaseInput{Name: "x", CostPriority: "cheap"}, "cost_priority"},
		{store.UseCaseInput{Name: "x", ContextNeededTokens: -1}, "context_needed_tokens"},
		{store.UseCaseInput{Name: "x", Constraints: map[string]any{"chunk_min": 10.0, "chunk_max": 5.0}}, "constraints"},
		{store.UseCaseInput{Name: "x", Constraints: map[string]any{"min_words": 100.0, "max_words": 10.0}}, "constraints"},
		{store.UseCaseInput{Name: "x", Constraints: map[string]any{"nested": map[string]any{}}}, "constraints.nested"},
		{store.UseCaseInput{Name: "x", DefaultCandidateModels: []string{strings.Repeat("m", 256)}}, "default_candidate_models"},
	} {
		err := c.in.Normalize()
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%+v: err = %v, want a problem with %s", c.in, err, c.field)
		}
	}
}

// TestRunFreezesUseCaseFields: a run's tasks, picked by hand or a whole
// collection, carry their saved use case's goal, notes and constraints; a
// task without a saved one carries nothing; deleting the use case leaves
// the run as it was.
func TestRunFreezesUseCaseFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		var refs []store.TaskRef
		for _, tk := range []store.TaskInput{
			{TaskKey: "a", Category: "c", Question: "q", UseCase: "lectures"},
			{TaskKey: "b", Category: "c", Question: "q", UseCase: "unsaved"},
			{TaskKey: "c", Category: "c", Question: "q"},
		} {
			task, err := st.CreateTask(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			refs = append(refs, store.TaskRef{ID: task.ID})
		}
		uc, err := st.CreateUseCase(ctx, store.UseCaseInput{Name: "lectures", Goal: "Chunk", Notes: "N", Constraints: map[string]any{"chunk_min": 500}})
		if err != nil {
			t.Fatal(err)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "all", TaskIDs: &refs})
		if err != nil {
			t.Fatal(err)
		}
		for name, picked := range map[string][]store.TaskRef{"whole collection": nil, "hand-picked": refs[:2]} {
			run, err := st.CreateRun(ctx, store.RunInput{Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}},
				Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"}, CollectionIDs: []int64{col.ID}, TaskIDs: picked})
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := st.RunTaskList(ctx, run.ID)
			if err != nil || len(tasks) < 2 {
				t.Fatalf("%s: %d tasks, %v", name, len(tasks), err)
			}
			if f := tasks[0].UseCaseFields; f.Goal != "Chunk" || f.Notes != "N" || f.Constraints["chunk_min"] != 500.0 {
				t.Errorf("%s: task a froze %+v", name, f)
			}
			if f := tasks[1].UseCaseFields; f.Goal != "" || len(f.Constraints) != 0 {
				t.Errorf("%s: task b (no saved use case) froze %+v", name, f)
			}
			if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
				t.Fatal(err)
			}
		}

		// Deleting forgets the saved fields; the tasks keep the name.
		if err := st.DeleteUseCase(ctx, uc.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteUseCase(ctx, uc.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
		if got, err := st.PromptUseCaseOf(ctx, "lectures"); err != nil || got.Goal != "" {
			t.Errorf("PromptUseCaseOf after delete = %+v, %v", got, err)
		}
		list, _ := st.UseCases(ctx)
		if len(list) != 3 || list[1].Name != "lectures" || list[1].ID != 0 || list[1].Tasks != 1 { // "", lectures, unsaved
			t.Errorf("UseCases after delete = %+v", list)
		}
	})
}

// A use case's min/max pairs are the ones a task's constraints have, in any
// letter case: MIN_WORDS above MAX_WORDS is refused in both.
func TestUseCaseBoundsAsTasks(t *testing.T) {
	for _, pair := range [][2]string{{"MIN_WORDS", "MAX_WORDS"}, {"chunk_min", "chunk_max"}} {
		in := store.UseCaseInput{Name: "u", Constraints: map[string]any{pair[0]: 10.0, pair[1]: 1.0}}
		var ve *store.ValidationError
		if err := in.Normalize(); !errors.As(err, &ve) || ve.Field != "constraints" {
			t.Errorf("use case %v: %v, want a constraints error", pair, err)
		}
		task := store.TaskInput{TaskKey: "t", Category: "c", Question: "q", Constraints: pair[0] + ": 10\n" + pair[1] + ": 1"}
		if task.Normalize() == nil {
			t.Errorf("task %v: imports", pair)
		}
	}
}
