package engine_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/rubric"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestPanelChecksTurnsRepeats runs a judge panel with a two-metric style,
// reference checks, a multi-turn task, target settings, repeats and prices,
// and checks every stored number against what the fake was told to say.
func TestPanelChecksTurnsRepeats(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var mu sync.Mutex
		var judgePrompts, targetRequests []llmtest.ChatRequest
		b := setup(t, st, 0, func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if r.IsJudge() {
				judgePrompts = append(judgePrompts, r)
				if strings.Contains(r.Messages[0].Content, "Strict examiner") {
					return llmtest.Reply{Content: `{"accuracy": {"score": 2, "reasoning": "weak"}, "coherence": {"score": 4, "reasoning": "clear"}}`, Tokens: 10}
				}
				return llmtest.Reply{Content: `{"accuracy": {"score": 5, "reasoning": "right"}, "coherence": {"score": 5, "reasoning": "clear"}}`, Tokens: 10}
			}
			if !r.IsWarmup() {
				targetRequests = append(targetRequests, r)
			}
			if strings.Contains(r.Last(), "2+2") {
				return llmtest.Reply{Content: "The answer is 4.", Tokens: 4}
			}
			return llmtest.Reply{Content: "Answer: " + r.Last(), Tokens: 3}
		})
		if _, err := st.UpdateProvider(ctx, b.provider.ID, store.ProviderInput{Name: "fake", Type: store.ProviderCustom, BaseURL: b.fake.URL,
			TimeoutSeconds: 2, Concurrency: 4, Prices: []store.ProviderPrice{{Model: "fake-small", InputPerMTok: 1, OutputPerMTok: 2},
				{Model: "fake-judge", InputPerMTok: 0.5, OutputPerMTok: 0.5}}}); err != nil {
			t.Fatal(err)
		}
		var refs []store.TaskRef
		for _, in := range []store.TaskInput{
			{TaskKey: "sum", Category: "math", UseCase: "school", Question: "What is 2+2?", Reference: "4",
				Checks: []store.Check{{Type: "numeric"}, {Type: "exact_match", Value: "The answer is 4"}}},
			{TaskKey: "chat", Category: "talk", UseCase: "school", Turns: []string{"Name a colour.", "Why that one?"}, Reference: "blue"},
		} {
			tk, err := st.CreateTask(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			refs = append(refs, store.TaskRef{ID: tk.ID})
		}
		coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "eval", TaskIDs: &refs})
		if err != nil {
			t.Fatal(err)
		}
		style, err := st.CreateStyle(ctx, store.StyleInput{Name: "two", ScaleMin: 0, ScaleMax: 5,
			Metrics: []store.Metric{{Name: "accuracy", Weight: 3}, {Name: "coherence", Weight: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		var judgeIDs []int64
		for _, p := range []string{"Strict examiner", "Lenient teacher"} {
			j, err := st.CreateJudge(ctx, store.JudgeInput{ProviderID: b.provider.ID, Model: "fake-judge", PersonalityName: p, StyleID: style.ID})
			if err != nil {
				t.Fatal(err)
			}
			judgeIDs = append(judgeIDs, j.ID)
		}
		temp := 0.3
		run, err := b.eng.StartRun(ctx, store.RunInput{JudgeIDs: judgeIDs, CollectionIDs: []int64{coll.ID}, Repeats: 2,
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small", Settings: store.TargetSettings{Temperature: &temp, SystemPrompt: "Be brief."}}}})
		if err != nil {
			t.Fatal(err)
		}
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		got := items(t, st, run.ID)
		if len(got) != 4 { // 2 tasks × 1 target × 2 repeats
			t.Fatalf("got %d items, want 4", len(got))
		}
		for _, it := range got {
			// Strict: (3·2 + 1·4)/4 = 2.5; lenient: 5; the panel's mean 3.75.
			if it.Status != store.ItemCompleted || it.Score == nil || math.Abs(*it.Score-3.75) > 1e-9 {
				t.Errorf("item %d (%s): status %s score %v, want COMPLETED 3.75", it.ID, it.TaskID, it.Status, it.Score)
			}
			want := (float64(*it.PromptTokens)*1 + float64(*it.CompletionTokens)*2) / 1e6
			if it.CostUSD == nil || math.Abs(*it.CostUSD-want) > 1e-12 || want == 0 {
				t.Errorf("item %d cost %v, want %g", it.ID, it.CostUSD, want)
			}
		}
		// Every target call carried the settings; the second turn saw the first answer.
		mu.Lock()
		for _, r := range targetRequests {
			if r.Temperature == nil || *r.Temperature != 0.3 || r.Messages[0].Role != "system" || r.Messages[0].Content != "Be brief." {
				t.Errorf("target request without its settings: %+v", r)
			}
		}
		var sawSecondTurn bool
		for _, r := range targetRequests {
			if r.Last() == "Why that one?" {
				sawSecondTurn = len(r.Messages) == 4 && r.Messages[2].Role == "assistant" && r.Messages[2].Content == "Answer: Name a colour."
			}
		}
		var sawConversation bool
		for _, r := range judgePrompts {
			if strings.Contains(r.Last(), "### User (turn 2)\nWhy that one?") {
				sawConversation = true
			}
		}
		if n := len(judgePrompts); n != 8 { // 4 items × 2 judges
			t.Errorf("%d judge calls, want 8", n)
		}
		mu.Unlock()
		if !sawSecondTurn || !sawConversation {
			t.Errorf("multi-turn: second turn saw the first answer %v, judge saw the conversation %v", sawSecondTurn, sawConversation)
		}

		// Scores: per item and judge, each metric plus the overall; checks on the "sum" task.
		page, err := st.RunScores(ctx, run.ID, store.ScoreFilter{PerPage: 500})
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, s := range page.Items {
			count[s.Metric]++
			switch {
			case s.Metric == "check_numeric" && s.Score != 1, s.Metric == "check_exact_match" && s.Score != 0:
				t.Errorf("check %s scored %g", s.Metric, s.Score)
			case s.Metric == "accuracy" && strings.Contains(s.Judge, "Strict") && s.Score != 2:
				t.Errorf("strict accuracy %g", s.Score)
			}
		}
		want := map[string]int{"accuracy": 8, "coherence": 8, rubric.Overall: 8, "check_numeric": 2, "check_exact_match": 2}
		for m, n := range want {
			if count[m] != n {
				t.Errorf("%d %s scores, want %d (all: %v)", count[m], m, n, count)
			}
		}
		strict, err := st.RunScores(ctx, run.ID, store.ScoreFilter{Judge: "fake-judge (Strict examiner)", Metric: "score"})
		if err != nil || strict.Total != 4 {
			t.Fatalf("scores of the strict judge: %d, %v", strict.Total, err)
		}
		for _, s := range strict.Items {
			if s.Score != 2.5 {
				t.Errorf("strict overall %g, want 2.5", s.Score)
			}
		}

		// The metrics KPIs and gates read.
		sum, err := runs.Snapshot(ctx, st, final)
		if err != nil {
			t.Fatal(err)
		}
		rm := runs.MetricsOf(final, sum)
		wantMetrics := map[string]float64{"score": 3.75, "accuracy": 3.5, "coherence": 4.5, "check_numeric": 1, "check_exact_match": 0,
			"pass_rate": 1, "error_rate": 0}
		for name, v := range wantMetrics {
			if got, ok := rm.Overall[name]; !ok || math.Abs(got-v) > 1e-9 {
				t.Errorf("run metric %s = %v (%v), want %g", name, got, ok, v)
			}
		}
		if pm := rm.PerModel["fake / fake-small"]; pm == nil || pm["accuracy"] != 3.5 || pm["cost_usd"] <= 0 {
			t.Errorf("per-model metrics %v", rm.PerModel)
		}

		// The run froze the style version: editing the style later changes nothing for it.
		if _, err := st.UpdateStyle(ctx, style.ID, store.StyleInput{Name: "two", ScaleMin: 1, ScaleMax: 10}); err != nil {
			t.Fatal(err)
		}
		again, err := st.Run(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j := again.Judges[0]; j.StyleVersion != 1 || j.ScaleMax != 5 || len(j.Metrics) != 2 {
			t.Errorf("run judge after the style edit: version %d scale %d–%d metrics %v", j.StyleVersion, j.ScaleMin, j.ScaleMax, j.Metrics)
		}
		var snap struct {
			Input store.RunInput `json:"input"`
		}
		if err := json.Unmarshal([]byte(again.Snapshot), &snap); err != nil || snap.Input.Repeats != 2 || len(snap.Input.JudgeIDs) != 2 {
			t.Errorf("snapshot %s: %v", again.Snapshot, err)
		}

		// A re-run repeats the frozen settings exactly, even after the edit.
		re, err := b.eng.Rerun(ctx, run.ID, "API")
		if err != nil {
			t.Fatal(err)
		}
		if re.SourceRunID == nil || *re.SourceRunID != run.ID || re.Judges[0].StyleVersion != 1 || re.Repeats != 2 ||
			re.Targets[0].Settings.SystemPrompt != "Be brief." {
			t.Fatalf("re-run %+v", re)
		}
		if fin := b.waitRun(t, re.ID); fin.Status != store.RunFinished {
			t.Fatalf("re-run ended %s", fin.Status)
		}
		if n := len(items(t, st, re.ID)); n != 4 {
			t.Errorf("re-run has %d items, want 4", n)
		}
	})
}

// TestChecksOnlyRun needs no judge: items complete after benchmarking with
// the mean of their checks as score.
func TestChecksOnlyRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, 0, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				t.Error("a checks-only run called a judge")
			}
			return llmtest.Reply{Content: "#### 72"}
		})
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "g", Category: "math", Question: "q", Reference: "... #### 72",
			Checks: []store.Check{{Type: "numeric"}, {Type: "contains", Value: "73"}}})
		if err != nil {
			t.Fatal(err)
		}
		coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "g", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		run, err := b.eng.StartRun(ctx, store.RunInput{Metrics: []string{"check_numeric", "check_contains"}, CollectionIDs: []int64{coll.ID},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}}})
		if err != nil {
			t.Fatal(err)
		}
		if fin := b.waitRun(t, run.ID); fin.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", fin.Status, fin.Error)
		}
		got := items(t, st, run.ID)
		if len(got) != 1 || got[0].Score == nil || *got[0].Score != 0.5 {
			t.Fatalf("items %+v, want one with score 0.5 (numeric 1, contains 0)", got)
		}
		if got[0].Judge != "check:numeric check:contains" || got[0].Reference != "... #### 72" {
			t.Errorf("item judge %q, reference %q: want the checks that scored it and the task's reference", got[0].Judge, got[0].Reference)
		}
		fig, err := st.RunFigures(ctx, run.ID, 10)
		if err != nil || fig.Summary.Overall.PassRate == nil || *fig.Summary.Overall.PassRate != 1 {
			t.Fatalf("summary %+v %v: 0.5 passes at the 0.5 threshold", fig, err)
		}
		// Measured metrics are scores too when the run names them; they do not change the item's score.
		run3, err := b.eng.StartRun(ctx, store.RunInput{Metrics: []string{"check_numeric", "latency_ms", "tokens"}, CollectionIDs: []int64{coll.ID},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}}})
		if err != nil {
			t.Fatal(err)
		}
		b.waitRun(t, run3.ID)
		measured, err := st.RunScores(ctx, run3.ID, store.ScoreFilter{Judge: "measure"})
		if err != nil || measured.Total != 2 {
			t.Errorf("scores from the measure source: %d, %v", measured.Total, err)
		}
		lat, err := st.RunScores(ctx, run3.ID, store.ScoreFilter{Metric: "latency_ms"})
		tok, err2 := st.RunScores(ctx, run3.ID, store.ScoreFilter{Metric: "tokens"})
		if err != nil || err2 != nil || lat.Total != 1 || tok.Total != 1 || tok.Items[0].Score != 2 || tok.Items[0].Judge != "measure" {
			t.Fatalf("measured scores: %+v %+v %v %v", lat.Items, tok.Items, err, err2)
		}
		r3, err := st.Run(ctx, run3.ID)
		if err != nil {
			t.Fatal(err)
		}
		sum3, err := runs.Snapshot(ctx, st, r3)
		if err != nil {
			t.Fatal(err)
		}
		rm3 := runs.MetricsOf(r3, sum3)
		if _, has := rm3.Overall["tokens"]; has || rm3.Overall["latency_ms"] != float64(*items(t, st, run3.ID)[0].TimeMs) {
			t.Errorf("run metrics must come from the items, not the measured scores: %v %v", rm3.Overall, err)
		}
		if got := items(t, st, run3.ID); *got[0].Score != 1 {
			t.Errorf("item score %v, want the numeric check's 1 alone", *got[0].Score)
		}

		// Switching a check off leaves its metric unscored.
		run2, err := b.eng.StartRun(ctx, store.RunInput{Metrics: []string{"check_numeric"}, CollectionIDs: []int64{coll.ID},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-large"}}})
		if err != nil {
			t.Fatal(err)
		}
		b.waitRun(t, run2.ID)
		scores, err := st.RunScores(ctx, run2.ID, store.ScoreFilter{})
		if err != nil || scores.Total != 1 || scores.Items[0].Metric != "check_numeric" || scores.Items[0].Judge != "check:numeric" {
			t.Fatalf("scores with contains switched off: %+v %v", scores.Items, err)
		}
	})
}

