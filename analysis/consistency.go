package analysis

import (
	"cmp"
	"math"
	"slices"

	"tribunal/stats"
	"tribunal/store"
)

// RunReport is the statistics of one run: each model's mean with its
// confidence interval, paired tests between its models, repeat consistency
// and the judges' reliability cards.
type RunReport struct {
	Entries     []EntryStats       `json:"entries"`
	PairTests   []PairTest         `json:"pair_tests"`
	Consistency []ModelConsistency `json:"consistency,omitempty"`
	Judges      []Reliability      `json:"judges"`
	// Distributions holds each model's per-task scores (by target id), for the distribution chart.
	Distributions map[int64][]float64 `json:"-"`
}

// Consistency classes of a task answered several times.
const (
	AllPass      = "all_pass"
	AllFail      = "all_fail"
	Inconsistent = "inconsistent"
)

// TaskConsistency is how one model's repeated answers to one task fared.
type TaskConsistency struct {
	TaskID string  `json:"task_id"`
	N      int64   `json:"n"`      // scored repeats
	Passed int64   `json:"passed"` // repeats that passed
	Class  string  `json:"class"`
	Spread float64 `json:"spread"` // max − min score over the repeats
}

// ModelConsistency sums up a model's repeats: class counts, pass@k and
// pass^k (averaged over tasks), and its flakiest tasks.
type ModelConsistency struct {
	TargetID     int64             `json:"target_id"`
	Model        string            `json:"model"`
	K            int               `json:"k"`
	AllPass      int               `json:"all_pass"`
	AllFail      int               `json:"all_fail"`
	Inconsistent int               `json:"inconsistent"`
	PassAtK      float64           `json:"pass_at_k"`
	PassHatK     float64           `json:"pass_hat_k"`
	MeanSpread   float64           `json:"mean_spread"`
	Flaky        []TaskConsistency `json:"flaky"` // inconsistent tasks, widest spread first
}

// maxFlaky bounds the flaky tasks listed per model.
const maxFlaky = 20

// Consistency reads a repeat run's task results: k is the run's repeats.
func Consistency(run *store.Run, results []store.TaskResult) []ModelConsistency {
	k := max(run.Repeats, 1)
	out := make([]ModelConsistency, len(run.Targets))
	index := map[int64]int{}
	for i, t := range run.Targets {
		out[i] = ModelConsistency{TargetID: t.ID, Model: t.Model, K: k, Flaky: []TaskConsistency{}}
		index[t.ID] = i
	}
	sums := make([]struct{ at, hat, spread, n float64 }, len(out))
	for _, r := range results {
		i, ok := index[r.RunTargetID]
		if !ok || r.Scored == 0 {
			continue
		}
		tc := TaskConsistency{TaskID: r.TaskKey, N: r.Scored, Passed: r.Passed}
		if r.MinScore != nil && r.MaxScore != nil {
			tc.Spread = *r.MaxScore - *r.MinScore
		}
		switch {
		case r.Passed == r.Scored:
			tc.Class = AllPass
			out[i].AllPass++
		case r.Passed == 0:
			tc.Class = AllFail
			out[i].AllFail++
		default:
			tc.Class = Inconsistent
			out[i].Inconsistent++
			out[i].Flaky = append(out[i].Flaky, tc)
		}
		kk := min(k, int(r.Scored))
		if at := stats.PassAtK(int(r.Scored), int(r.Passed), kk); !math.IsNaN(at) {
			sums[i].at += at
			sums[i].hat += stats.PassHatK(int(r.Scored), int(r.Passed), kk)
			sums[i].spread += tc.Spread
			sums[i].n++
		}
	}
	for i := range out {
		if n := sums[i].n; n > 0 {
			out[i].PassAtK, out[i].PassHatK, out[i].MeanSpread = sums[i].at/n, sums[i].hat/n, sums[i].spread/n
		}
		slices.SortFunc(out[i].Flaky, func(a, b TaskConsistency) int { return cmp.Compare(b.Spread, a.Spread) })
		if len(out[i].Flaky) > maxFlaky {
			out[i].Flaky = out[i].Flaky[:maxFlaky]
		}
	}
	return out
}
