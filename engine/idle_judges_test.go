package engine_test

import (
	"sync"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestIdleJudgesLeaveSlotsToAnswers: with pipeline and two slots in the
// process, a judge with nothing to judge yet takes no slot, so the target
// answers two items at once (its first two answers wait for each other);
// once answers exist the judge gets its slot while the target still
// answers (answers from the fifth on wait for a verdict).
func TestIdleJudgesLeaveSlotsToAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		cfg := testConfig()
		cfg.MaxInFlight = 2
		b := setupWith(t, st, 6, nil, cfg)
		both, judged := newGate(), newGate()
		var mu sync.Mutex
		asked, inflight := 0, 0
		pt := addProvider(t, st, "T", 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if !isItem(r) {
				return llmtest.DefaultReply(r)
			}
			mu.Lock()
			asked++
			n := asked
			if inflight++; inflight == 2 {
				both.open()
			}
			mu.Unlock()
			defer func() { mu.Lock(); inflight--; mu.Unlock() }()
			switch {
			case n <= 2:
				both.wait(t, "the target to answer two items at once")
			case n >= 5:
				judged.wait(t, "a verdict while the target answers")
			}
			return llmtest.DefaultReply(r)
		})
		pj := addProvider(t, st, "J", 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				judged.open()
			}
			return llmtest.DefaultReply(r)
		})
		run := b.startRun(t, store.ModelRef{ProviderID: pj.ID, Model: "judge"}, true, store.ModelRef{ProviderID: pt.ID, Model: "t"})
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		for _, it := range items(t, st, run.ID) {
			if it.Status != store.ItemCompleted {
				t.Errorf("item %s/%s: %s", it.TaskID, it.Model, it.Status)
			}
		}
	})
}
