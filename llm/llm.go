// Package llm calls OpenAI-compatible providers (Ollama, LM Studio, vLLM,
// llama.cpp, OpenAI, OpenRouter, …) through the official openai-go SDK.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"tribunal/egress"
	"tribunal/secret"
)

// Endpoint is where and how to reach one provider.
type Endpoint struct {
	BaseURL           string
	ModelsEndpoint    string
	InferenceEndpoint string
	Headers           map[string]string
	Timeout           time.Duration // whole request
	ConnectTimeout    time.Duration // opening a connection; 0: the HTTP client's default
}

// Client talks to one provider. It adds no retries of its own: the engine
// decides what to retry, so every attempt is counted and stored.
type Client struct {
	oa      openai.Client
	ep      Endpoint
	timeout time.Duration
}

// envHeaders are headers the SDK may add from OPENAI_* environment variables;
// they belong to the user's OpenAI account and must never reach another provider.
var envHeaders = []string{"Authorization", "OpenAI-Organization", "OpenAI-Project"}

// connectTimeoutKey carries a request's connect timeout to the shared dialer.
type connectTimeoutKey struct{}

// NewHTTPClient is the HTTP client to share between Clients, so connections
// are reused. Connecting takes at most the request's provider connect
// timeout (else defaultConnect); each provider's timeout bounds the whole
// request. Every connection goes only where policy lets providers go (nil:
// egress.Default), and no redirect leads to another origin, which would
// take the provider's secret headers along.
func NewHTTPClient(defaultConnect time.Duration, policy *egress.Policy) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: defaultConnect, KeepAlive: 30 * time.Second}
		if t, ok := ctx.Value(connectTimeoutKey{}).(time.Duration); ok && t > 0 {
			d.Timeout = t
		}
		conn, err := policy.DialContext(ctx, egress.Providers, d, network, addr)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", addr, err)
		}
		return conn, nil
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               policy.Proxy(egress.Providers),
			DialContext:         dial,
			TLSHandshakeTimeout: defaultConnect,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !secret.SameOrigin(via[0].URL.String(), req.URL.String()) {
				return fmt.Errorf("refused a redirect to another origin (%s://%s): the provider's headers go only to its base URL", req.URL.Scheme, req.URL.Host)
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

// withConnectTimeout scopes ctx's request to the endpoint's connect timeout.
func (c *Client) withConnectTimeout(ctx context.Context) context.Context {
	if c.ep.ConnectTimeout <= 0 {
		return ctx
	}
	return context.WithValue(ctx, connectTimeoutKey{}, c.ep.ConnectTimeout)
}

// New builds a client for an endpoint on a shared HTTP client (nil: a new one).
func New(ep Endpoint, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = NewHTTPClient(10*time.Second, nil)
	}
	if ep.Timeout <= 0 {
		ep.Timeout = 120 * time.Second
	}
	strip := append([]string{}, envHeaders...)
	for _, line := range strings.Split(os.Getenv("OPENAI_CUSTOM_HEADERS"), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok {
			strip = append(strip, strings.TrimSpace(k))
		}
	}
	headers := ep.Headers
	oa := openai.NewClient(
		option.WithBaseURL(strings.TrimRight(ep.BaseURL, "/")+"/"),
		option.WithAPIKey(""),
		option.WithAdminAPIKey(""),
		option.WithHTTPClient(httpClient),
		option.WithMaxRetries(0),
		option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			for _, k := range strip {
				req.Header.Del(k)
			}
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			return next(req)
		}),
	)
	return &Client{oa: oa, ep: ep, timeout: ep.Timeout}
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content"`
	// ToolCalls are the tools an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Request is one chat completion.
type Request struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	MaxTokens   *int64    `json:"max_tokens,omitempty"`
	// ReasoningEffort is minimal, low, medium or high for reasoning models; empty sends none.
	ReasoningEffort string          `json:"reasoning_effort,omitempty"`
	JSONSchema      json.RawMessage `json:"json_schema,omitempty"` // asks for structured output
	SchemaName      string          `json:"-"`
	// Tools are the functions the model may call; ParallelToolCalls, when
	// set, says whether it may ask for several at once.
	Tools             []Tool `json:"tools,omitempty"`
	ParallelToolCalls *bool  `json:"parallel_tool_calls,omitempty"`
}

