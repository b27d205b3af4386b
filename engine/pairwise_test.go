package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/store/storetest"
)

// answerIn is the answer between a marker pair of a judge prompt.
func answerIn(prompt, open, close string) string {
	if !strings.Contains(prompt, open) {
		return ""
	}
	return strings.TrimSpace(between(prompt, open, close))
}

// TestPairwiseRun runs a pairwise run with a panel of two judges over three
// models of clearly different quality. The fair judge always prefers the
// better answer; the biased one, on one task, always picks whichever answer
// it sees first, so its two orders disagree there and those comparisons
// become flipped ties. One judge call fails once, after the first order was
// in, and only the second order is asked again.
func TestPairwiseRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		rank := map[string]int{"answer-from-good": 3, "answer-from-mid": 2, "answer-from-bad": 1}
		var mu sync.Mutex
		var judgeCalls, scoringCalls int
		failedOnce := false
		b := setup(t, st, 4, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() {
				return llmtest.Reply{Content: "answer-from-" + r.Model}
			}
			mu.Lock()
			defer mu.Unlock()
			judgeCalls++
			if !strings.Contains(r.Messages[0].Content, "comparing two AI assistants") {
				scoringCalls++
			}
			prompt := r.Last()
			a, bb := answerIn(prompt, "<<<ANSWER_A", "ANSWER_A>>>"), answerIn(prompt, "<<<ANSWER_B", "ANSWER_B>>>")
			if rank[a] == 0 || rank[bb] == 0 {
				t.Errorf("judge prompt without both answers:\n%s", prompt)
			}
			biased := strings.Contains(r.Messages[0].Content, "Your personality: Biased.")
			if !biased && !failedOnce && strings.Contains(prompt, "What is 1+1?") && a == "answer-from-mid" && bb == "answer-from-good" {
				failedOnce = true // the second order of (good, mid) on task t001
				return llmtest.Reply{Status: 500, Content: "overloaded"}
			}
			winner := "A"
			switch {
			case biased && strings.Contains(prompt, "What is 0+0?"):
				// position bias: the first answer, whichever it is
			case rank[bb] > rank[a]:
				winner = "b"
			}
			return llmtest.Reply{Content: fmt.Sprintf("```json\n{\"reasoning\": \"compared %s with %s\", \"winner\": %q}\n```", a, bb, winner)}
		})
		style, err := st.DefaultStyle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var judgeIDs []int64
		for _, name := range []string{"Fair", "Biased"} {
			j, err := st.CreateJudge(ctx, store.JudgeInput{Name: name, ProviderID: b.provider.ID, Model: "fake-judge", PersonalityName: name, StyleID: style.ID})
			if err != nil {
				t.Fatal(err)
			}
			judgeIDs = append(judgeIDs, j.ID)
		}
		in := store.RunInput{Pairwise: true, JudgeIDs: judgeIDs, CollectionIDs: []int64{b.coll.ID}}
		for _, m := range []string{"good", "mid", "bad"} {
			in.Targets = append(in.Targets, store.ModelRef{ProviderID: b.provider.ID, Model: m})
		}
		run, err := b.eng.StartRun(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !run.Options.Pairwise {
			t.Fatalf("run options %+v", run.Options)
		}
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}

		// Items completed without per-item judging.
		got := items(t, st, run.ID)
		if len(got) != 12 {
			t.Fatalf("%d items, want 12", len(got))
		}
		for _, it := range got {
			if it.Status != store.ItemCompleted || it.Score != nil {
				t.Errorf("item %d: %s score %v, want COMPLETED without a score", it.ID, it.Status, it.Score)
			}
		}
		if scores, err := st.RunScores(ctx, run.ID, store.ScoreFilter{}); err != nil || scores.Total != 0 {
			t.Errorf("a pairwise run stored %d per-item scores, %v", scores.Total, err)
		}
		mu.Lock()
		if judgeCalls != 2*24+1 || scoringCalls != 0 {
			t.Errorf("%d judge calls (%d scoring one answer), want 49: two per comparison and one failed", judgeCalls, scoringCalls)
		}
		mu.Unlock()

		// Comparisons: 4 tasks × 3 pairs × 2 judges, all done; flips only where the bias was.
		cs, err := st.RunComparisons(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 24 {
			t.Fatalf("%d comparisons, want 24", len(cs))
		}
		model := map[int64]string{}
		for _, tg := range final.Targets {
			model[tg.ID] = tg.Model
		}
		judgeName := map[int64]string{}
		for _, j := range final.Judges {
			judgeName[j.ID] = j.Name
		}
		tasks := map[int64]bool{}
		retried := 0
		for _, c := range cs {
			tasks[c.RunTaskID] = true
			better := rubric.PickA
			if rank["answer-from-"+model[c.TargetB]] > rank["answer-from-"+model[c.TargetA]] {
				better = rubric.PickB
			}
			if c.Status != store.ComparisonDone || !strings.HasPrefix(c.ReasoningAB, "compared") || c.ReasoningBA == "" {
				t.Errorf("comparison %+v", c)
				continue
			}
			// Each order showed the answers the other way round.
			if c.ReasoningAB != fmt.Sprintf("compared answer-from-%s with answer-from-%s", model[c.TargetA], model[c.TargetB]) ||
				c.ReasoningBA != fmt.Sprintf("compared answer-from-%s with answer-from-%s", model[c.TargetB], model[c.TargetA]) {
				t.Errorf("comparison %d orders: %q, %q", c.ID, c.ReasoningAB, c.ReasoningBA)
			}
			if c.Failures > 0 {
				retried++
				if c.Attempts != 2 || c.Failures != 1 || model[c.TargetA] != "good" || model[c.TargetB] != "mid" || judgeName[c.RunJudgeID] != "Fair" {
					t.Errorf("retried comparison %+v", c)
				}
			}
			if c.Flipped {
				if judgeName[c.RunJudgeID] != "Biased" || c.Winner != rubric.PickTie || c.VerdictAB != rubric.PickA || c.VerdictBA != rubric.PickB {
					t.Errorf("flipped comparison %+v", c)
				}
				continue
			}
			if c.Winner != better || c.VerdictAB != better || c.VerdictBA != better {
				t.Errorf("comparison %s vs %s by %s: %s/%s → %s, want %s", model[c.TargetA], model[c.TargetB], judgeName[c.RunJudgeID],
					c.VerdictAB, c.VerdictBA, c.Winner, better)
			}
		}
		if len(tasks) != 4 || retried != 1 {
			t.Errorf("comparisons cover %d tasks, %d retried; want 4 and 1", len(tasks), retried)
		}

		// The leaderboard and the judges' flip rates.
		rep, err := st.RunPairwise(ctx, final)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, r := range rep.Leaderboard {
			order = append(order, fmt.Sprintf("%s %d/%d/%d n=%d", r.Model, r.Wins, r.Losses, r.Ties, r.N))
		}
		want := []string{"good 14/0/2 n=16", "mid 7/7/2 n=16", "bad 0/14/2 n=16"}
		if strings.Join(order, ", ") != strings.Join(want, ", ") {
			t.Errorf("leaderboard %v, want %v", order, want)
		}
		if top, bottom := rep.Leaderboard[0], rep.Leaderboard[2]; !(top.Lo > 1000 && bottom.Hi < 1000 && top.Rating > rep.Leaderboard[1].Rating) {
			t.Errorf("ratings %+v", rep.Leaderboard)
		}
		flips := map[string]string{}
		for _, j := range rep.Judges {
			if j.FlipRate == nil {
				t.Fatalf("judge %s has no flip rate", j.Judge)
			}
			flips[j.Judge] = fmt.Sprintf("%d/%d %.2f", j.Flipped, j.Comparisons, *j.FlipRate)
		}
		if flips["Fair"] != "0/12 0.00" || flips["Biased"] != "3/12 0.25" {
			t.Errorf("flips %v", flips)
		}
		if c := rep.Comparisons; c.Total != 24 || c.Done != 24 || c.Flipped != 3 || c.Pending() != 0 {
			t.Errorf("counts %+v", c)
		}
		jf, err := st.RunJudgeFlips(ctx, run.ID)
		if err != nil || len(jf) != 2 || jf[0].Judge != "Fair" || jf[1].Flipped != 3 {
			t.Errorf("judge flips %+v, %v", jf, err)
		}
	})
}

