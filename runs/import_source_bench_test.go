package runs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/langfuse/langfusetest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// BenchmarkImportSource10k: a Langfuse dataset run of 10,000 traces,
// imported from the fake (1 ms per request) and scored by a reference check,
// until the run has finished. It reports the seconds to the import's reply
// and to the run's end. Run:
//
//	go test -run '^$' -bench ImportSource -benchtime 1x ./runs/   (TEST_DATABASE_URL for PostgreSQL)
func BenchmarkImportSource10k(b *testing.B) {
	const n = 10_000
	for _, db := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(db.name, func(b *testing.B) {
			st := db.open(b)
			ctx := context.Background()
			fake := langfusetest.New(b)
			items := make([]langfusetest.Item, n)
			runItems := make([]langfusetest.RunItem, n)
			for i := range n {
				items[i] = langfusetest.Item{ID: fmt.Sprintf("item-%05d", i), Input: fmt.Sprintf("question %d", i), ExpectedOutput: "42"}
				runItems[i] = langfusetest.RunItem{DatasetItemID: items[i].ID, TraceID: fmt.Sprintf("trace-%05d", i)}
				fake.AddTrace(langfusetest.Trace{ID: runItems[i].TraceID, Output: "it is 42", LatencySeconds: 0.8, TotalCost: 0.001,
					Observations: []langfusetest.Observation{{UsageDetails: map[string]int64{"input": 50, "output": 5}}}})
			}
			fake.AddDataset("big", items...)
			fake.AddRun("big", "v1", runItems...)
			fake.SetLatency(time.Millisecond)
			src, err := st.CreateSource(ctx, store.SourceInput{Name: "lf", BaseURL: fake.URL, PublicKey: fake.PublicKey, SecretKey: fake.SecretKey})
			if err != nil {
				b.Fatal(err)
			}
			eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
			runCtx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { eng.Run(runCtx) })
			defer func() { cancel(); wg.Wait() }()
			svc := New(st, eng)
			var imported, finished time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := svc.ImportSource(ctx, src.ID, SourceImport{Dataset: "big", Run: "v1", Checks: []CheckSpec{{Type: "contains"}}, Rejudge: true})
				if err != nil {
					b.Fatal(err)
				}
				imported = time.Since(start)
				for {
					r, err := st.Run(ctx, out.RunID)
					if err != nil {
						b.Fatal(err)
					}
					if !r.Active() {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				finished = time.Since(start)
			}
			b.ReportMetric(imported.Seconds(), "s-imported")
			b.ReportMetric(finished.Seconds(), "s-scored")
		})
	}
}