// TestTemplateOverCapFailsItem: a template that passed its save-time check
// but outgrows MaxOutput on a real answer fails the item, not the engine.
func TestTemplateOverCapFailsItem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, 2, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 5, "reasoning": "ok"}`}
			}
			return llmtest.Reply{Content: strings.Repeat("long answer ", 50)} // 600 bytes × 1000 > 256 KB
		})
		style, err := st.CreateStyle(ctx, store.StyleInput{Name: "echo", PromptTemplate: "{{range 1000}}{{$.Response}}{{end}}"})
		if err != nil {
			t.Fatal(err)
		}
		j, err := st.CreateJudge(ctx, store.JudgeInput{ProviderID: b.provider.ID, Model: "fake-judge", PersonalityName: "p", StyleID: style.ID})
		if err != nil {
			t.Fatal(err)
		}
		run, err := b.eng.StartRun(ctx, store.RunInput{JudgeIDs: []int64{j.ID}, CollectionIDs: []int64{b.coll.ID},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}}})
		if err != nil {
			t.Fatal(err)
		}
		b.waitRun(t, run.ID)
		for _, it := range items(t, st, run.ID) {
			if it.Status != store.ItemFailed || !strings.Contains(it.Error, "longer than 256 KB") {
				t.Errorf("item %d: %s %q; want FAILED for the prompt's size", it.ID, it.Status, it.Error)
			}
		}
	})
}
