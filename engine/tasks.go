package engine

import (
	"context"
	"fmt"
	"sync"

	"tribunal/store"
)

// taskCache keeps the frozen tasks a run's claims need, so a claim costs no
// task query: a missing task loads it and the tasks after it (claims go in id
// order). The cache is bounded: when full it starts over.
type taskCache struct {
	mu    sync.Mutex
	tasks map[int64]store.RunTask
}

const (
	taskWindow   = 256
	taskCacheMax = 4096
)

// preloadTasks fills an empty cache with the run's first tasks, so that the
// claims after a group's warm-up find them: called while the warm-up call is
// in flight, it takes the task query off the path to the group's first calls.
func (e *Engine) preloadTasks(ctx context.Context, rs *runState, runID int64) error {
	c := &rs.tasks
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tasks != nil {
		return nil
	}
	_, err := c.load(ctx, e.store, runID, 0)
	return err
}

// load reads the run's tasks from id from on, a window of them, into the
// cache (starting it over when full) and returns them; c.mu is held.
func (c *taskCache) load(ctx context.Context, st *store.Store, runID, from int64) ([]store.RunTask, error) {
	loaded, err := st.RunTasksFrom(ctx, runID, from, taskWindow)
	if err != nil {
		return nil, err
	}
	if c.tasks == nil || len(c.tasks)+len(loaded) > taskCacheMax {
		c.tasks = make(map[int64]store.RunTask, taskCacheMax)
	}
	for _, t := range loaded {
		c.tasks[t.ID] = t
	}
	return loaded, nil
}

// workItems pairs claimed items with their tasks and targets.
func (e *Engine) workItems(ctx context.Context, rs *runState, items []store.Item) ([]store.WorkItem, error) {
	c := &rs.tasks
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]store.WorkItem, len(items))
	for i, it := range items {
		t, ok := c.tasks[it.RunTaskID]
		if !ok {
			loaded, err := c.load(ctx, e.store, it.RunID, it.RunTaskID)
			if err != nil {
				return nil, err
			}
			if len(loaded) == 0 || loaded[0].ID != it.RunTaskID {
				return nil, fmt.Errorf("item %d: run task %d is missing", it.ID, it.RunTaskID)
			}
			t = loaded[0]
		}
		out[i] = store.WorkItem{Item: it, Task: t, Target: rs.targets[it.RunTargetID]}
	}
	return out, nil
}