// Response is what came back, with measurements.
type Response struct {
	Text             string
	PromptTokens     int64
	CompletionTokens int64
	Duration         time.Duration
	// ToolCalls are the tools the model asked for; none means Text is its answer.
	ToolCalls []ToolCall
	// Reasoning is the reasoning text a provider returned beside the answer
	// (OpenRouter's "reasoning", vLLM and DeepSeek's "reasoning_content").
	Reasoning string
	// Model is the model id the reply names (a dated or quantised build
	// where the request named an alias).
	Model string
	// CostUSD is the call's cost as the provider reported it (OpenRouter's
	// usage.cost); nil when it reports none.
	CostUSD *float64
}

// TokensPerSecond is the generation speed over the whole request.
func (r Response) TokensPerSecond() float64 {
	if r.Duration <= 0 || r.CompletionTokens <= 0 {
		return 0
	}
	return float64(r.CompletionTokens) / r.Duration.Seconds()
}

func path(p string) string { return strings.TrimLeft(p, "/") }

// Chat sends one chat completion and measures it.
func (c *Client) Chat(ctx context.Context, req Request) (Response, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, messageParam(m))
	}
	if err := toolParams(&params, req); err != nil {
		return Response{}, err
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens != nil {
		params.MaxTokens = openai.Int(*req.MaxTokens)
	}
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	if len(req.JSONSchema) > 0 {
		// The schema goes into the body as it is: decoding it into a map for
		// the SDK to encode again cost every judge call both ways.
		schema := bytes.TrimSpace(req.JSONSchema)
		if !json.Valid(schema) || schema[0] != '{' {
			return Response{}, errors.New("llm: bad json schema: not a JSON object")
		}
		name := req.SchemaName
		if name == "" {
			name = "response"
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name: name, Schema: json.RawMessage(schema), Strict: openai.Bool(true),
			}},
		}
	}
	ctx, cancel := context.WithTimeout(c.withConnectTimeout(ctx), c.timeout)
	defer cancel()
	start := time.Now()
	var out openai.ChatCompletion
	err := c.oa.Post(ctx, path(c.ep.InferenceEndpoint), params, &out)
	dur := time.Since(start)
	if err != nil {
		return Response{Duration: dur}, classify(ctx, err, c.timeout)
	}
	if len(out.Choices) == 0 {
		return Response{Duration: dur}, &Error{Kind: KindMalformed, Message: "the reply has no choices"}
	}
	msg := out.Choices[0].Message
	return Response{
		Text:             msg.Content,
		PromptTokens:     out.Usage.PromptTokens,
		CompletionTokens: out.Usage.CompletionTokens,
		Duration:         dur,
		ToolCalls:        toolCallsOf(msg),
		Reasoning:        reasoningOf(msg),
		Model:            out.Model,
		CostUSD:          reportedCost(out.Usage),
	}, nil
}

// reportedCost reads usage.cost, which OpenRouter adds to the usage (the SDK
// keeps it among the usage's extra fields): a finite, non-negative number of
// USD, else nil.
func reportedCost(u openai.CompletionUsage) *float64 {
	// An extra field is never Valid (the SDK has no type for it): read its raw JSON.
	f, ok := u.JSON.ExtraFields["cost"]
	if !ok {
		return nil
	}
	var v *float64
	if err := json.Unmarshal([]byte(f.Raw()), &v); err != nil || v == nil || *v < 0 {
		return nil
	}
	return v
}

// Model is one model a provider offers.
type Model struct {
	ID      string   `json:"id"`
	OwnedBy string   `json:"owned_by,omitempty"`
	Pricing *Pricing `json:"pricing,omitempty"`
	// ContextLength is the model's context window in tokens where the
	// provider reports it in its model list (0: not reported).
	ContextLength int64 `json:"context_length,omitempty"`
}

