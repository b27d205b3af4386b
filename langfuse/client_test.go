package langfuse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tribunal/langfuse"
	"tribunal/langfuse/langfusetest"
)

// client is a client of fake with fast retries and small pages.
func client(fake *langfusetest.Server) *langfuse.Client {
	c := langfuse.New(fake.URL, fake.PublicKey, fake.SecretKey, nil)
	c.BaseDelay, c.MaxDelay, c.PageSize = time.Millisecond, 5*time.Millisecond, 10
	return c
}

func TestDatasetItemsPages(t *testing.T) {
	fake := langfusetest.New(t)
	var items []langfusetest.Item
	for i := range 25 {
		items = append(items, langfusetest.Item{Input: map[string]any{"question": fmt.Sprintf("q%d", i)}, ExpectedOutput: fmt.Sprintf("a%d", i),
			Metadata: map[string]any{"n": i}})
	}
	fake.AddDataset("qa", items...)
	got, err := client(fake).DatasetItems(context.Background(), "qa")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 {
		t.Fatalf("got %d items, want 25", len(got))
	}
	if hits := fake.Hits("/api/public/dataset-items"); hits != 3 {
		t.Errorf("fetched %d pages of 10, want 3", hits)
	}
	for i, it := range got {
		if it.ID != fake.ItemIDs("qa")[i] || langfuse.Text(it.Input) != fmt.Sprintf("q%d", i) ||
			langfuse.Text(it.ExpectedOutput) != fmt.Sprintf("a%d", i) || string(it.Metadata) != fmt.Sprintf(`{"n":%d}`, i) || it.Status != "ACTIVE" {
			t.Errorf("item %d = %+v", i, it)
		}
	}
}

