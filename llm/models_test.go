package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Each provider reports a model's context window in its own field of
// /v1/models; a provider that reports none leaves it 0.
func TestModelsContextWindow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object": "list", "data": [
			{"id": "openrouter", "context_length": 200000, "top_provider": {"context_length": 100000}},
			{"id": "openrouter-top", "top_provider": {"context_length": 64000}},
			{"id": "vllm", "object": "model", "max_model_len": 32768},
			{"id": "lmstudio", "max_context_length": 8192.0},
			{"id": "llamacpp", "meta": {"n_ctx_train": 131072, "n_vocab": 32000}},
			{"id": "openai", "owned_by": "system"},
			{"id": "nonsense", "context_length": -5}
		]}`))
	}))
	defer srv.Close()
	c := New(Endpoint{BaseURL: srv.URL, ModelsEndpoint: "/v1/models", Timeout: 10 * time.Second}, NewHTTPClient(10*time.Second, nil))
	list, err := c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"openrouter": 200000, "openrouter-top": 64000, "vllm": 32768, "lmstudio": 8192,
		"llamacpp": 131072, "openai": 0, "nonsense": 0}
	if len(list) != len(want) {
		t.Fatalf("got %d models, want %d", len(list), len(want))
	}
	for _, m := range list {
		if m.ContextLength != want[m.ID] {
			t.Errorf("%s: context %d, want %d", m.ID, m.ContextLength, want[m.ID])
		}
	}
	if list[5].OwnedBy != "system" {
		t.Errorf("owned_by lost: %+v", list[5])
	}
}
