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
		if err != nil || !done {
			return err
		}
		run.Phase = store.PhaseJudging
	}
	if run.Options.Pairwise {
		return e.dispatchPairwise(ctx, run, rs)
	}
	return e.dispatchJudging(ctx, run, rs)
}

// dispatchBenchmark starts the current target's items; done reports that
// benchmarking is over and the run has moved to JUDGING.
func (e *Engine) dispatchBenchmark(ctx context.Context, run *store.Run, rs *runState) (done bool, err error) {
	tg := rs.current
	if tg == nil || tg.WarmupStatus != store.WarmupOK {
		if tg, err = e.store.NextTarget(ctx, run.ID); err != nil {
			return false, err
		}
		rs.current = tg
	}
	if tg == nil {
		prog, err := e.store.RunProgress(ctx, run.ID)
		if err != nil {
			return false, err
		}
		if err := e.store.SetRunPhase(ctx, run.ID, store.PhaseJudging); err != nil {
			return false, err
		}
		e.logRun(ctx, run.ID, store.LogInfo, "phase", fmt.Sprintf("Benchmarking done (%d answered, %d failed); judging starts",
			prog.Count(store.ItemWaitingForJudge), prog.Count(store.ItemFailed)), "")
		return true, nil
	}
	lookup := e.targetProvider(tg)
	p, err := lookup(ctx)
	if errors.Is(err, errProviderDeleted) {
		rs.current = nil
		_, ferr := e.failTarget(ctx, run.ID, tg, "provider "+tg.ProviderName+": "+err.Error())
		return false, ferr
	}
	if err != nil {
		return false, err // a passing database error: the next pass tries again
	}
	switch tg.WarmupStatus {
	case store.WarmupFailed:
		// Items a rescuer returned after the warm-up failed fail the same way.
		_, err := e.store.FailTargetItems(ctx, tg.ID, tg.WarmupError)
		return false, err
	case store.WarmupPending:
		if e.freeSlots() == 0 {
			return false, nil
		}
		ok, err := e.store.ClaimWarmup(ctx, tg.ID, e.cfg.WorkerID, e.cfg.Lease)
		if err != nil || !ok {
			return false, err // another worker is warming it up
		}
		client := e.Client(p)
		target := *tg
		e.start("", func() { e.warmup(ctx, run.ID, &target, p, client) })
		return false, nil
	}
	n := e.freeSlots()
	slot := store.SlotKey(tg.ProviderID, tg.Model)
	if n == 0 || e.slotFull(slot, p.Concurrency) {
		return false, nil
	}
	items, err := e.store.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, TargetID: tg.ID, From: store.ItemNew,
		To: store.ItemInProgress, WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n,
		SlotKey: slot, SlotLimit: p.Concurrency})
	if err != nil || len(items) == 0 {
		rs.current = nil // look again which target is current
		return false, err
	}
	work, err := e.workItems(ctx, rs, items)
	if err != nil {
		return false, err
	}
	client := e.Client(p)
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
// items waiting for it, up to its own provider's concurrency.
func (e *Engine) dispatchJudging(ctx context.Context, run *store.Run, rs *runState) error {
	claimed := false
	for pos := range rs.judges {
		pj := &rs.judges[pos]
		n := e.freeSlots()
		if n == 0 {
			return nil
		}
		p, perr := e.provider(ctx, pj.ProviderID)
		if perr != nil && !errors.Is(perr, errProviderDeleted) {
			return perr // a passing database error: the next pass tries again
		}
		params := store.ClaimParams{RunID: run.ID, From: store.ItemWaitingForJudge, To: store.ItemJudging,
			WorkerID: e.cfg.WorkerID, Lease: e.cfg.Lease, Limit: n, SlotKey: store.SlotKey(pj.ProviderID, pj.Model), JudgePos: &pos}
		if perr == nil {
			if e.slotFull(params.SlotKey, p.Concurrency) {
				claimed = true // this judge's calls are all in flight: the run is not done
				continue
			}
			params.SlotLimit = p.Concurrency
		}
		items, err := e.store.ClaimItems(ctx, params)
		if err != nil {
			return err
		}
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
					return e.judge(ctx, pj, last, p, client, w)
				})
			})
		}
	}
	if !claimed {
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
