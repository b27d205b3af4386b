package engine

import (
	"context"
	"errors"
	"fmt"

	"tribunal/llm"
	"tribunal/store"
)

// dispatch claims what one run may start now and starts it.
func (e *Engine) dispatch(ctx context.Context, run *store.Run) error {
	if run.Status == store.RunPending {
		r, err := e.store.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending)
		if err != nil {
			if errors.Is(err, store.ErrConflict) {
				return nil // paused or cancelled meanwhile
			}
			return err
		}
		e.logRun(ctx, run.ID, store.LogInfo, "run", fmt.Sprintf("Run started: %d target(s), judges: %s", len(r.Targets), judgeName(r)), "")
		run.Status = r.Status
	}
	if over, err := e.overBudget(ctx, run); over || err != nil {
		return err
	}
	rs, err := e.state(ctx, run)
	if err != nil {
		return err
	}
	if run.Phase == store.PhaseBenchmarking {
		done, err := e.dispatchBenchmark(ctx, run, rs)
		if err != nil || (!done && !run.Options.Pipeline) {
			return err
		}
		if !done {
			// Pipelined: judge what is answered while groups still answer.
			return e.dispatchJudges(ctx, run, rs, false)
		}
		run.Phase = store.PhaseJudging
	}
	e.setShares(rs, nil, e.judgeLanes(ctx, rs), false)
	return e.dispatchJudges(ctx, run, rs, true)
}

// dispatchJudges starts the judges' calls, pairwise or one item at a time;
// mayFinish lets it end the run once nothing is left.
func (e *Engine) dispatchJudges(ctx context.Context, run *store.Run, rs *runState, mayFinish bool) error {
	if run.Options.Pairwise {
		return e.dispatchPairwise(ctx, run, rs, mayFinish)
	}
	return e.dispatchJudging(ctx, run, rs, mayFinish)
}

// lane is one group benchmarking now: the first pending target of its lane.
type lane struct {
	target store.RunTarget
	lookup providerLookup
	p      *store.Provider
	err    error // from the provider's lookup
}

// dispatchBenchmark starts the items of every group benchmarking now, one
// per lane (see lanes.go), each under its own provider's limits and within
// its fair share of this process's slots; done reports that benchmarking
// is over and the run has moved to JUDGING.
func (e *Engine) dispatchBenchmark(ctx context.Context, run *store.Run, rs *runState) (done bool, err error) {
	if rs.lanes == nil {
		pending, err := e.store.PendingTargets(ctx, run.ID)
		if err != nil {
			return false, err
		}
		if len(pending) == 0 {
			return true, e.endBenchmarking(ctx, run.ID)
		}
		rs.lanes = store.LaneHeads(pending)
	}
	lanes := make([]lane, len(rs.lanes))
	var demands, judges []laneDemand
	for i, tg := range rs.lanes {
		l := &lanes[i]
		l.target, l.lookup = tg, e.targetProvider(&tg)
		l.p, l.err = l.lookup(ctx)
		if l.err != nil || tg.WarmupStatus == store.WarmupFailed {
			continue
		}
		demands = append(demands, laneDemand{slot: store.SlotKey(tg.ProviderID, tg.Model), limit: l.p.Concurrency})
	}
	if run.Options.Pipeline && !run.Options.Pairwise {
		judges = e.judgeLanes(ctx, rs)
	}
	e.setShares(rs, demands, judges, true)
	var errs []error
	for i := range lanes {
		reread, err := e.dispatchLane(ctx, run, rs, &lanes[i])
		if reread {
			rs.lanes = nil // the next pass reads again which groups run now
		}
		errs = append(errs, err)
	}
	return false, errors.Join(errs...)
}

// endBenchmarking moves the run to JUDGING once every lane's groups are done.
func (e *Engine) endBenchmarking(ctx context.Context, runID int64) error {
	prog, err := e.store.RunProgress(ctx, runID)
	if err != nil {
		return err
	}
	if err := e.store.SetRunPhase(ctx, runID, store.PhaseJudging); err != nil {
		return err
	}
	e.logRun(ctx, runID, store.LogInfo, "phase", fmt.Sprintf("Benchmarking done (%d answered, %d failed); judging starts",
		prog.Count(store.ItemWaitingForJudge)+prog.Count(store.ItemJudging)+prog.Count(store.ItemCompleted), prog.Count(store.ItemFailed)), "")
	return nil
}

