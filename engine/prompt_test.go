package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/prompt"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestModelGetsBuiltPrompt: the model under test receives the built prompt
// as its first user turn, its later turns as they are, and the system
// prompt as the system message; the item's request record shows the same.
func TestModelGetsBuiltPrompt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var mu sync.Mutex
		var got []llmtest.ChatRequest
		b := setup(t, st, 0, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() {
				mu.Lock()
				got = append(got, r)
				mu.Unlock()
			}
			return llmtest.Reply{Content: "ok"}
		})
		in := store.TaskInput{TaskKey: "p", Category: "c", Question: "Summarise the text.", Turns: []string{"Summarise the text.", "Shorter."},
			SystemPrompt: "Be exact.", Input: "The cat sat.", Constraints: "Output format: json\n\nmax_words: 30",
			Examples: `{"summary": "A dog ran."}`, JudgeInstructions: "JUDGE-ONLY hint", Checks: []store.Check{{Type: "json_valid"}}}
		tk, err := st.CreateTask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := prompt.Build(ctx, tk.PromptTask(tk.Question))
		if err != nil || want == tk.Question {
			t.Fatalf("built prompt %q, %v: want more than the question", want, err)
		}
		coll, err := st.CreateCollection(ctx, store.CollectionInput{Name: "p", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		run, err := b.eng.StartRun(ctx, store.RunInput{Metrics: []string{"check_json_valid"}, CollectionIDs: []int64{coll.ID},
			Targets: []store.ModelRef{{ProviderID: b.provider.ID, Model: "fake-small"}}})
		if err != nil {
			t.Fatal(err)
		}
		if fin := b.waitRun(t, run.ID); fin.Status != store.RunFinished {
			t.Fatalf("run ended %s: %s", fin.Status, fin.Error)
		}
		mu.Lock()
		defer mu.Unlock()
		var last llmtest.ChatRequest
		for _, r := range got {
			if len(r.Messages) > len(last.Messages) {
				last = r // the second turn's call carries the whole conversation
			}
		}
		if len(last.Messages) != 4 {
			t.Fatalf("the model's calls: %+v, want system, user, assistant, user", got)
		}
		if m := last.Messages[0]; m.Role != "system" || m.Content != "Be exact." {
			t.Errorf("first message %+v, want the system prompt", m)
		}
		if m := last.Messages[1]; m.Role != "user" || m.Content != want {
			t.Errorf("first user message:\n%s\nwant the built prompt:\n%s", m.Content, want)
		}
		if m := last.Messages[3]; m.Role != "user" || m.Content != "Shorter." {
			t.Errorf("second user message %+v, want the second turn as it is", m)
		}
		if strings.Contains(want, "JUDGE-ONLY") {
			t.Error("the prompt shows judge-only instructions")
		}
		item, err := st.ItemWork(ctx, items(t, st, run.ID)[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(item.Request, "The cat sat.") || !strings.Contains(item.Request, "CRITICAL CONSTRAINTS") {
			t.Errorf("the item's request record %q does not show the prompt sent", item.Request)
		}
	})
}
