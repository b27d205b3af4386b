package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// fakeLLM is a minimal OpenAI-compatible server: /v1/models and
// /v1/chat/completions, every reply after the same latency. A judge's
// prompt (its system message speaks of judging) gets a verdict the default
// judgement style parses; any other prompt gets a short answer. Package
// llmtest has the full fake, but it imports testing.
type fakeLLM struct {
	URL     string
	latency time.Duration
	calls   atomic.Int64
	srv     *http.Server
}

// startFake serves the fake on a free loopback port until Close.
func startFake(latency time.Duration) (*fakeLLM, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: fake LLM: %w", err)
	}
	f := &fakeLLM{URL: "http://" + ln.Addr().String(), latency: latency}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", f.models)
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := f.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("bench: fake LLM: %v", err)) // a listener we own does not fail
		}
	}()
	return f, nil
}

// Close stops the fake.
func (f *fakeLLM) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return f.srv.Shutdown(ctx)
}

func (f *fakeLLM) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"object":"list","data":[{"id":"judge","object":"model","owned_by":"bench"}]}`)
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// isJudge tells a judge's prompt from a question, as llmtest does.
func (r *chatRequest) isJudge() bool {
	return len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.Contains(r.Messages[0].Content, "judge")
}

func (f *fakeLLM) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.calls.Add(1)
	if f.latency > 0 {
		select {
		case <-time.After(f.latency):
		case <-r.Context().Done():
			return
		}
	}
	content := "The answer is 42, because the question asks for it."
	if req.isJudge() {
		content = `{"score": 7, "reasoning": "Mostly right."}`
	}
	msg, _ := json.Marshal(content) // a string always encodes
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-bench","object":"chat.completion","created":%d,"model":%q,`+
		`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],`+
		`"usage":{"prompt_tokens":20,"completion_tokens":10,"total_tokens":30}}`, time.Now().Unix(), req.Model, msg)
}
