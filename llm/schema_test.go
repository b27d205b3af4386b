package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestChatSendsSchema: a request's JSON schema reaches the provider as
// response_format's strict json_schema, as given; one that is not a JSON
// object is refused before anything is sent.
func TestChatSendsSchema(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id": "1", "object": "chat.completion", "model": "m",
			"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}]}`))
	}))
	defer srv.Close()
	c := New(Endpoint{BaseURL: srv.URL, InferenceEndpoint: "/v1/chat/completions", Timeout: 10 * time.Second}, NewHTTPClient(10*time.Second, nil))
	schema := `{"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"], "additionalProperties": false}`
	req := Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}, JSONSchema: json.RawMessage(schema), SchemaName: "verdict"}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	got := sent.ResponseFormat
	if got.Type != "json_schema" || got.JSONSchema.Name != "verdict" || !got.JSONSchema.Strict || !sameJSON(t, got.JSONSchema.Schema, schema) {
		t.Errorf("response_format sent: %s", body)
	}

	body = nil
	for _, bad := range []string{`[1]`, `{"type":`} {
		req.JSONSchema = json.RawMessage(bad)
		if _, err := c.Chat(context.Background(), req); err == nil || body != nil {
			t.Errorf("schema %s: err %v, sent %s", bad, err, body)
		}
	}
}

func sameJSON(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}
