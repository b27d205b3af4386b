// Package langfuse reads datasets, dataset runs and traces from Langfuse's
// public API (HTTP Basic auth, public key : secret key), for importing the
// answers of a dataset run that already happened.
//
// Paths and field names follow Langfuse's published API definition
// (fern/apis/server/definition, Langfuse v4.16): dataset runs and their
// items are its "v3" endpoints, still served by self-hosted Langfuse.
package langfuse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tribunal/secret"
)

// ErrNotFound means Langfuse answered 404: no such dataset, run or trace.
var ErrNotFound = errors.New("not found in Langfuse")

// ErrUnauthorized means Langfuse refused the public and secret keys.
var ErrUnauthorized = errors.New("the keys were refused (check the public and secret key, and that they belong to this Langfuse)")

// maxReply bounds one reply's body; a trace with large inputs and outputs fits.
const maxReply = 64 << 20

// Client calls one Langfuse with one key pair. Its fields after the keys
// tune paging, retries and concurrency; New sets defaults.
type Client struct {
	base      string
	publicKey string
	secretKey string
	hc        *http.Client
	// PageSize is the limit asked for on each page.
	PageSize int
	// Attempts bounds the tries of one request answered 429 or 5xx.
	Attempts int
	// BaseDelay is the first retry's delay, doubled for each next one
	// (with jitter) up to MaxDelay; a Retry-After header overrides it.
	BaseDelay, MaxDelay time.Duration
	// Concurrency bounds the traces Traces fetches at once.
	Concurrency int
}

// New returns a client of the Langfuse at baseURL (e.g.
// https://cloud.langfuse.com or a self-hosted one). hc is the engine's
// egress-checked client; nil gives one with timeouts. Whichever it is, a
// redirect to another origin is refused, so the keys go only to baseURL.
func New(baseURL, publicKey, secretKey string, hc *http.Client) *Client {
	var c http.Client
	if hc != nil {
		c = *hc
	} else {
		c.Timeout = 60 * time.Second
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !secret.SameOrigin(via[0].URL.String(), req.URL.String()) {
			return fmt.Errorf("refused a redirect to another origin (%s://%s): the keys go only to the source's base URL", req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), publicKey: publicKey, secretKey: secretKey, hc: &c,
		PageSize: 100, Attempts: 5, BaseDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second, Concurrency: 8}
}

// APIError is a reply Langfuse gave with an error status.
type APIError struct {
	Method, Path string
	Status       int
	// Message is Langfuse's own message, when its reply had one.
	Message string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("langfuse: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += ": " + ErrUnauthorized.Error()
	}
	if e.Message != "" {
		msg += " (" + e.Message + ")"
	}
	return msg
}

// Unwrap lets errors.Is tell a 404 (ErrNotFound) and refused keys (ErrUnauthorized).
func (e *APIError) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrUnauthorized
	}
	return nil
}

// get fetches path with query q into out, retrying 429 and 5xx.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	attempts := max(c.Attempts, 1)
	for attempt := 1; ; attempt++ {
		body, retryAfter, err := c.do(ctx, path, u)
		var apiErr *APIError
		if err == nil {
			if err := json.Unmarshal(body, out); err != nil {
				return fmt.Errorf("langfuse: GET %s: the reply is not the JSON Langfuse sends (%v); is the base URL a Langfuse?", path, err)
			}
			return nil
		}
		if !errors.As(err, &apiErr) || (apiErr.Status != http.StatusTooManyRequests && apiErr.Status < 500) || attempt >= attempts {
			return err
		}
		delay := c.backoff(attempt)
		if retryAfter > 0 {
			delay = min(retryAfter, max(c.MaxDelay, c.BaseDelay))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("langfuse: GET %s: %w (after %v)", path, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// backoff is the delay before retry n (1-based): BaseDelay doubled n-1
// times, capped at MaxDelay, with full jitter over its upper half so that
// concurrent fetches do not retry in step.
func (c *Client) backoff(n int) time.Duration {
	d := c.BaseDelay << min(n-1, 20)
	if d > c.MaxDelay || d <= 0 {
		d = c.MaxDelay
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

// do sends one GET and returns the body of a 2xx reply, or an *APIError
// with how long the server asked to wait (Retry-After) before the next try.
func (c *Client) do(ctx context.Context, path, u string) ([]byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("langfuse: GET %s: %w", path, err)
	}
	req.SetBasicAuth(c.publicKey, c.secretKey)
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("langfuse: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return nil, 0, fmt.Errorf("langfuse: GET %s: read the reply: %w", path, err)
	}
	if len(body) > maxReply {
		return nil, 0, fmt.Errorf("langfuse: GET %s: the reply is larger than %d MB", path, maxReply>>20)
	}
	if resp.StatusCode/100 == 2 {
		return body, 0, nil
	}
	return nil, retryAfter(resp.Header.Get("Retry-After")), &APIError{Method: http.MethodGet, Path: path, Status: resp.StatusCode, Message: errorMessage(body)}
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// errorMessage is the message of Langfuse's error body ({"message": …}),
// cut short: it is shown to the user.
func errorMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	msg := e.Message
	if msg == "" {
		msg = e.Error
	}
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}

// meta is the paging part of Langfuse's list replies.
type meta struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	TotalItems int `json:"totalItems"`
	TotalPages int `json:"totalPages"`
}

// maxPages stops a server whose paging never ends.
const maxPages = 100000

// pages fetches every page of a list endpoint, handing each page's data to add.
func pages[T any](ctx context.Context, c *Client, path string, q url.Values, add func([]T)) error {
	if q == nil {
		q = url.Values{}
	}
	limit := max(c.PageSize, 1)
	q.Set("limit", strconv.Itoa(limit))
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var reply struct {
			Data *[]T `json:"data"`
			Meta meta `json:"meta"`
		}
		if err := c.get(ctx, path, q, &reply); err != nil {
			return err
		}
		if reply.Data == nil {
			return fmt.Errorf("langfuse: GET %s: the reply has no \"data\" list; is the base URL a Langfuse?", path)
		}
		add(*reply.Data)
		// totalPages says when to stop; without it, a short page does.
		if len(*reply.Data) == 0 || (reply.Meta.TotalPages > 0 && page >= reply.Meta.TotalPages) ||
			(reply.Meta.TotalPages == 0 && len(*reply.Data) < limit) {
			return nil
		}
	}
	return fmt.Errorf("langfuse: GET %s: more than %d pages", path, maxPages)
}

// Test checks the keys with the cheapest authenticated call (the keys'
// project). Refused keys answer an error wrapping ErrUnauthorized.
func (c *Client) Test(ctx context.Context) error {
	var reply struct {
		Data *[]struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := c.get(ctx, "/api/public/projects", nil, &reply); err != nil {
		return err
	}
	if reply.Data == nil {
		return errors.New("langfuse: GET /api/public/projects: the reply has no \"data\" list; is the base URL a Langfuse?")
	}
	return nil
}
