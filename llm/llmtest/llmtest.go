// Package llmtest is a fake OpenAI-compatible server for tests. It answers
// /v1/models and /v1/chat/completions and can be scripted to add latency,
// fail with any status, hang, or reply with malformed output.
package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ChatRequest is the part of a chat completion request the fake reads.
type ChatRequest struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	// Tools are the function tools offered, as sent.
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ParallelToolCalls *bool `json:"parallel_tool_calls"`
	ResponseFormat    *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Temperature     *float64    `json:"temperature"`
	MaxTokens       *int64      `json:"max_tokens"`
	ReasoningEffort string      `json:"reasoning_effort"`
	Header          http.Header `json:"-"`
}

// Message is one message of a request: tool calls on an assistant's, the
// call answered on a tool's.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
}

// ToolCall is a function call, in a reply or in an assistant message sent back.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Call is a function call for a Reply.
func Call(id, name, arguments string) ToolCall {
	c := ToolCall{ID: id, Type: "function"}
	c.Function.Name, c.Function.Arguments = name, arguments
	return c
}

// ToolResults lists the tool messages of the request after its last
// assistant message: the results of the calls the fake asked for last.
func (r ChatRequest) ToolResults() []Message {
	var out []Message
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role == "tool"; i-- {
		out = append([]Message{r.Messages[i]}, out...)
	}
	return out
}

// Turn counts the assistant messages so far plus one: which model call of
// an agent's item this is.
func (r ChatRequest) Turn() int {
	n := 1
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Question is the content of the first user message.
func (r ChatRequest) Question() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// Last is the content of the last message.
func (r ChatRequest) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// IsJudge reports whether the request comes from a judge (it carries a system prompt about grading).
func (r ChatRequest) IsJudge() bool {
	return len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.Contains(r.Messages[0].Content, "judge")
}

// IsWarmup reports whether the request is the engine's warm-up call.
func (r ChatRequest) IsWarmup() bool { return r.Last() == "Hello, World!" }

// Reply scripts one answer of the fake.
type Reply struct {
	Status     int           // HTTP status; 0 means 200
	Content    string        // the assistant message on 200
	Raw        string        // when set, sent as the body verbatim (malformed replies)
	Delay      time.Duration // wait before answering
	Hang       bool          // never answer (until the client gives up)
	RetryAfter string        // Retry-After header value
	Tokens     int64         // completion tokens reported; 0 counts words
	ToolCalls  []ToolCall    // function calls asked for (finish_reason tool_calls)
	Reasoning  string        // sent as the message's "reasoning" field
	Model      string        // the reply's model id; "" repeats the request's
	// Cost, when set, is reported as usage.cost (USD), as OpenRouter reports a call's cost.
	Cost *float64
}

// Server is a running fake.
type Server struct {
	*httptest.Server
	// Models is what /v1/models lists.
	Models []string
	// Pricing publishes per-token prices for models, OpenRouter style: model → {prompt, completion}.
	Pricing map[string][2]string
	// ContextLengths publishes context windows, OpenRouter style: model → context_length.
	ContextLengths map[string]int64

	mu     sync.Mutex
	script func(ChatRequest) Reply
	calls  []ChatRequest
	forget bool // do not keep calls (see Forget)
	count  atomic.Int64
}

// DefaultReply answers questions with "Answer: <question>" and judges with a
// score of 7, so a run without a script completes.
func DefaultReply(r ChatRequest) Reply {
	if r.IsJudge() {
		return Reply{Content: `{"score": 7, "reasoning": "Mostly right."}`}
	}
	return Reply{Content: "Answer: " + r.Last()}
}

// New starts a fake whose answers come from script (nil: DefaultReply).
func New(t testing.TB, script func(ChatRequest) Reply) *Server {
	s := &Server{Models: []string{"fake-small", "fake-large", "fake-judge"}, script: script}
	if s.script == nil {
		s.script = DefaultReply
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// SetScript replaces the script.
func (s *Server) SetScript(script func(ChatRequest) Reply) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// Forget stops keeping the requests received, for benchmarks: kept, they
// would grow the heap, and the garbage collector's work, with every call.
func (s *Server) Forget() {
	s.mu.Lock()
	s.forget, s.calls = true, nil
	s.mu.Unlock()
}

// Calls returns every chat request received so far.
func (s *Server) Calls() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.calls...)
}

// CallCount is the number of chat requests received.
func (s *Server) CallCount() int64 { return s.count.Load() }

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type pricing struct {
		Prompt     string `json:"prompt"`
		Completion string `json:"completion"`
	}
	type m struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		OwnedBy string   `json:"owned_by"`
		Pricing *pricing `json:"pricing,omitempty"`
		Context int64    `json:"context_length,omitempty"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []m    `json:"data"`
	}{Object: "list", Data: []m{}}
	for _, id := range s.Models {
		row := m{ID: id, Object: "model", OwnedBy: "fake", Context: s.ContextLengths[id]}
		if pr, ok := s.Pricing[id]; ok {
			row.Pricing = &pricing{Prompt: pr[0], Completion: pr[1]}
		}
		out.Data = append(out.Data, row)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.Header = r.Header.Clone()
	s.count.Add(1)
	s.mu.Lock()
	if !s.forget {
		s.calls = append(s.calls, req)
	}
	script := s.script
	s.mu.Unlock()
	rep := script(req)
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Raw != "" {
		w.WriteHeader(max(rep.Status, 200))
		fmt.Fprint(w, rep.Raw)
		return
	}
	if rep.Status != 0 && rep.Status != 200 {
		w.WriteHeader(rep.Status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": rep.Content, "type": "fake_error", "code": rep.Status}})
		return
	}
	tokens := rep.Tokens
	if tokens == 0 {
		tokens = int64(len(strings.Fields(rep.Content)))
	}
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		msg["tool_calls"], finish = rep.ToolCalls, "tool_calls"
		if rep.Content == "" {
			msg["content"] = nil
		}
	}
	if rep.Reasoning != "" {
		msg["reasoning"] = rep.Reasoning
	}
	usage := map[string]any{"prompt_tokens": len(strings.Fields(req.Last())), "completion_tokens": tokens,
		"total_tokens": tokens + int64(len(strings.Fields(req.Last())))}
	if rep.Cost != nil {
		usage["cost"] = *rep.Cost
	}
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": cmp.Or(rep.Model, req.Model),
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   usage,
	})
}
