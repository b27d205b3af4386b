package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// tribunal models shows the context window where the provider reports it,
// in the table and in JSON.
func TestModelsShowsContextWindow(t *testing.T) {
	p := newInProcess(t)
	fake := llmtest.New(t, nil)
	fake.ContextLengths = map[string]int64{"fake-large": 131072}
	if _, err := p.store().CreateProvider(context.Background(), store.ProviderInput{Name: "Fake", BaseURL: fake.URL}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := p.main("models", "Fake")
	if code != 0 {
		t.Fatalf("models: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "CONTEXT") {
		t.Errorf("header %q has no CONTEXT column", lines[0])
	}
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		rows[f[0]] = f
	}
	if got := rows["fake-large"]; len(got) < 2 || got[1] != "131,072" {
		t.Errorf("fake-large row %q", got)
	}
	if got := rows["fake-small"]; len(got) < 2 || got[1] != "–" {
		t.Errorf("fake-small row %q (no context reported)", got)
	}
	_, out, _ = p.main("models", "Fake", "--json")
	var list []modelRow
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if want := fake.ContextLengths[m.ID]; m.ContextLength != want {
			t.Errorf("%s: context_length %d, want %d", m.ID, m.ContextLength, want)
		}
	}
}
