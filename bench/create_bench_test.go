package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"tribunal/engine"
	"tribunal/store"
	"tribunal/store/storetest"
)

// BenchmarkCreate creates what `tribunal bench` creates, at a fifth of its
// PostgreSQL size: 10,000 tasks, a collection of them, and a run of 10
// models × 2 repeats (200,000 items), through the functions the API calls,
// and reports the seconds of each step. Run:
//
//	go test -run '^$' -bench Create -benchtime 1x ./bench/   (TEST_DATABASE_URL for PostgreSQL)
func BenchmarkCreate(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchCreate(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv("TEST_DATABASE_URL") == "" {
			b.Skip("TEST_DATABASE_URL not set")
		}
		benchCreate(b, storetest.Postgres(b))
	})
}

func benchCreate(b *testing.B, st *store.Store) {
	ctx := context.Background()
	cfg := Config{Tasks: 10_000, Models: 10, Repeats: 2, Concurrency: 64}
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	n := 0
	for b.Loop() {
		n++
		c, err := create(ctx, st, eng, cfg, "http://127.0.0.1:9", fmt.Sprintf("create-%d", n))
		if err != nil {
			b.Fatal(err)
		}
		if want := int64(cfg.Tasks * cfg.Models * cfg.Repeats); c.items != want {
			b.Fatalf("run of %d items, want %d", c.items, want)
		}
		b.ReportMetric(c.tasks.Seconds(), "tasks-s")
		b.ReportMetric(c.collection.Seconds(), "collection-s")
		b.ReportMetric(c.run.Seconds(), "run-s")
		b.ReportMetric((c.tasks + c.collection + c.run).Seconds(), "created-s")
	}
}