// dispatchLane warms up or claims items for one lane's current group;
// reread says the lane's group may have changed (warming up, failed,
// nothing left to claim), so the next pass reads the lanes again.
func (e *Engine) dispatchLane(ctx context.Context, run *store.Run, rs *runState, l *lane) (reread bool, err error) {
	tg := &l.target
	if errors.Is(l.err, errProviderDeleted) {
		_, ferr := e.failTarget(ctx, run.ID, tg, "provider "+tg.ProviderName+": "+l.err.Error())
		return true, ferr
	}
	if l.err != nil {
		return true, l.err // a passing database error: the next pass tries again
	}
	switch tg.WarmupStatus {
	case store.WarmupFailed:
		// Items a rescuer returned after the warm-up failed fail the same way.
		_, err := e.store.FailTargetItems(ctx, tg.ID, tg.WarmupError)
		return true, err
	case store.WarmupPending:
		if e.freeSlots() == 0 {
			return true, nil
		}
		ok, err := e.store.ClaimWarmup(ctx, tg.ID, e.cfg.WorkerID, e.cfg.Lease)
		if err != nil || !ok {
			return true, err // another worker is warming it up
		}
		client := e.Client(l.p)
		target := *tg
		e.start("", func() { e.warmup(ctx, run.ID, &target, l.p, client) })
		return true, e.preloadTasks(ctx, rs, run.ID)
	}
	slot := store.SlotKey(tg.ProviderID, tg.Model)
	n := min(e.freeSlots(), e.room(rs, slot))
	if n <= 0 || e.slotFull(slot, l.p.Concurrency) {
		return false, nil
	}
	items, err := e.store.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, TargetID: tg.ID, From: store.ItemNew,
		To: store.ItemInProgress, WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n,
		SlotKey: slot, SlotLimit: l.p.Concurrency})
	if err != nil || len(items) == 0 {
		return true, err
	}
	work, err := e.workItems(ctx, rs, items)
	if err != nil {
		return false, err
	}
	p, lookup, client := l.p, l.lookup, e.Client(l.p)
	for i := range work {
		w := &work[i]
		e.start(slot, func() {
			e.chain(ctx, rs, lookup, p, client, w, func(p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
				return e.benchmark(ctx, rs, p, client, w)
			})
		})
	}
	return false, nil
}

// dispatchJudging starts judge calls: each judge of the panel takes the
// items waiting for it, up to its own provider's concurrency and its fair
// share of this process's slots.
func (e *Engine) dispatchJudging(ctx context.Context, run *store.Run, rs *runState, mayFinish bool) error {
	claimed := false
	for pos := range rs.judges {
		pj := &rs.judges[pos]
		free := e.freeSlots()
		if free == 0 {
			return nil
		}
		slot := store.SlotKey(pj.ProviderID, pj.Model)
		n := min(free, e.room(rs, slot))
		if n <= 0 {
			claimed = true // this judge holds its share: the run is not done
			continue
		}
		p, perr := e.provider(ctx, pj.ProviderID)
		if perr != nil && !errors.Is(perr, errProviderDeleted) {
			return perr // a passing database error: the next pass tries again
		}
		params := store.ClaimParams{RunID: run.ID, From: store.ItemWaitingForJudge, To: store.ItemJudging,
			WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n, SlotKey: slot, JudgePos: &pos}
		if perr == nil {
			if e.slotFull(params.SlotKey, p.Concurrency) {
				claimed = true // this judge's calls are all in flight: the run is not done
				continue
			}
			params.SlotLimit = p.Concurrency
		}
		marks := e.judgeMarks(rs, pos)
		items, err := e.store.ClaimItems(ctx, params)
		if err != nil {
			return err
		}
		e.judgeClaimed(rs, pos, n, len(items), marks)
		if len(items) == 0 {
			continue
		}
		claimed = true
		work, err := e.workItems(ctx, rs, items)
		if err != nil {
			return err
		}
		if perr != nil || pj.err != nil {
			reason := fmt.Sprintf("judge %s: ", pj.Name)
			if perr != nil {
				reason += "provider " + pj.ProviderName + ": " + perr.Error()
			} else {
				reason += pj.err.Error()
			}
			for i := range work {
				e.failNow(ctx, &work[i], store.PhaseJudging, reason, false)
			}
			continue
		}
		client := e.Client(p)
		last := pos == len(rs.judges)-1
		for i := range work {
			w := &work[i]
			e.start(params.SlotKey, func() {
				e.chain(ctx, rs, e.providerOf(pj.ProviderID), p, client, w, func(p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
					return e.judge(ctx, pj, last, rs.weights, p, client, w)
				})
			})
		}
	}
	if !claimed && mayFinish {
		return e.maybeFinish(ctx, run)
	}
	return nil
}

// targetProvider finds the provider a target's calls count against. The
// http executor calls no provider: its agent endpoint stands in, with a
// fixed concurrency; so does an import's origin (see importedProvider).
func (e *Engine) targetProvider(tg *store.RunTarget) providerLookup {
	if tg.Imported {
		return importedProvider(tg)
	}
	if tg.IsAgent() && tg.Agent.Executor == store.ExecutorHTTP {
		p := &store.Provider{Name: tg.AgentName, Concurrency: httpAgentConcurrency}
		return func(context.Context) (*store.Provider, error) { return p, nil }
	}
	return e.providerOf(tg.ProviderID)
}

// overBudget pauses a run whose spend has reached its budget, before it
// claims more: it goes over by at most the calls already in flight.
func (e *Engine) overBudget(ctx context.Context, run *store.Run) (bool, error) {
	budget := run.Options.MaxCostUSD
	if budget == nil {
		return false, nil
	}
	spent, err := e.store.RunSpend(ctx, run.ID)
	if err != nil || spent < *budget {
		return false, err
	}
	_, err = e.transition(ctx, run.ID, store.RunPaused, fmt.Sprintf("Run paused: budget reached ($%.4f spent of $%.4f)", spent, *budget),
		store.RunPending, store.RunRunning)
	if errors.Is(err, store.ErrConflict) {
		return true, nil // paused or ended meanwhile
	}
	return true, err
}
