package analysis

import (
	"fmt"
	"math"

	"tribunal/stats"
	"tribunal/store"
)

// Reliability is a judge version's reliability card for one run.
type Reliability struct {
	RunJudgeID int64  `json:"judge_id"`
	Judge      string `json:"judge"`
	// Version names what was judged with: model, personality and style version.
	Version string `json:"version"`
	// SelfConsistency is the share of identical answers judged more than once that got the same score each time.
	SelfConsistency *float64 `json:"self_consistency"`
	SelfN           int      `json:"self_n"`
	// FlipRate is the share of pairwise comparisons whose verdict changed when the answers swapped places.
	FlipRate *float64 `json:"flip_rate"`
	FlipN    int      `json:"flip_n"`
	// LengthBias is the Spearman correlation of score with answer length.
	LengthBias *float64   `json:"length_bias"`
	LengthN    int        `json:"length_n"`
	Human      *Agreement `json:"human"`
	// Untrusted lists why the judge should not be trusted; empty when it passes.
	Untrusted []string `json:"untrusted"`
}

// Trust thresholds: a judge failing any of them is marked untrusted.
const (
	minHumanKappa      = 0.4 // "moderate" agreement (Landis & Koch)
	minHumanN          = 10
	maxLengthBias      = 0.5
	minLengthN         = 30
	maxFlipRate        = 0.3
	minFlipN           = 10
	minSelfConsistency = 0.7
	minSelfN           = 10
)

// Flips is a judge's pairwise record: comparisons asked in both orders and how many flipped.
type Flips struct {
	Comparisons int
	Flipped     int
}

// Reliabilities builds the cards of a run's judges from the probes, the
// human agreement report and each judge's pairwise flips (by run judge id).
func Reliabilities(judges []store.RunJudge, probe *store.JudgeProbe, human Report, flips map[int64]Flips) []Reliability {
	out := make([]Reliability, 0, len(judges))
	for _, j := range judges {
		r := Reliability{RunJudgeID: j.ID, Judge: j.Name, Untrusted: []string{},
			Version: fmt.Sprintf("%s / %s · %s v%d", j.ProviderName, j.Model, j.StyleName, j.StyleVersion)}
		if j.PersonalityName != "" {
			r.Version += " · " + j.PersonalityName
		}
		var pairs []stats.Counted
		for _, l := range probe.Lengths {
			if l.RunJudgeID == j.ID {
				pairs = append(pairs, stats.Counted{X: float64(l.Length), Y: l.Score, N: l.N})
				r.LengthN += int(l.N)
			}
		}
		if r.LengthN >= 3 {
			if rho := stats.SpearmanCounted(pairs); !math.IsNaN(rho) {
				r.LengthBias = &rho
			}
		}
		var same int
		for _, rep := range probe.Repeats {
			if rep.RunJudgeID == j.ID {
				r.SelfN++
				if rep.MinScore == rep.MaxScore {
					same++
				}
			}
		}
		if r.SelfN > 0 {
			v := float64(same) / float64(r.SelfN)
			r.SelfConsistency = &v
		}
		if f, ok := flips[j.ID]; ok && f.Comparisons > 0 {
			v := float64(f.Flipped) / float64(f.Comparisons)
			r.FlipRate, r.FlipN = &v, f.Comparisons
		}
		for _, h := range human.Judges {
			if h.RunJudgeID == j.ID {
				r.Human = h.Human
			}
		}
		if r.Human != nil && r.Human.N >= minHumanN && r.Human.Kappa < minHumanKappa {
			r.Untrusted = append(r.Untrusted, fmt.Sprintf("agrees little with human grades (κ %.2f < %.1f)", r.Human.Kappa, minHumanKappa))
		}
		if r.LengthBias != nil && r.LengthN >= minLengthN && math.Abs(*r.LengthBias) > maxLengthBias {
			r.Untrusted = append(r.Untrusted, fmt.Sprintf("scores follow answer length (ρ %.2f)", *r.LengthBias))
		}
		if r.FlipRate != nil && r.FlipN >= minFlipN && *r.FlipRate > maxFlipRate {
			r.Untrusted = append(r.Untrusted, fmt.Sprintf("changes its pick when answers swap places (%.0f%%)", *r.FlipRate*100))
		}
		if r.SelfConsistency != nil && r.SelfN >= minSelfN && *r.SelfConsistency < minSelfConsistency {
			r.Untrusted = append(r.Untrusted, fmt.Sprintf("scores the same answer differently (%.0f%% consistent)", *r.SelfConsistency*100))
		}
		out = append(out, r)
	}
	return out
}