// UnmarshalJSON reads the context window from wherever a provider puts it
// in /v1/models: OpenRouter's context_length (else its top_provider's),
// vLLM's max_model_len, LM Studio's max_context_length, llama.cpp's
// meta.n_ctx_train (the length the model was trained for). OpenAI and
// Ollama report none.
func (m *Model) UnmarshalJSON(b []byte) error {
	type plain Model
	var raw struct {
		plain
		TopProvider *struct {
			ContextLength *float64 `json:"context_length"`
		} `json:"top_provider"`
		MaxModelLen      *float64 `json:"max_model_len"`
		MaxContextLength *float64 `json:"max_context_length"`
		Meta             *struct {
			NCtxTrain *float64 `json:"n_ctx_train"`
		} `json:"meta"`
		ContextLength *float64 `json:"context_length"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Model(raw.plain)
	candidates := []*float64{raw.ContextLength, raw.MaxModelLen, raw.MaxContextLength}
	if raw.TopProvider != nil {
		candidates = append(candidates, raw.TopProvider.ContextLength)
	}
	if raw.Meta != nil {
		candidates = append(candidates, raw.Meta.NCtxTrain)
	}
	for _, c := range candidates {
		// Numbers as JSON floats: a server may write 131072.0.
		if c != nil && *c >= 1 && *c < 1e12 {
			m.ContextLength = int64(*c)
			return nil
		}
	}
	return nil
}

// Pricing is what OpenRouter's models endpoint publishes: USD per token, as strings.
type Pricing struct {
	Prompt     string `json:"prompt"`
	Completion string `json:"completion"`
}

// PerMTok converts the published per-token prices to USD per million
// tokens; ok is false when they are missing, negative or not numbers
// (OpenRouter marks variable-priced routers with "-1").
func (p *Pricing) PerMTok() (in, out float64, ok bool) {
	if p == nil {
		return 0, 0, false
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(p.Prompt), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(p.Completion), 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 || math.IsInf(a, 0) || math.IsInf(b, 0) || a != a || b != b {
		return 0, 0, false
	}
	return a * 1e6, b * 1e6, true
}

// Models lists the provider's models from its models endpoint.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	ctx, cancel := context.WithTimeout(c.withConnectTimeout(ctx), min(c.timeout, 30*time.Second))
	defer cancel()
	var out struct {
		Data []Model `json:"data"`
	}
	if err := c.oa.Get(ctx, path(c.ep.ModelsEndpoint), nil, &out); err != nil {
		return nil, classify(ctx, err, c.timeout)
	}
	if out.Data == nil {
		return nil, &Error{Kind: KindMalformed, Message: "the models endpoint did not answer an OpenAI-style {\"data\": [...]} list"}
	}
	return out.Data, nil
}

// Kind sorts provider errors by what to do about them.
type Kind string

// Error kinds.
const (
	KindTransient Kind = "transient"  // 5xx, network: retry with backoff
	KindRateLimit Kind = "rate_limit" // 429: retry after RetryAfter
	KindTimeout   Kind = "timeout"    // took longer than the provider's timeout
	KindPermanent Kind = "permanent"  // 400, 401, 403, 404, …: retrying cannot help
	KindMalformed Kind = "malformed"  // the reply is not what the protocol promises
)

// Error is a provider call that failed, with the provider's own message.
type Error struct {
	Kind       Kind
	StatusCode int
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
	}
	return e.Message
}

// Retryable reports whether trying again may succeed.
func (e *Error) Retryable() bool { return e.Kind != KindPermanent }

func classify(ctx context.Context, err error, timeout time.Duration) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		return StatusError(apiErr.StatusCode, header, providerMessage(apiErr))
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return &Error{Kind: KindTimeout, Message: fmt.Sprintf("no answer within %s", timeout)}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) || strings.HasPrefix(err.Error(), "error parsing response json") {
		return &Error{Kind: KindMalformed, Message: "the reply is not valid JSON: " + err.Error()}
	}
	return &Error{Kind: KindTransient, Message: err.Error()}
}

// StatusError sorts an error status a server answered by what to do about
// it: 429 waits for its Retry-After, 408, 409 and 5xx are retried, the rest
// are permanent. The message is kept to its first 500 bytes.
func StatusError(status int, header http.Header, message string) *Error {
	e := &Error{StatusCode: status, Message: truncate(message, 500)}
	switch {
	case status == http.StatusTooManyRequests:
		e.Kind = KindRateLimit
		e.RetryAfter = retryAfter(header.Get("Retry-After"))
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		e.Kind = KindTransient
	default:
		e.Kind = KindPermanent
	}
	return e
}

// providerMessage keeps what the provider said, so users see its reason.
func providerMessage(e *openai.Error) string {
	if e.Message != "" {
		return e.Message
	}
	if raw := strings.TrimSpace(e.RawJSON()); raw != "" {
		return truncate(raw, 500)
	}
	if e.Response != nil {
		return e.Response.Status
	}
	return "no message"
}

func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
