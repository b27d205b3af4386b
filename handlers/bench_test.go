package handlers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Benchmarks on a 100,000-item run (50,000 tasks × 2 models): creating it,
// serving an items page deep inside it, and exporting it as CSV. Run:
//
//	go test -run '^$' -bench . -benchtime 3x ./handlers/   (TEST_DATABASE_URL for PostgreSQL)

type bigRun struct {
	st    *store.Store
	srv   *httptest.Server
	runID int64
	items int64
}

const bigTasks = 50_000

// bigFixture creates the provider, 50,000 tasks and their collection.
func bigFixture(b *testing.B, st *store.Store) (providerID, collectionID int64) {
	b.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		b.Fatal(err)
	}
	ins := make([]store.TaskInput, bigTasks)
	refs := make([]store.TaskRef, bigTasks)
	for i := range ins {
		ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("big-%06d", i), Category: fmt.Sprintf("cat-%d", i%20),
			Question: fmt.Sprintf("Question %d: what is %d squared? Explain briefly.", i, i)}
		refs[i] = store.TaskRef{Key: ins[i].TaskKey}
	}
	if err := st.CreateTasks(ctx, ins); err != nil {
		b.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "big", TaskIDs: &refs})
	if err != nil {
		b.Fatal(err)
	}
	return p.ID, col.ID
}

// newBigRun creates a 100k-item run and returns how long that took. No
// engine runs, so the items stay as created.
func newBigRun(b *testing.B, st *store.Store, providerID, collectionID int64) (*bigRun, time.Duration) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: providerID, Model: "j"},
		Targets:       []store.ModelRef{{ProviderID: providerID, Model: "a"}, {ProviderID: providerID, Model: "b"}},
		CollectionIDs: []int64{collectionID}})
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler)) // not run: the run stays as created
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
	b.Cleanup(srv.Close)
	prog, _ := st.RunProgress(ctx, run.ID)
	return &bigRun{st: st, srv: srv, runID: run.ID, items: prog.Total}, took
}

// BenchmarkCreateRun100k: one run of 50,000 tasks × 2 models, created in one transaction.
func BenchmarkCreateRun100k(b *testing.B) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		pid, cid := bigFixture(b, st)
		var took time.Duration
		for b.Loop() {
			r, d := newBigRun(b, st, pid, cid)
			if r.items != 2*bigTasks {
				b.Fatalf("%d items", r.items)
			}
			took += d
			b.StopTimer()
			st.DeleteRun(context.Background(), r.runID)
			b.StartTimer()
		}
		b.ReportMetric(took.Seconds()/float64(b.N), "s/run")
	})
}

// BenchmarkItemsPageDeep: server time of an items page near the end of the
// run, as HTML (the run page's table) and as JSON by page and by keyset cursor.
func BenchmarkItemsPageDeep(b *testing.B) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		pid, cid := bigFixture(b, st)
		r, _ := newBigRun(b, st, pid, cid)
		lastPage := int(r.items / 50)
		for _, tc := range []struct{ name, path string }{
			{"run-page", fmt.Sprintf("/runs/%d", r.runID)},
			{"run-json", fmt.Sprintf("/api/runs/%d", r.runID)},
			{"html-page", fmt.Sprintf("/runs/%d/items?page=%d", r.runID, lastPage-1)},
			{"json-page", fmt.Sprintf("/api/runs/%d/items?page=%d&per_page=50", r.runID, lastPage-1)},
			{"json-keyset", fmt.Sprintf("/api/runs/%d/items?after=%d&per_page=50", r.runID, firstItemID(b, st, r.runID)+r.items-100)},
			{"json-filtered", fmt.Sprintf("/api/runs/%d/items?model=b&status=NEW&page=900&per_page=50", r.runID)},
		} {
			b.Run(tc.name, func(b *testing.B) {
				for b.Loop() {
					res, err := http.Get(r.srv.URL + tc.path)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Fatalf("status %d", res.StatusCode)
					}
				}
			})
		}
	})
}

func firstItemID(b *testing.B, st *store.Store, runID int64) int64 {
	page, err := st.RunItems(context.Background(), runID, store.ItemFilter{PerPage: 1})
	if err != nil || len(page.Items) == 0 {
		b.Fatal(err)
	}
	return page.Items[0].ID
}

// BenchmarkExportCSV100k streams the whole run and reports rows/s and the
// peak heap while exporting, which must not grow with the run.
func BenchmarkExportCSV100k(b *testing.B) {
	eachDB(b, func(b *testing.B, st *store.Store) {
		pid, cid := bigFixture(b, st)
		r, _ := newBigRun(b, st, pid, cid)
		var peak atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		wg.Go(func() {
			var m runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		})
		var rows int64
		start := time.Now()
		for b.Loop() {
			res, err := http.Get(fmt.Sprintf("%s/api/runs/%d/export?format=csv", r.srv.URL, r.runID))
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if n < r.items*20 {
				b.Fatalf("export of %d bytes is too short", n)
			}
			rows += r.items
		}
		took := time.Since(start)
		close(stop)
		wg.Wait()
		b.ReportMetric(float64(rows)/took.Seconds(), "rows/s")
		b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapAlloc))/(1<<20), "peak-heap-MB")
	})
}

func eachDB(b *testing.B, fn func(b *testing.B, st *store.Store)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, storetest.Postgres(b)) })
}
