package bench

import (
	"context"
	"fmt"
	"time"

	"tribunal/engine"
	"tribunal/runs"
	"tribunal/store"
)

// categories is how many categories the tasks spread over, so the
// category filter and table have something to group.
const categories = 20

// created is the run the bench built and what each step took.
type created struct {
	runID                  int64
	items                  int64
	tasks, collection, run time.Duration
}

// create makes the provider (the fake), the tasks, their collection and the
// run, through the functions the API calls. Task keys carry a prefix of
// their own, so benches can share a database.
func create(ctx context.Context, st *store.Store, eng *engine.Engine, cfg Config, fakeURL, prefix string) (*created, error) {
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: prefix + " fake", BaseURL: fakeURL, Concurrency: cfg.Concurrency})
	if err != nil {
		return nil, fmt.Errorf("bench: create provider: %w", err)
	}
	out := &created{}
	ins, refs := benchTasks(prefix, cfg.Tasks)
	start := time.Now()
	if err := st.CreateTasks(ctx, ins); err != nil {
		return nil, fmt.Errorf("bench: create tasks: %w", err)
	}
	out.tasks = time.Since(start)

	start = time.Now()
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: prefix, TaskIDs: &refs})
	if err != nil {
		return nil, fmt.Errorf("bench: create collection: %w", err)
	}
	out.collection = time.Since(start)

	// Pipelined, so the workers complete items (answer and verdict) from
	// the start: a bench of a few minutes sees whole items, not answers only.
	in := store.RunInput{Name: prefix, CollectionIDs: []int64{col.ID}, Repeats: cfg.Repeats, Pipeline: true,
		Judge: &store.ModelRef{ProviderID: p.ID, Model: "judge"}}
	for i := range cfg.Models {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: p.ID, Model: fmt.Sprintf("model-%02d", i)})
	}
	start = time.Now()
	run, err := runs.New(st, eng).StartRun(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("bench: create run: %w", err)
	}
	out.run = time.Since(start)
	out.runID = run.ID
	prog, err := st.RunProgress(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("bench: count items: %w", err)
	}
	out.items = prog.Total
	return out, nil
}

// benchTasks are n tasks under prefix, spread over the categories, and
// their references for a collection.
func benchTasks(prefix string, n int) ([]store.TaskInput, []store.TaskRef) {
	ins := make([]store.TaskInput, n)
	refs := make([]store.TaskRef, n)
	for i := range ins {
		ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("%s-%07d", prefix, i), Category: fmt.Sprintf("category-%02d", i%categories),
			Question:  fmt.Sprintf("Question %d: what is %d squared? Explain briefly.", i, i),
			Reference: fmt.Sprintf("%d", i*i)}
		refs[i] = store.TaskRef{Key: ins[i].TaskKey}
	}
	return ins, refs
}
