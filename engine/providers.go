package engine

import (
	"context"
	"errors"
	"time"

	"tribunal/llm"
	"tribunal/store"
)

// cachedProvider spares a query per call; edits apply within providerTTL,
// and at once in the process that made them (see Refresh).
type cachedProvider struct {
	p       *store.Provider
	fetched time.Time
}

const providerTTL = time.Second

func endpoint(p *store.Provider) llm.Endpoint {
	h := make(map[string]string, len(p.Headers))
	for _, x := range p.Headers {
		h[x.Key] = x.Value
	}
	return llm.Endpoint{BaseURL: p.BaseURL, ModelsEndpoint: p.ModelsEndpoint, InferenceEndpoint: p.InferenceEndpoint,
		Headers: h, Timeout: time.Duration(p.TimeoutSeconds) * time.Second,
		ConnectTimeout: time.Duration(p.ConnectTimeoutSeconds) * time.Second}
}

// Client returns a client for a provider loaded with its secrets.
func (e *Engine) Client(p *store.Provider) *llm.Client { return llm.New(endpoint(p), e.httpClient) }

// providerLookup finds the provider of a slot's calls, cached.
type providerLookup func(ctx context.Context) (*store.Provider, error)

// providerOf looks a provider up by id.
func (e *Engine) providerOf(id *int64) providerLookup {
	return func(ctx context.Context) (*store.Provider, error) { return e.provider(ctx, id) }
}

// errProviderDeleted means a run's provider no longer exists: its items cannot run.
var errProviderDeleted = errors.New("the provider was deleted")

func (e *Engine) provider(ctx context.Context, id *int64) (*store.Provider, error) {
	if id == nil {
		return nil, errProviderDeleted
	}
	e.mu.Lock()
	c, ok := e.providers[*id]
	e.mu.Unlock()
	if ok && time.Since(c.fetched) < providerTTL {
		return c.p, nil
	}
	p, err := e.store.ProviderWithSecrets(ctx, *id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errProviderDeleted
	}
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.providers[*id] = cachedProvider{p: p, fetched: time.Now()}
	e.mu.Unlock()
	return p, nil
}

// waitRate blocks until the provider's requests-per-minute allow a call.
// The reservation lives in the database, so the rate holds for all
// processes together; calls are spread evenly, never in bursts.
func (e *Engine) waitRate(ctx context.Context, p *store.Provider) error {
	if p.RequestsPerMinute <= 0 {
		return nil
	}
	at, err := e.store.ReserveRate(ctx, p.ID, time.Minute/time.Duration(p.RequestsPerMinute))
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(at)):
		return nil
	}
}

func (e *Engine) chat(ctx context.Context, p *store.Provider, client *llm.Client, req llm.Request) (llm.Response, error) {
	if err := e.waitRate(ctx, p); err != nil {
		return llm.Response{}, err
	}
	start := time.Now()
	resp, err := client.Chat(ctx, req)
	if f := e.cfg.ObserveCallFunc; f != nil {
		f(p.Name, req.Model, time.Since(start), err)
	}
	return resp, err
}
