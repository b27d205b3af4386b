package langfuse

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Dataset is a Langfuse dataset.
type Dataset struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Metadata    json.RawMessage `json:"metadata"`
	CreatedAt   time.Time       `json:"createdAt"`
}

// DatasetItem is one item of a dataset: the input, the expected output and
// metadata, each any JSON.
type DatasetItem struct {
	ID             string          `json:"id"`
	Input          json.RawMessage `json:"input"`
	ExpectedOutput json.RawMessage `json:"expectedOutput"`
	Metadata       json.RawMessage `json:"metadata"`
	// Status is ACTIVE or ARCHIVED.
	Status string `json:"status"`
}

// DatasetRun is one run of a dataset (an experiment).
type DatasetRun struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	// Items are the run's items, when Langfuse sent them (DatasetRun does).
	Items []RunItem `json:"datasetRunItems"`
}

// RunItem links a dataset item to the trace (and observation) that
// answered it in a run.
type RunItem struct {
	ID            string `json:"id"`
	DatasetItemID string `json:"datasetItemId"`
	TraceID       string `json:"traceId"`
	ObservationID string `json:"observationId"`
}

// Trace is what a run item's trace answered, with its latency, cost and
// the tokens its observations used.
type Trace struct {
	ID string
	// Input and Output are the trace's JSON as sent (null when absent); Text
	// turns them into what a judge reads.
	Input, Output  json.RawMessage
	LatencySeconds float64
	TotalCost      float64
	InputTokens    int64
	OutputTokens   int64
}

// Dataset returns the dataset named name.
func (c *Client) Dataset(ctx context.Context, name string) (*Dataset, error) {
	var d Dataset
	// The v1 path: served by every Langfuse since datasets exist (v4 also has /v2/datasets/{name}).
	if err := c.get(ctx, "/api/public/datasets/"+url.PathEscape(name), nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// DatasetItems returns every item of the dataset named name, all pages.
func (c *Client) DatasetItems(ctx context.Context, name string) ([]DatasetItem, error) {
	var items []DatasetItem
	err := pages(ctx, c, "/api/public/dataset-items", url.Values{"datasetName": {name}}, func(p []DatasetItem) { items = append(items, p...) })
	return items, err
}

// DatasetRun returns the run named run of dataset, with its items.
func (c *Client) DatasetRun(ctx context.Context, dataset, run string) (*DatasetRun, error) {
	var r DatasetRun
	if err := c.get(ctx, "/api/public/datasets/"+url.PathEscape(dataset)+"/runs/"+url.PathEscape(run), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// DatasetRunItems returns every item of the run named runName of the
// dataset whose id is datasetID, all pages.
func (c *Client) DatasetRunItems(ctx context.Context, datasetID, runName string) ([]RunItem, error) {
	var items []RunItem
	q := url.Values{"datasetId": {datasetID}, "runName": {runName}}
	err := pages(ctx, c, "/api/public/dataset-run-items", q, func(p []RunItem) { items = append(items, p...) })
	return items, err
}

// DatasetRuns returns every run of the dataset named dataset (without
// their items), all pages.
func (c *Client) DatasetRuns(ctx context.Context, dataset string) ([]DatasetRun, error) {
	var runs []DatasetRun
	err := pages(ctx, c, "/api/public/datasets/"+url.PathEscape(dataset)+"/runs", nil, func(p []DatasetRun) { runs = append(runs, p...) })
	return runs, err
}

// LatestRun returns the dataset's newest run (by createdAt), or an error
// wrapping ErrNotFound when it has none.
func (c *Client) LatestRun(ctx context.Context, dataset string) (*DatasetRun, error) {
	runs, err := c.DatasetRuns(ctx, dataset)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, &APIError{Method: "GET", Path: "/api/public/datasets/" + url.PathEscape(dataset) + "/runs", Status: 404, Message: "the dataset has no runs"}
	}
	latest := runs[0]
	for _, r := range runs[1:] {
		if r.CreatedAt.After(latest.CreatedAt) {
			latest = r
		}
	}
	return &latest, nil
}

// traceJSON is the part of GET /api/public/traces/{traceId} a Trace needs.
type traceJSON struct {
	ID           string          `json:"id"`
	Input        json.RawMessage `json:"input"`
	Output       json.RawMessage `json:"output"`
	Latency      *float64        `json:"latency"`
	TotalCost    *float64        `json:"totalCost"`
	Observations []struct {
		// Usage is the older shape, still sent (deprecated); UsageDetails
		// the newer one, keyed by usage type.
		Usage *struct {
			Input  *int64 `json:"input"`
			Output *int64 `json:"output"`
		} `json:"usage"`
		UsageDetails map[string]int64 `json:"usageDetails"`
	} `json:"observations"`
}

// Trace returns one trace. A trace Langfuse does not have answers an error
// wrapping ErrNotFound.
func (c *Client) Trace(ctx context.Context, id string) (*Trace, error) {
	var tj traceJSON
	if err := c.get(ctx, "/api/public/traces/"+url.PathEscape(id), nil, &tj); err != nil {
		return nil, err
	}
	t := &Trace{ID: tj.ID, Input: orNull(tj.Input), Output: orNull(tj.Output)}
	if tj.Latency != nil {
		t.LatencySeconds = *tj.Latency
	}
	if tj.TotalCost != nil {
		t.TotalCost = *tj.TotalCost
	}
	for _, o := range tj.Observations {
		in, out, ok := usageDetails(o.UsageDetails)
		if !ok && o.Usage != nil {
			in, out = deref(o.Usage.Input), deref(o.Usage.Output)
		}
		t.InputTokens += in
		t.OutputTokens += out
	}
	return t, nil
}

// usageDetails sums an observation's input and output units. Langfuse
// keys them by type: "input", "output", and finer ones such as
// "input_cached_tokens" or "output_reasoning_tokens", which are parts of
// the input and the output; "total" is their sum and is not added again.
func usageDetails(m map[string]int64) (in, out int64, ok bool) {
	for k, v := range m {
		switch {
		case k == "input" || strings.HasPrefix(k, "input_"):
			in += v
			ok = true
		case k == "output" || strings.HasPrefix(k, "output_"):
			out += v
			ok = true
		}
	}
	return in, out, ok
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// Traces fetches the traces ids name, Concurrency at a time, and calls fn
// once per id (one call at a time, in no set order) with the trace or the
// error that fetching it gave. It returns when every id was handed to fn,
// or with ctx's error when ctx ends first.
func (c *Client) Traces(ctx context.Context, ids []string, fn func(id string, t *Trace, err error)) error {
	work := make(chan string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(min(c.Concurrency, len(ids)), 1) {
		wg.Go(func() {
			for id := range work {
				t, err := c.Trace(ctx, id)
				mu.Lock()
				fn(id, t, err)
				mu.Unlock()
			}
		})
	}
	var err error
feed:
	for _, id := range ids {
		select {
		case work <- id:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	return err
}