// TestPairwiseRunNeedsPairsAndJudge: a pairwise run compares two targets or
// more, and someone has to compare them.
func TestPairwiseRunNeedsPairsAndJudge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 1, nil)
		one := []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}}
		two := append(one, store.ModelRef{ProviderID: b.provider.ID, Model: "fake-large"})
		judge := &store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"}
		for _, tc := range []struct {
			name  string
			in    store.RunInput
			field string
		}{
			{"one target", store.RunInput{Pairwise: true, Judge: judge, Targets: one}, "targets"},
			{"checks only", store.RunInput{Pairwise: true, Metrics: []string{"check_numeric"}, Targets: two}, "judge.provider_id"},
		} {
			tc.in.CollectionIDs = []int64{b.coll.ID}
			_, err := b.eng.StartRun(context.Background(), tc.in)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Errorf("%s: %v, want a validation error on %s", tc.name, err, tc.field)
			}
		}
	})
}

// TestPairwiseRunFailsWhenEveryComparisonFails: answers without any usable
// verdict do not make a finished leaderboard.
func TestPairwiseRunFailsWhenEveryComparisonFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, 1, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"winner": "both", "reasoning": "cannot decide"}`}
			}
			return llmtest.DefaultReply(r)
		})
		run, err := b.eng.StartRun(context.Background(), store.RunInput{Pairwise: true, CollectionIDs: []int64{b.coll.ID},
			Judge:   &store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}, {ProviderID: b.provider.ID, Model: "fake-large"}}})
		if err != nil {
			t.Fatal(err)
		}
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFailed || !strings.Contains(final.Error, "comparison") {
			t.Fatalf("run ended %s: %q", final.Status, final.Error)
		}
		cs, err := b.st.RunComparisons(context.Background(), run.ID)
		if err != nil || len(cs) != 1 || cs[0].Status != store.ComparisonFailed || cs[0].Failures != 2 ||
			!strings.Contains(cs[0].Error, `"both" is not A, B or tie`) {
			t.Fatalf("comparisons %+v, %v", cs, err)
		}
	})
}

// TestPairwiseRescue: a worker died holding a comparison. A new engine
// rescues it once its lease has run out, judges it and finishes the run; the
// dead worker's late write is refused.
func TestPairwiseRescue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() { // prefers fake-large's answer, wherever it is
				if answerIn(r.Last(), "<<<ANSWER_A", "ANSWER_A>>>") == "answer-from-fake-large" {
					return llmtest.Reply{Content: `{"reasoning": "A is better", "winner": "A"}`}
				}
				return llmtest.Reply{Content: `{"reasoning": "B is better", "winner": "B"}`}
			}
			return llmtest.DefaultReply(r)
		})
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", Type: store.ProviderCustom, BaseURL: fake.URL, TimeoutSeconds: 2})
		if err != nil {
			t.Fatal(err)
		}
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "t", Category: "c", Question: "q"})
		if err != nil {
			t.Fatal(err)
		}
		coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		run, err := st.CreateRun(ctx, store.RunInput{Pairwise: true, CollectionIDs: []int64{coll.ID},
			Judge:   &store.ModelRef{ProviderID: p.ID, Model: "fake-judge"},
			Targets: []store.ModelRef{{ProviderID: p.ID, Model: "fake-small"}, {ProviderID: p.ID, Model: "fake-large"}}})
		if err != nil {
			t.Fatal(err)
		}
		// The dead worker's past: it answered both items, moved the run to
		// judging, made the comparison and claimed it.
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending); err != nil {
			t.Fatal(err)
		}
		its, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "dead", Lease: time.Minute, Limit: 2})
		if err != nil || len(its) != 2 {
			t.Fatalf("claim items: %d, %v", len(its), err)
		}
		for i := range its {
			model := run.Targets[0].Model
			if its[i].RunTargetID == run.Targets[1].ID {
				model = run.Targets[1].Model
			}
			if _, err := st.CompleteBenchmark(ctx, &its[i], store.BenchmarkResult{Request: "{}", Response: "answer-from-" + model}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.SetRunPhase(ctx, run.ID, store.PhaseJudging); err != nil {
			t.Fatal(err)
		}
		if n, err := st.CreateComparisons(ctx, run.ID); err != nil || n != 1 {
			t.Fatalf("created %d comparisons, %v", n, err)
		}
		cs, err := st.ClaimComparisons(ctx, store.ComparisonClaim{RunID: run.ID, RunJudgeID: run.Judges[0].ID, WorkerID: "dead",
			Lease: -time.Second, Limit: 1}) // its lease has run out
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim comparison: %d, %v", len(cs), err)
		}
		dead := cs[0]

		eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, BackoffBase: 10 * time.Millisecond, Lease: 200 * time.Millisecond},
			st, engine.NewBroker(), slog.New(slog.DiscardHandler))
		runCtx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { eng.Run(runCtx) })
		t.Cleanup(func() { cancel(); wg.Wait() })
		b := &bundle{st: st, eng: eng, fake: fake, provider: p}
		if final := b.waitRun(t, run.ID); final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		cs, err = st.RunComparisons(ctx, run.ID)
		if err != nil || len(cs) != 1 {
			t.Fatal(cs, err)
		}
		if c := cs[0]; c.Status != store.ComparisonDone || c.Attempts != 2 || c.Failures != 0 || c.Winner != rubric.PickB || c.Flipped {
			t.Errorf("rescued comparison %+v", c)
		}
		if err := st.CompleteComparison(ctx, &dead, store.PairResult{AB: store.PairHalf{Pick: rubric.PickA}, BA: store.PairHalf{Pick: rubric.PickA}}); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("the dead worker's late write: %v", err)
		}
		if n := len(fake.Calls()); n != 2 {
			t.Errorf("%d calls, want the two orders of the rescued comparison only", n)
		}
	})
}
