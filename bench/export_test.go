package bench

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"tribunal/engine"
	"tribunal/report"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// BenchmarkExport exports a completed 20,000-item run (1,000 tasks × 10
// models × 2 repeats, filled in bulk) as CSV and as JSON and reports rows/s
// and the bytes allocated per row (flat memory: the exports stream). Run:
//
//	go test -run '^$' -bench Export -benchtime 3x ./bench/   (TEST_DATABASE_URL for PostgreSQL)
func BenchmarkExport(b *testing.B) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *store.Store
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(db.name, func(b *testing.B) {
			st := db.open(b)
			svc, run := filledRun(b, st, 1000)
			ctx := context.Background()
			b.Run("csv", func(b *testing.B) {
				benchRows(b, func() (int, error) { return svc.WriteCSV(ctx, io.Discard, run) })
			})
			b.Run("json", func(b *testing.B) {
				benchRows(b, func() (int, error) {
					return int(run.ID), report.WriteJSON(ctx, io.Discard, svc, run.ID)
				})
			})
		})
	}
}

// benchRows times export and reports rows/s over the run's items.
func benchRows(b *testing.B, export func() (int, error)) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := export(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchItems*b.N)/b.Elapsed().Seconds(), "rows/s")
}

const benchItems = 20_000

// filledRun creates a run of tasks × 10 models × 2 repeats and completes it
// with the bulk fill; its summary is computed once, as the server has it
// before an export.
func filledRun(b *testing.B, st *store.Store, tasks int) (*runs.Service, *store.Run) {
	b.Helper()
	ctx := context.Background()
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	c, err := create(ctx, st, eng, Config{Tasks: tasks, Models: 10, Repeats: 2, Concurrency: 8}, "http://127.0.0.1:9", "export")
	if err != nil {
		b.Fatal(err)
	}
	if c.items != benchItems {
		b.Fatalf("%d items, want %d", c.items, benchItems)
	}
	if _, err := FillCompleted(ctx, st, c.runID); err != nil {
		b.Fatal(err)
	}
	run, err := st.Run(ctx, c.runID)
	if err != nil {
		b.Fatal(err)
	}
	svc := runs.New(st, nil)
	if _, _, err := svc.Results(ctx, run); err != nil {
		b.Fatal(err)
	}
	return svc, run
}
