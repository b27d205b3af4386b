package runs

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
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
	ctx, st, run := storedRun(b)
	weights := ItemWeights(run)
	counts, err := st.RunProgress(ctx, run.ID)
	if err != nil {
		b.Fatal(err)
	}
	prog := progressOf(counts)
	timeParts(b, []benchPart{
		{"summarize", func() error {
			_, err := summarize(ctx, st, run, prog)
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
		{"overalls", func() error {
			_, err := overallsOf(ctx, st, run, prog.Total, weights)
			return err
		}},
	})
}

// storedRun opens the run that the benchmarks of a stored run time (see
// BenchmarkSummarize), skipping them when TRIBUNAL_SUMMARY_DB is not set.
func storedRun(b *testing.B) (context.Context, *store.Store, *store.Run) {
	db := os.Getenv("TRIBUNAL_SUMMARY_DB")
	if db == "" {
		b.Skip("TRIBUNAL_SUMMARY_DB is not set")
	}
	ctx := context.Background()
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
	runID, _ := strconv.ParseInt(os.Getenv("TRIBUNAL_SUMMARY_RUN"), 10, 64)
	run, err := st.Run(ctx, max(runID, 1))
	if err != nil {
		b.Fatal(err)
	}
	return ctx, st, run
}

// benchPart is one timed part of a benchmark of a stored run.
type benchPart struct {
	name string
	fn   func() error
}

// timeParts times each part as a sub-benchmark: its seconds, and this
// process's CPU seconds, which a busy machine moves less.
func timeParts(b *testing.B, parts []benchPart) {
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				start, cpu := time.Now(), processCPU(b)
				if err := p.fn(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(time.Since(start).Seconds(), "s")
				b.ReportMetric(processCPU(b)-cpu, "go-cpu-s")
			}
		})
	}
}

// processCPU is the CPU time this process has used, in seconds.
func processCPU(b *testing.B) float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}
