package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestReportedCost: usage.cost, as OpenRouter adds it, is the call's
// reported cost; a reply without it, or with something that is not a
// non-negative number there, reports none.
func TestReportedCost(t *testing.T) {
	for _, tc := range []struct {
		usage string
		want  *float64
	}{
		{`"cost": 0.00042`, ptr(0.00042)},
		{`"cost": 0`, ptr(0)},
		{`"cost": 1e-7, "is_byok": false, "cost_details": {"upstream_inference_cost": null}`, ptr(1e-7)},
		{`"cost": null`, nil},
		{`"cost": "0.1"`, nil},
		{`"cost": -1`, nil},
		{`"prompt_tokens_details": {"cached_tokens": 0}`, nil},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"m",
				"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],
				"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,%s}}`, tc.usage)
		}))
		c := New(Endpoint{BaseURL: srv.URL, InferenceEndpoint: "/v1/chat/completions", Timeout: 10 * time.Second}, nil)
		resp, err := c.Chat(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.usage, err)
		}
		switch {
		case tc.want == nil && resp.CostUSD != nil:
			t.Errorf("%s: cost %v, want none", tc.usage, *resp.CostUSD)
		case tc.want != nil && (resp.CostUSD == nil || *resp.CostUSD != *tc.want):
			t.Errorf("%s: cost %v, want %v", tc.usage, resp.CostUSD, *tc.want)
		}
		if resp.PromptTokens != 3 || resp.CompletionTokens != 1 {
			t.Errorf("%s: tokens %d/%d", tc.usage, resp.PromptTokens, resp.CompletionTokens)
		}
	}
}

func ptr(v float64) *float64 { return &v }
