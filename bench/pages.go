package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"tribunal/runs"
)

// page is one URL the bench times on the finished run.
type page struct {
	name, path string
}

// runRef is what the page list needs to know of the run.
type runRef struct {
	id, items, firstItem int64
	model                string
}

// statistics are the endpoints that compute the run's numbers, timed first
// on a freshly started server so none of them is served from its memory;
// the summary and the analysis are those the engine stored as it ended the
// run (their computation is timed apart). Target: < 3 s each.
func statistics(r runRef) []page {
	return []page{
		{"summary: GET /api/runs/{id}", fmt.Sprintf("/api/runs/%d", r.id)},
		{"results: GET /runs/{id}/results", fmt.Sprintf("/runs/%d/results", r.id)},
		{"analysis: GET /api/runs/{id}/analysis", fmt.Sprintf("/api/runs/%d/analysis", r.id)},
		{"failures: GET /runs/{id}/failures", fmt.Sprintf("/runs/%d/failures", r.id)},
	}
}

// pages are the pages of the run, each against the 150 ms target (routes
// in handlers/routes.go); add a line here to time another. The run's items
// have consecutive ids, so the cursor before a page is known.
func pages(r runRef) []page {
	deep := r.items / runs.ItemsPerPage / 2
	items := func(q string) string { return fmt.Sprintf("/runs/%d/items?%s", r.id, q) }
	return []page{
		{"run page", fmt.Sprintf("/runs/%d", r.id)},
		{"items: first page", items("")},
		{"items: deep page (the pager's keyset link)", items(fmt.Sprintf("after=%d&page=%d", r.firstItem+int64(deep-1)*runs.ItemsPerPage-1, deep))},
		{"items: deep page by number", items(fmt.Sprintf("page=%d", deep))},
		{"items: status=COMPLETED", items("status=COMPLETED")},
		{"items: status=FAILED", items("status=FAILED")},
		{"items: model", items("model=" + r.model)},
		{"items: model, deep page", items(fmt.Sprintf("model=%s&page=%d", r.model, deep/10))},
		{"items: violation=format", items("violation=format")},
		{"items: judging failures", items("status=FAILED&phase=JUDGING")},
		{"API items: first page", fmt.Sprintf("/api/runs/%d/items", r.id)},
		{"API items: after the middle", fmt.Sprintf("/api/runs/%d/items?after=%d", r.id, r.firstItem+r.items/2)},
		{"API items: model", fmt.Sprintf("/api/runs/%d/items?model=%s", r.id, r.model)},
		{"item page", fmt.Sprintf("/items/%d", r.firstItem+r.items/2)},
		{"API item", fmt.Sprintf("/api/items/%d", r.firstItem+r.items/2)},
		{"grading page", fmt.Sprintf("/runs/%d/grade", r.id)},
		{"runs list", "/runs"},
		{"API runs list", "/api/runs"},
	}
}

// timeGET fetches base+path, reads the whole body and returns how long it
// took and how many bytes came; any status but 200 is an error.
func timeGET(ctx context.Context, base, path string) (time.Duration, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: GET %s: %w", path, err)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	took := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: GET %s: read: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("bench: GET %s: %s", path, resp.Status)
	}
	return took, n, nil
}

// firstItem is the id of the run's first item, from the items API.
func firstItem(ctx context.Context, base string, runID int64) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/runs/%d/items?per_page=1", base, runID), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("bench: first item: %w", err)
	}
	defer resp.Body.Close()
	var page struct {
		Items []struct {
			ID int64 `json:"id"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Items) == 0 {
		return 0, fmt.Errorf("bench: first item of run %d: %s, %v", runID, resp.Status, err)
	}
	return page.Items[0].ID, nil
}

// exported is what one export measured.
type exported struct {
	took  time.Duration
	bytes int64
	lines int64
	// rssBefore and rssPeak are the server's resident memory before the
	// export and at its highest during it, in bytes.
	rssBefore, rssPeak int64
}

// export downloads the run's export in format while sampling the server's
// memory, counting the lines that came.
func export(ctx context.Context, srv *proc, base string, runID int64, format string) (exported, error) {
	var out exported
	var err error
	if out.rssBefore, err = srv.RSS(); err != nil {
		return out, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/runs/%d/export?format=%s", base, runID, format), nil)
	if err != nil {
		return out, err
	}
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() { peak <- samplePeak(srv, done) }()
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		out.bytes, out.lines, err = drainLines(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s", resp.Status)
		}
	}
	out.took = time.Since(start)
	close(done)
	out.rssPeak = max(<-peak, out.rssBefore)
	if err != nil {
		return out, fmt.Errorf("bench: export %s: %w", format, err)
	}
	return out, nil
}

// samplePeak reads srv's resident memory every 20 ms until done and
// returns the highest reading.
func samplePeak(srv *proc, done <-chan struct{}) int64 {
	var peak int64
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if rss, err := srv.RSS(); err == nil {
			peak = max(peak, rss)
		}
		select {
		case <-done:
			return peak
		case <-t.C:
		}
	}
}

// drainLines reads r to its end, counting bytes and newlines.
func drainLines(r io.Reader) (n, lines int64, err error) {
	buf := make([]byte, 256<<10)
	for {
		k, err := r.Read(buf)
		n += int64(k)
		lines += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, lines, nil
		}
		if err != nil {
			return n, lines, err
		}
	}
}