func TestDatasetRunAndItems(t *testing.T) {
	fake := langfusetest.New(t)
	dsID := fake.AddDataset("qa", langfusetest.Item{ID: "i1"}, langfusetest.Item{ID: "i2"})
	fake.AddRun("qa", "first", langfusetest.RunItem{DatasetItemID: "i1", TraceID: "t0"})
	var runItems []langfusetest.RunItem
	for i := range 23 {
		runItems = append(runItems, langfusetest.RunItem{DatasetItemID: fmt.Sprintf("i%d", i%2+1), TraceID: fmt.Sprintf("t%d", i), ObservationID: "o1"})
	}
	fake.AddRun("qa", "second", runItems...)
	c := client(fake)
	ctx := context.Background()

	ds, err := c.Dataset(ctx, "qa")
	if err != nil || ds.ID != dsID || ds.Name != "qa" {
		t.Fatalf("Dataset = %+v, %v", ds, err)
	}
	items, err := c.DatasetRunItems(ctx, ds.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 23 || items[22].TraceID != "t22" || items[22].DatasetItemID != "i1" || items[0].ObservationID != "o1" {
		t.Fatalf("run items = %d, last %+v", len(items), items[len(items)-1])
	}
	run, err := c.DatasetRun(ctx, "qa", "second")
	if err != nil || run.Name != "second" || len(run.Items) != 23 || run.Items[5].TraceID != "t5" {
		t.Fatalf("DatasetRun = %+v, %v", run, err)
	}
	latest, err := c.LatestRun(ctx, "qa")
	if err != nil || latest.Name != "second" {
		t.Fatalf("LatestRun = %+v, %v", latest, err)
	}
	if _, err := c.DatasetRun(ctx, "qa", "nope"); !errors.Is(err, langfuse.ErrNotFound) {
		t.Errorf("missing run: %v, want ErrNotFound", err)
	}
	if _, err := c.Dataset(ctx, "nope"); !errors.Is(err, langfuse.ErrNotFound) {
		t.Errorf("missing dataset: %v, want ErrNotFound", err)
	}
}

func TestTraceUsageBothShapes(t *testing.T) {
	fake := langfusetest.New(t)
	fake.AddTrace(langfusetest.Trace{ID: "new", Input: map[string]any{"role": "user", "content": "2+2?"}, Output: "4",
		LatencySeconds: 1.25, TotalCost: 0.0031, Observations: []langfusetest.Observation{
			{UsageDetails: map[string]int64{"input": 10, "input_cached_tokens": 5, "output": 3, "output_reasoning_tokens": 2, "total": 20}},
			{Type: "SPAN"},
			{UsageDetails: map[string]int64{"input": 1, "output": 1, "total": 2}},
		}})
	fake.AddTrace(langfusetest.Trace{ID: "old", Output: map[string]any{"answer": 4, "why": "sum"}, Observations: []langfusetest.Observation{
		{Usage: &langfusetest.Usage{Input: 7, Output: 9}},
	}})
	c := client(fake)
	tr, err := c.Trace(context.Background(), "new")
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != "new" || langfuse.Text(tr.Output) != "4" || langfuse.Text(tr.Input) != "2+2?" || tr.LatencySeconds != 1.25 ||
		tr.TotalCost != 0.0031 || tr.InputTokens != 16 || tr.OutputTokens != 6 {
		t.Errorf("trace new = %+v", tr)
	}
	tr, err = c.Trace(context.Background(), "old")
	if err != nil {
		t.Fatal(err)
	}
	if tr.InputTokens != 7 || tr.OutputTokens != 9 || langfuse.Text(tr.Output) != `{"answer":4,"why":"sum"}` || string(tr.Input) != "null" {
		t.Errorf("trace old = %+v", tr)
	}
}

func TestTraceNotFound(t *testing.T) {
	fake := langfusetest.New(t)
	_, err := client(fake).Trace(context.Background(), "lost")
	if !errors.Is(err, langfuse.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if fake.Requests() != 1 {
		t.Errorf("a 404 was tried %d times, want once", fake.Requests())
	}
}

func TestRetries429WithRetryAfter(t *testing.T) {
	fake := langfusetest.New(t)
	fake.AddDataset("qa", langfusetest.Item{ID: "i1"})
	fake.FailRequest(1, http.StatusTooManyRequests, "1")
	c := client(fake)
	c.MaxDelay = 2 * time.Second // lets the Retry-After of 1 s through
	start := time.Now()
	items, err := c.DatasetItems(context.Background(), "qa")
	if err != nil || len(items) != 1 {
		t.Fatalf("DatasetItems = %v, %v", items, err)
	}
	if fake.Requests() != 2 {
		t.Errorf("requests = %d, want 2 (the 429, then its retry)", fake.Requests())
	}
	// Retry-After said 1 s, far above the 1 ms backoff: it was honoured.
	if time.Since(start) < time.Second {
		t.Errorf("retried before the Retry-After second passed")
	}
}

func TestRetries5xxThenGivesUp(t *testing.T) {
	fake := langfusetest.New(t)
	fake.AddTrace(langfusetest.Trace{ID: "t1", Output: "ok"})
	fake.FailRequest(1, http.StatusBadGateway, "")
	fake.FailRequest(2, http.StatusServiceUnavailable, "")
	c := client(fake)
	if tr, err := c.Trace(context.Background(), "t1"); err != nil || langfuse.Text(tr.Output) != "ok" {
		t.Fatalf("Trace after two 5xx = %v, %v", tr, err)
	}
	c.Attempts = 2
	fake.FailRequest(1, http.StatusInternalServerError, "")
	fake.FailRequest(2, http.StatusInternalServerError, "")
	_, err := c.Trace(context.Background(), "t1")
	var apiErr *langfuse.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 500 {
		t.Fatalf("err = %v, want the last 500", err)
	}
	if fake.Requests() != 5 {
		t.Errorf("requests = %d, want 3 + 2", fake.Requests())
	}
}

func TestKeysRefused(t *testing.T) {
	fake := langfusetest.New(t)
	c := langfuse.New(fake.URL, fake.PublicKey, "sk-wrong", nil)
	err := c.Test(context.Background())
	if !errors.Is(err, langfuse.ErrUnauthorized) || !strings.Contains(err.Error(), "the keys were refused") {
		t.Fatalf("err = %v, want the keys refused", err)
	}
	if err := client(fake).Test(context.Background()); err != nil {
		t.Fatalf("good keys: %v", err)
	}
}

func TestMalformedReply(t *testing.T) {
	fake := langfusetest.New(t)
	fake.AddDataset("qa", langfusetest.Item{ID: "i1"})
	c := client(fake)
	fake.Malform(1, "<html>not json</html>")
	_, err := c.Trace(context.Background(), "t1")
	if err == nil || !strings.Contains(err.Error(), "not the JSON Langfuse sends") {
		t.Errorf("HTML reply: err = %v", err)
	}
	fake.Malform(1, `{"items": []}`)
	_, err = c.DatasetItems(context.Background(), "qa")
	if err == nil || !strings.Contains(err.Error(), `no "data" list`) {
		t.Errorf("reply without data: err = %v", err)
	}
}

func TestRedirectToAnotherOriginRefused(t *testing.T) {
	var leaked bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _, leaked = r.BasicAuth()
		_, _ = w.Write([]byte(`{"data":[]}`))
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.RedirectHandler(other.URL+"/api/public/projects", http.StatusFound))
	defer redirector.Close()
	err := langfuse.New(redirector.URL, "pk", "sk", nil).Test(context.Background())
	if err == nil || !strings.Contains(err.Error(), "another origin") || leaked {
		t.Fatalf("err = %v, keys sent to the other origin: %v", err, leaked)
	}
}

func TestTracesConcurrent(t *testing.T) {
	fake := langfusetest.New(t)
	const n = 10000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%d", i)
		if i != 77 { // one trace Langfuse lost
			fake.AddTrace(langfusetest.Trace{ID: ids[i], Output: ids[i], TotalCost: 0.001,
				Observations: []langfusetest.Observation{{UsageDetails: map[string]int64{"input": 2, "output": 1}}}})
		}
	}
	fake.FailRequest(100, http.StatusTooManyRequests, "")
	seen := map[string]bool{}
	var missing []string
	start := time.Now()
	err := client(fake).Traces(context.Background(), ids, func(id string, tr *langfuse.Trace, err error) {
		if seen[id] {
			t.Errorf("%s handed twice", id)
		}
		seen[id] = true
		switch {
		case errors.Is(err, langfuse.ErrNotFound):
			missing = append(missing, id)
		case err != nil:
			t.Errorf("%s: %v", id, err)
		case langfuse.Text(tr.Output) != id || tr.InputTokens != 2:
			t.Errorf("%s = %+v", id, tr)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d traces in %v", n, time.Since(start))
	if len(seen) != n || len(missing) != 1 || missing[0] != "t77" {
		t.Errorf("seen %d, missing %v", len(seen), missing)
	}
	if fake.Requests() != n+1 {
		t.Errorf("requests = %d, want %d (each trace once, plus the retried 429)", fake.Requests(), n+1)
	}
}

func TestTracesStopsWithContext(t *testing.T) {
	fake := langfusetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := client(fake).Traces(ctx, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}, func(string, *langfuse.Trace, error) {
		calls++
		cancel()
	})
	if !errors.Is(err, context.Canceled) || calls == 11 {
		t.Fatalf("err = %v after %d calls, want cancelled early", err, calls)
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, ""},
		{`null`, ""},
		{`"plain \"text\""`, `plain "text"`},
		{`{"content": "hi"}`, "hi"},
		{`{"role": "assistant", "content": "hi"}`, "hi"},
		{`{"answer": {"text": "deep"}}`, "deep"},
		{`{"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}`, "a\nb"},
		{`{"question": "q", "context": "c"}`, `{"question":"q","context":"c"}`},
		{`{"answer": 4}`, `{"answer":4}`},
		{`[{"role": "user", "content": "hi"}]`, `[{"role":"user","content":"hi"}]`},
		{` { "a" : [1, 2] } `, `{"a":[1,2]}`},
		{`42`, `42`},
		{`not json`, `not json`},
	} {
		if got := langfuse.Text(json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("Text(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{`"x"`, `{"content":"x"}`, `{"content":[{"type":"text","text":"a"}]}`, `[1,{"a":null}]`, `{"answer":{"answer":{"answer":"x"}}}`, `nul`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := langfuse.Text(json.RawMessage(in))
		if !json.Valid([]byte(in)) {
			return
		}
		var v any
		_ = json.Unmarshal([]byte(in), &v)
		switch v := v.(type) {
		case string:
			if got != v {
				t.Fatalf("Text(%q) = %q, want the string %q", in, got, v)
			}
		case nil:
			if got != "" {
				t.Fatalf("Text(%q) = %q, want empty", in, got)
			}
		case float64, bool:
			if !json.Valid([]byte(got)) {
				t.Fatalf("Text(%q) = %q, want its JSON", in, got)
			}
		}
		// Deterministic whatever the map order.
		if again := langfuse.Text(json.RawMessage(in)); again != got {
			t.Fatalf("Text(%q) gave %q then %q", in, got, again)
		}
	})
}
