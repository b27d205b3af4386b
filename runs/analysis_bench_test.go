package runs

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkAnalysis times a stored run's statistics, whole and by the reads
// they wait on, on a database of your own (set up as for
// BenchmarkSummarize). It also reports this process's CPU time, which a
// busy machine moves less than the elapsed time. Run:
//
//	TRIBUNAL_SUMMARY_DB=… TRIBUNAL_MASTER_KEY=… go test -run '^$' -bench Analysis -benchtime 1x ./runs/
func BenchmarkAnalysis(b *testing.B) {
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
	parts := []struct {
		name string
		fn   func() error
	}{
		{"analyze", func() error {
			_, err := analyze(ctx, st, run)
			return err
		}},
		{"run-tasks", func() error {
			_, err := readRunTasks(ctx, st, run)
			return err
		}},
		{"judge-probes", func() error {
			_, err := st.JudgeProbes(ctx, run.ID)
			return err
		}},
		{"judge-flips", func() error {
			_, err := judgeFlips(ctx, st, run.ID)
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
