package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

func ptr[T any](v T) *T { return &v }

// TestImportedRunIsJudged: an import's answers are scored like answers the
// engine fetched — checks, then the judge — without calling any target; an
// answer that is missing fails its item with the reason; latency, tokens
// and cost are kept as imported; one dataset run is imported once.
func TestImportedRunIsJudged(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, 0, nil)
		src := &store.RunSource{SourceID: 1, Dataset: "qa", Run: "v1"}
		tasks := store.ImportInput{Collection: "qa", Tasks: []store.TaskInput{
			{TaskKey: "item-1", Category: "qa", Question: "Capital of France?", Reference: "Paris", Checks: []store.Check{{Type: "contains"}}},
			{TaskKey: "item-2", Category: "qa", Question: "2+2?", Reference: "4", Checks: []store.Check{{Type: "contains"}}},
			{TaskKey: "item-3", Category: "qa", Question: "3+3?", Reference: "6", Checks: []store.Check{{Type: "contains"}}},
		}}
		imported := store.ImportedRun{
			Targets: []store.ImportedTarget{{Provider: "Langfuse", Model: "qa / v1", Source: src}},
			Answers: []store.ImportedAnswer{
				{TaskKey: "item-1", Response: ptr("It is Paris."), TimeMs: ptr(int64(1200)), PromptTokens: ptr(int64(30)), CompletionTokens: ptr(int64(4)), CostUSD: ptr(0.002)},
				{TaskKey: "item-2", Error: "trace t-2: not found (404)"},
				{TaskKey: "item-3", Response: ptr("6")}, // measured nothing
			},
		}
		in := store.RunInput{Name: "qa v1", Judge: &store.ModelRef{ProviderID: b.provider.ID, Model: "fake-judge"}}
		run, res, err := st.CreateImportedRun(ctx, in, tasks, imported)
		if err != nil {
			t.Fatal(err)
		}
		if run.Kind != store.RunImported || res.Created != 3 || res.Collection.Name != "qa" || !run.Targets[0].Imported {
			t.Fatalf("run kind %s, result %+v, target %+v", run.Kind, res, run.Targets[0])
		}
		b.eng.Wake()
		final := b.waitRun(t, run.ID)
		if final.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", final.Status, final.Error)
		}
		for _, w := range workItems(t, st, run.ID) {
			switch w.Task.TaskKey {
			case "item-1":
				if w.Status != store.ItemCompleted || *w.Response != "It is Paris." || *w.TimeMs != 1200 || *w.PromptTokens != 30 ||
					*w.CompletionTokens != 4 || *w.CostUSD != 0.002 || w.Score == nil {
					t.Errorf("answered item: %+v", w.Item)
				}
				scores, _ := st.ItemScoreRows(ctx, w.ID)
				var sources []string
				for _, sc := range scores {
					sources = append(sources, sc.Source)
				}
				if strings.Join(sources, ",") != "check:contains,judge:1" {
					t.Errorf("scored by %v, want the check and the judge", sources)
				}
			case "item-3":
				if w.Status != store.ItemCompleted || w.TimeMs != nil || w.PromptTokens != nil || w.CompletionTokens != nil || w.TokensPerS != nil || w.CostUSD != nil {
					t.Errorf("an answer imported without measures has some: time %v tokens %v/%v tps %v cost %v",
						w.TimeMs, w.PromptTokens, w.CompletionTokens, w.TokensPerS, w.CostUSD)
				}
			case "item-2":
				if w.Status != store.ItemFailed || w.Error != "trace t-2: not found (404)" {
					t.Errorf("missing answer: %s %q", w.Status, w.Error)
				}
			}
		}
		for _, c := range b.fake.Calls() {
			if !c.IsJudge() {
				t.Errorf("a target was called for an imported run: %q", c.Last())
			}
		}
		// Again: refused, naming the run; nothing written.
		_, _, err = st.CreateImportedRun(ctx, in, tasks, imported)
		var dup *store.AlreadyImportedError
		if !errors.As(err, &dup) || dup.RunID != run.ID || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second import: %v", err)
		}
		if _, err := st.RerunRun(ctx, run.ID, "API", "{}"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("re-run of an imported run: %v, want a conflict", err)
		}
	})
}
