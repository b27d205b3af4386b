package runs

import "testing"

// BenchmarkAnalysis times a stored run's statistics, whole and by the reads
// they wait on, on a database of your own (set up as for
// BenchmarkSummarize). Run:
//
//	TRIBUNAL_SUMMARY_DB=… TRIBUNAL_MASTER_KEY=… go test -run '^$' -bench Analysis -benchtime 1x ./runs/
func BenchmarkAnalysis(b *testing.B) {
	ctx, st, run := storedRun(b)
	timeParts(b, []benchPart{
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
	})
}
