package bench_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"tribunal/bench"
	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

// BenchmarkPages20k builds a finished run of 1,000 tasks × 10 models × 2
// repeats (20,000 items, FillCompleted, judged with TaskBench so violations
// exist) and a second like it, then times every page a user reads: the run
// page's first view (statistics computed, nothing cached or stored) and each
// page after it, best of three. Each figure is reported in ms per page; the
// first view also as statistics seconds. Run:
//
//	go test -run '^$' -bench Pages20k -benchtime 1x ./bench/   (TEST_DATABASE_URL for PostgreSQL)
func BenchmarkPages20k(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchPages(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv("TEST_DATABASE_URL") == "" {
			b.Skip("TEST_DATABASE_URL not set")
		}
		benchPages(b, storetest.Postgres(b))
	})
}

const (
	benchTasks  = 1000
	benchModels = 10
)

func benchPages(b *testing.B, st *store.Store) {
	ctx := context.Background()
	first, second := finishedRun(b, st, "a"), finishedRun(b, st, "b")
	page, err := st.RunItems(ctx, first, store.ItemFilter{PerPage: 1})
	if err != nil || page.Total != 2*benchTasks*benchModels {
		b.Fatalf("run of %d items (%v)", page.Total, err)
	}
	mid := page.Items[0].ID + page.Total/2
	last := page.Total / 50
	for b.Loop() {
		srv := newServer(b, st)
		start := time.Now()
		get(b, srv, fmt.Sprintf("/runs/%d", first))
		statistics := time.Since(start)
		b.ReportMetric(statistics.Seconds(), "stats-s")
		b.ReportMetric(float64(timed(b, srv, fmt.Sprintf("/api/runs/%d/analysis", first)).Microseconds())/1000, "ms/analysis-first")
		for _, p := range []struct{ name, path string }{
			{"run-page", fmt.Sprintf("/runs/%d", first)},
			{"api-run", fmt.Sprintf("/api/runs/%d", first)},
			{"items", fmt.Sprintf("/runs/%d/items?page=2", first)},
			{"items-deep", fmt.Sprintf("/runs/%d/items?page=%d", first, last)},
			{"items-model", fmt.Sprintf("/runs/%d/items?model=model-7&page=%d", first, last/10)},
			{"items-violation", fmt.Sprintf("/runs/%d/items?violation=format&page=10", first)},
			{"items-failure", fmt.Sprintf("/runs/%d/items?phase=BENCHMARKING&reason=%s", first, url.QueryEscape("synthetic: the provider answered 500"))},
			{"api-items-after", fmt.Sprintf("/api/runs/%d/items?after=%d&per_page=50", first, mid)},
			{"api-item", fmt.Sprintf("/api/items/%d", mid)},
			{"item-page", fmt.Sprintf("/items/%d?model=model-7&status=COMPLETED", mid)},
			{"grading", fmt.Sprintf("/runs/%d/grade", first)},
			{"compare", fmt.Sprintf("/compare?run_ids=%d,%d", first, second)},
		} {
			best := time.Hour
			for range 3 {
				best = min(best, timed(b, srv, p.path))
			}
			b.ReportMetric(float64(best.Microseconds())/1000, "ms/"+p.name)
		}
	}
}

// finishedRun creates and fills a run, and ends it as the engine would.
func finishedRun(b *testing.B, st *store.Store, name string) int64 {
	b.Helper()
	ctx := context.Background()
	prices := []store.ProviderPrice{{Model: "judge", InputPerMTok: 3, OutputPerMTok: 6}}
	for m := range benchModels {
		prices = append(prices, store.ProviderPrice{Model: fmt.Sprintf("model-%d", m), InputPerMTok: float64(m + 1), OutputPerMTok: float64(2 * (m + 1))})
	}
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake " + name, BaseURL: "http://127.0.0.1:9", Prices: prices})
	if err != nil {
		b.Fatal(err)
	}
	ins := make([]store.TaskInput, benchTasks)
	refs := make([]store.TaskRef, benchTasks)
	for i := range ins {
		ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("%s-%05d", name, i), Category: fmt.Sprintf("cat-%d", i%40), UseCase: fmt.Sprintf("uc-%d", i%5),
			Question: fmt.Sprintf("Question %d: what is %d squared?", i, i), Reference: fmt.Sprint(i * i)}
		refs[i] = store.TaskRef{Key: ins[i].TaskKey}
	}
	if err := st.CreateTasks(ctx, ins); err != nil {
		b.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: name, TaskIDs: &refs})
	if err != nil {
		b.Fatal(err)
	}
	style, err := taskBench(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	judge, err := st.CreateJudge(ctx, store.JudgeInput{Name: "taskbench " + name, ProviderID: p.ID, Model: "judge", StyleID: style})
	if err != nil {
		b.Fatal(err)
	}
	in := store.RunInput{Name: name, JudgeIDs: []int64{judge.ID}, CollectionIDs: []int64{col.ID}, Repeats: 2}
	for m := range benchModels {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: p.ID, Model: fmt.Sprintf("model-%d", m)})
	}
	run, err := st.CreateRun(ctx, in)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bench.FillCompleted(ctx, st, run.ID); err != nil {
		b.Fatal(err)
	}
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunPending); err != nil {
		b.Fatal(err)
	}
	if _, err := st.EndRun(ctx, run.ID, store.RunFinished, "", nil); err != nil {
		b.Fatal(err)
	}
	return run.ID
}

func taskBench(ctx context.Context, st *store.Store) (int64, error) {
	styles, err := st.Styles(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range styles {
		if s.Name == store.TaskBenchStyleName {
			return s.ID, nil
		}
	}
	return 0, fmt.Errorf("no %s style", store.TaskBenchStyleName)
}

// newServer is a fresh process's server: its caches are empty. Its engine
// never runs, so the runs stay as they are.
func newServer(b *testing.B, st *store.Store) *httptest.Server {
	b.Helper()
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
	b.Cleanup(srv.Close)
	return srv
}

func timed(b *testing.B, srv *httptest.Server, path string) time.Duration {
	b.Helper()
	start := time.Now()
	get(b, srv, path)
	return time.Since(start)
}

func get(b *testing.B, srv *httptest.Server, path string) {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Host = "localhost"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		b.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d", path, res.StatusCode)
	}
}
