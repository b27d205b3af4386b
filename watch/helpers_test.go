package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"tribunal/store"
)

// fakeClock is a Clock that moves only when told to.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	blocked chan struct{} // signalled whenever someone starts waiting
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(t time.Time) *fakeClock {
	return &fakeClock{now: t, blocked: make(chan struct{}, 100)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	select {
	case c.blocked <- struct{}{}:
	default:
	}
	return ch
}

// Set moves the clock to t and wakes the waiters whose time has come.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(t) {
			w.ch <- t
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// Advance moves the clock on by d.
func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// waitForWaiter blocks until some goroutine waits on the clock.
func (c *fakeClock) waitForWaiter(t *testing.T) {
	t.Helper()
	select {
	case <-c.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing waited on the fake clock")
	}
}

// recStarter creates runs through the store and can be told to fail.
type recStarter struct {
	st  *store.Store
	mu  sync.Mutex
	err error
	ins []store.RunInput
}

func (r *recStarter) StartRun(ctx context.Context, in store.RunInput) (*store.Run, error) {
	r.mu.Lock()
	err := r.err
	r.ins = append(r.ins, in)
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return r.st.CreateRun(ctx, in)
}

func (r *recStarter) setErr(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

// template makes a provider, a task and a collection and returns a run
// template over them.
func template(t testing.TB, st *store.Store) store.RunInput {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "k", Category: "c", Question: "q"})
	if err != nil {
		t.Fatal(err)
	}
	refs := []store.TaskRef{{ID: tk.ID}}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	return store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}}, CollectionIDs: []int64{col.ID}}
}

func newSchedule(t testing.TB, st *store.Store, name, cron, tz string, tmpl store.RunInput, now time.Time) *store.Schedule {
	t.Helper()
	sc, err := st.CreateSchedule(context.Background(), store.ScheduleInput{Name: name, Cron: cron, Timezone: tz, Enabled: true,
		AutoDisableOnFailure: true, MaxConsecutiveFailures: 3, Template: tmpl}, now)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// finishRuns marks every active run FINISHED, freeing the active-run slot.
func finishRuns(t testing.TB, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	for {
		r, err := st.FirstActiveRun(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			return
		}
		if _, err := st.SetRunStatus(ctx, r.ID, store.RunFinished, store.ActiveRunStatuses...); err != nil {
			t.Fatal(err)
		}
	}
}

func firings(t testing.TB, st *store.Store, scheduleID int64) []store.ScheduleFiring {
	t.Helper()
	fs, err := st.ScheduleFirings(context.Background(), scheduleID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].ID < fs[j].ID })
	return fs
}

func mustSchedule(t testing.TB, st *store.Store, id int64) *store.Schedule {
	t.Helper()
	sc, err := st.Schedule(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func describe(fs []store.ScheduleFiring) string {
	s := ""
	for _, f := range fs {
		at := "-"
		if f.ScheduledFor != nil {
			at = f.ScheduledFor.UTC().Format(time.RFC3339)
		}
		s += fmt.Sprintf("\n  %s %s run=%v missed=%d attempts=%d %q", at, f.Status, deref(f.RunID), f.Missed, f.Attempts, f.Message)
	}
	return s
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

var errBoom = errors.New("boom")
