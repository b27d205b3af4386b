package runs

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"tribunal/secret"
	"tribunal/store"
)

// BenchmarkSummarize times a stored run's summary, whole and by part, on a
// database of your own: TRIBUNAL_SUMMARY_DB is a PostgreSQL URL or a SQLite
// data directory, TRIBUNAL_MASTER_KEY its master key, and
// TRIBUNAL_SUMMARY_RUN the run's id (1 when unset). `tribunal bench --keep`
// builds such a run. Run:
//
//	TRIBUNAL_SUMMARY_DB=… TRIBUNAL_MASTER_KEY=… go test -run '^$' -bench Summarize -benchtime 1x ./runs/
func BenchmarkSummarize(b *testing.B) {
	db := os.Getenv("TRIBUNAL_SUMMARY_DB")
	if db == "" {
		b.Skip("TRIBUNAL_SUMMARY_DB is not set")
	}
	ctx := context.Background()
	st := openBenchStore(b, ctx, db)
	runID, _ := strconv.ParseInt(os.Getenv("TRIBUNAL_SUMMARY_RUN"), 10, 64)
	run, err := st.Run(ctx, max(runID, 1))
	if err != nil {
		b.Fatal(err)
	}
	weights := ItemWeights(run)
	parts := []struct {
		name string
		fn   func() error
	}{
		{"summarize", func() error {
			_, err := summarize(ctx, st, run, Progress{})
			return err
		}},
		{"figures", func() error {
			_, err := st.RunFigures(ctx, run.ID, perTaskLimit)
			return err
		}},
		{"metric-means", func() error {
			_, err := st.RunMetricMeans(ctx, run.ID)
			return err
		}},
		{"task-overalls", func() error {
			_, err := st.TaskOveralls(ctx, run.ID, weights)
			return err
		}},
		{"analyze", func() error {
			_, err := analyze(ctx, st, run)
			return err
		}},
		{"task-results", func() error {
			return st.EachTaskResult(ctx, run.ID, func(store.TaskResult) error { return nil })
		}},
		{"judge-probes", func() error {
			_, err := st.JudgeProbes(ctx, run.ID)
			return err
		}},
		{"agreement", func() error {
			_, err := agreementOf(ctx, st, run)
			return err
		}},
	}
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				start := time.Now()
				if err := p.fn(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(time.Since(start).Seconds(), "s")
			}
		})
	}
}

func openBenchStore(b *testing.B, ctx context.Context, db string) *store.Store {
	cfg := store.Config{DatabaseURL: db}
	if !strings.HasPrefix(db, "postgres") {
		cfg = store.Config{DataDir: db}
	}
	box, err := secret.NewBox(os.Getenv("TRIBUNAL_MASTER_KEY"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.Box = box
	st, err := store.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}
