package handlers_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

// BenchmarkDeleteBigRun deletes a 400,000-item run (50,000 tasks × 8 models)
// on SQLite, whose one connection every request shares, while a client
// loads the runs page every 50 ms; it reports the slowest page during the
// purge and how long the purge took. Run:
//
//	CGO_ENABLED=0 go test -run '^$' -bench DeleteBigRun -benchtime 1x ./handlers/
func BenchmarkDeleteBigRun(b *testing.B) {
	for range b.N {
		deleteBigRun(b)
	}
}

func deleteBigRun(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(ctx, store.Config{DataDir: dir, Box: storetest.Box(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	providerID, collectionID := bigFixture(b, st)
	in := store.RunInput{Judge: &store.ModelRef{ProviderID: providerID, Model: "j"}, CollectionIDs: []int64{collectionID}}
	for i := range 8 {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: providerID, Model: fmt.Sprintf("m%d", i)})
	}
	run, err := st.CreateRun(ctx, in)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
		b.Fatal(err)
	}
	// A second connection, read-only, tells when the rows are gone.
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "tribunal.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	count := func(q string) int64 {
		var n int64
		if err := raw.QueryRow(q, run.ID).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	if n := count("SELECT COUNT(*) FROM items WHERE run_id = ?"); n != 400_000 {
		b.Fatalf("%d items, want 400000", n)
	}

	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(runCtx) })
	defer func() { cancel(); wg.Wait() }()
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	get := func(path string, want int) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			b.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
		return time.Since(start)
	}

	b.ResetTimer()
	start := time.Now()
	req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/runs/%d", srv.URL, run.ID), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusNoContent {
		b.Fatalf("DELETE: %v %v", res, err)
	}
	res.Body.Close()
	deleteTook := time.Since(start)
	get(fmt.Sprintf("/api/runs/%d", run.ID), http.StatusNotFound)
	var pages []time.Duration
	for count("SELECT COUNT(*) FROM runs WHERE id = ?") > 0 {
		pages = append(pages, get("/runs", http.StatusOK))
		time.Sleep(50 * time.Millisecond)
		if time.Since(start) > 10*time.Minute {
			b.Fatal("the purge did not end within 10 minutes")
		}
	}
	purge := time.Since(start)
	b.StopTimer()
	slices.Sort(pages)
	if len(pages) == 0 {
		b.Fatal("the purge ended before any page was served")
	}
	slowest, median := pages[len(pages)-1], pages[len(pages)/2]
	b.ReportMetric(float64(deleteTook.Milliseconds()), "delete-ms")
	b.ReportMetric(purge.Seconds(), "purge-s")
	b.ReportMetric(float64(median.Milliseconds()), "page-p50-ms")
	b.ReportMetric(float64(slowest.Milliseconds()), "page-max-ms")
	b.Logf("DELETE answered in %v; purge of 400k items took %v; %d pages during it: median %v, slowest %v",
		deleteTook, purge.Round(time.Millisecond), len(pages), median, slowest)
}
