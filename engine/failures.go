package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"tribunal/llm"
	"tribunal/store"
)

// notStored handles a result the store refused: unless another worker owns
// the item now, storing counts as a failed attempt, so a result that can
// never be stored fails the item instead of being asked for forever.
func (e *Engine) notStored(ctx context.Context, w *store.WorkItem, phase store.Phase, err error) {
	if errors.Is(err, store.ErrLeaseLost) {
		e.log.WarnContext(ctx, "result not stored: the item's lease was lost", "item_id", w.ID)
		return
	}
	e.log.ErrorContext(ctx, "store result", "item_id", w.ID, "phase", phase, "err", err)
	e.callFailed(ctx, w, phase, fmt.Errorf("storing the result: %w", err), "")
}

// callFailed retries the item later, or fails it when retrying cannot help
// or its attempts are used up. raw keeps a judge's unusable reply.
func (e *Engine) callFailed(ctx context.Context, w *store.WorkItem, phase store.Phase, err error, raw string) {
	wctx := context.WithoutCancel(ctx)
	back := store.ItemNew
	if phase == store.PhaseJudging {
		back = store.ItemWaitingForJudge
	}
	if ctx.Err() != nil {
		e.handBack(ctx, &w.Item, errShutdown) // for the next worker
		return
	}
	reason := err.Error()
	if raw != "" {
		reason += "\nraw judge output: " + raw
	}
	delay, retry := e.retryDelay(err, w.Failures+1)
	if f := e.cfg.ObserveFailureFunc; f != nil {
		f(phase, retry)
	}
	if !retry {
		e.failNow(ctx, w, phase, reason, true)
		return
	}
	entry := itemLog(w, store.LogWarn, "retry", fmt.Sprintf("%s · %s: attempt %d failed, retry in %s: %s",
		w.Target.Label(), w.Task.TaskKey, w.Failures+1, delay.Round(time.Millisecond), err), raw)
	if rerr := e.store.RetryItem(wctx, &w.Item, back, time.Now().UTC().Add(delay), reason, true); rerr != nil {
		e.log.ErrorContext(wctx, "schedule retry", "item_id", w.ID, "err", rerr)
		return
	}
	e.logs.add(entry)
}

// failNow fails a claimed item; called says whether its provider call was made.
func (e *Engine) failNow(ctx context.Context, w *store.WorkItem, phase store.Phase, reason string, called bool) {
	wctx := context.WithoutCancel(ctx)
	entry := itemLog(w, store.LogError, "failed", fmt.Sprintf("✗ %s · %s failed in %s", w.Target.Label(), w.Task.TaskKey, phase), reason)
	if err := e.store.FailItem(wctx, &w.Item, phase, reason, called); err != nil {
		e.log.ErrorContext(wctx, "fail item", "item_id", w.ID, "err", err)
		return
	}
	e.logs.add(entry)
}

// retryDelay is how long to wait before calling again after the failures-th
// failed call (the items' policy, which comparisons and warm-ups share):
// the backoff, or the provider's Retry-After. retry is false when trying
// again cannot help (400, 401, 403, 404…) or the attempts are used up.
func (e *Engine) retryDelay(err error, failures int) (delay time.Duration, retry bool) {
	var le *llm.Error
	if errors.As(err, &le) && !le.Retryable() || failures >= e.cfg.MaxAttempts {
		return 0, false
	}
	if le != nil && le.RetryAfter > 0 {
		return le.RetryAfter, true
	}
	return backoff(e.cfg.BackoffBase, e.cfg.BackoffMax, failures), true
}

// backoff is base·2^(attempt-1), capped, with up to 25% jitter.
func backoff(base, maxDelay time.Duration, attempt int) time.Duration {
	d := base << max(attempt-1, 0)
	if d <= 0 || d > maxDelay {
		d = maxDelay
	}
	return d + rand.N(d/4+1)
}

// renewLease extends the item's lease while its call runs.
func (e *Engine) renewLease(ctx context.Context, it *store.Item) (stop func()) {
	return e.renew(ctx, func(ctx context.Context) error { return e.store.RenewLease(ctx, it, e.cfg.Lease) })
}

// renew calls renewFunc every Lease/3 until stopped; stop returns once no
// renewal runs. Most calls end long before their first renewal, so the
// renewals wait on a timer, not on a goroutine of their own per call.
func (e *Engine) renew(ctx context.Context, renewFunc func(context.Context) error) (stop func()) {
	every := e.cfg.Lease / 3
	ctx, cancel := context.WithCancel(ctx)
	r := &renewal{}
	r.mu.Lock() // the timer is set before its function can look at it
	defer r.mu.Unlock()
	r.timer = time.AfterFunc(every, func() {
		if !r.begin() {
			return
		}
		defer r.end()
		if ctx.Err() != nil {
			return // the engine stops: so do the renewals
		}
		if err := renewFunc(ctx); err != nil && ctx.Err() == nil {
			e.log.WarnContext(ctx, "renew lease", "err", err)
		}
		r.again(every)
	})
	return func() {
		cancel()
		r.stop()
	}
}

// renewal is the state of renew's timer.
type renewal struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	running sync.WaitGroup
}

func (r *renewal) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false
	}
	r.running.Add(1)
	return true
}

func (r *renewal) end() { r.running.Done() }

func (r *renewal) again(every time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.timer.Reset(every)
	}
}

func (r *renewal) stop() {
	r.mu.Lock()
	r.stopped = true
	r.timer.Stop()
	r.mu.Unlock()
	r.running.Wait()
}
