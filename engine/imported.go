package engine

import (
	"context"
	"fmt"
	"time"

	"tribunal/llm"
	"tribunal/store"
)

// importedConcurrency is how many imported answers are scored at once: no
// provider is called, so it bounds only the engine's own work.
const importedConcurrency = 32

// importedProvider stands in for the provider of an imported target, whose
// answers exist already.
func importedProvider(tg *store.RunTarget) providerLookup {
	p := &store.Provider{Name: tg.ProviderName, Concurrency: importedConcurrency}
	return func(context.Context) (*store.Provider, error) { return p, nil }
}

// scoreImported takes an imported item's stored answer as if its target had
// just given it: checks and measures are scored and the item goes on to the
// judges, so an imported run is judged like any other.
func (e *Engine) scoreImported(ctx context.Context, rs *runState, p *store.Provider, w *store.WorkItem) *store.Item {
	res := store.BenchmarkResult{Request: w.Request, Judged: len(rs.judges) > 0 && !rs.options.Pairwise, CostUSD: w.CostUSD, Imported: true,
		Weights: rs.weights}
	if w.Response != nil {
		res.Response = *w.Response
	}
	if w.TimeMs != nil {
		res.TimeMs = *w.TimeMs
	}
	if w.PromptTokens != nil {
		res.PromptTokens = *w.PromptTokens
	}
	if w.CompletionTokens != nil {
		res.CompletionTokens = *w.CompletionTokens
	}
	res.TokensPerS = llm.Response{CompletionTokens: res.CompletionTokens, Duration: time.Duration(res.TimeMs) * time.Millisecond}.TokensPerSecond()
	res.Scores = append(e.runChecks(w, rs.options, res.Response, nil), measures(rs.options, res)...)
	entry := itemLog(w, store.LogInfo, "answer", fmt.Sprintf("%s · %s: imported answer (%d ms, %d tokens)",
		w.Target.Label(), w.Task.TaskKey, res.TimeMs, res.CompletionTokens), "RESPONSE\n"+res.Response)
	return e.storeAnswer(ctx, w, p, res, entry)
}

// StartImported saves an import — its tasks and an IMPORTED run whose items
// hold their answers, in one transaction — and wakes the engine to score it.
func (e *Engine) StartImported(ctx context.Context, in store.RunInput, tasks store.ImportInput, imported store.ImportedRun) (*store.Run, *store.ImportResult, error) {
	snap, err := e.snapshot(in, 0)
	if err != nil {
		return nil, nil, err
	}
	in.Snapshot = snap
	run, res, err := e.store.CreateImportedRun(ctx, in, tasks, imported)
	if err != nil {
		return nil, nil, err
	}
	e.logRun(ctx, run.ID, store.LogInfo, "run", fmt.Sprintf("Run created: %d imported answers from %d model(s), to be scored",
		len(imported.Answers), len(imported.Targets)), "")
	e.Refresh()
	return run, res, nil
}
