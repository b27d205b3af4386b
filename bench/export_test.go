package bench

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"

	"tribunal/engine"
	"tribunal/report"
	"tribunal/runs"
	"tribunal/secret"
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

// BenchmarkExportStored exports a run already in a database, as CSV and as
// JSON, and reports rows/s: the figure at a million items, and its profile,
// without building the run each time. It skips unless
// BENCH_EXPORT_DATABASE_URL names the database (TRIBUNAL_MASTER_KEY its
// key) and BENCH_EXPORT_RUN the run. Run:
//
//	go test -run '^$' -bench ExportStored -benchtime 1x -cpuprofile cpu.out ./bench/
func BenchmarkExportStored(b *testing.B) {
	url, id := os.Getenv("BENCH_EXPORT_DATABASE_URL"), os.Getenv("BENCH_EXPORT_RUN")
	if url == "" || id == "" {
		b.Skip("BENCH_EXPORT_DATABASE_URL and BENCH_EXPORT_RUN name the run to export")
	}
	runID, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	box, err := secret.NewBox(os.Getenv("TRIBUNAL_MASTER_KEY"))
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(ctx, store.Config{DatabaseURL: url, Box: box})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	run, err := st.Run(ctx, runID)
	if err != nil {
		b.Fatal(err)
	}
	svc := runs.New(st, nil)
	progress, _, err := svc.Results(ctx, run)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("csv", func(b *testing.B) {
		benchStoredRows(b, func() (int, error) { return svc.WriteCSV(ctx, io.Discard, run) })
	})
	b.Run("json", func(b *testing.B) {
		benchStoredRows(b, func() (int, error) { return int(progress.Total), report.WriteJSON(ctx, io.Discard, svc, run.ID) })
	})
}

// benchStoredRows times export, which returns how many rows it wrote, and
// reports rows/s.
func benchStoredRows(b *testing.B, export func() (int, error)) {
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		n, err := export()
		if err != nil {
			b.Fatal(err)
		}
		rows += n
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
