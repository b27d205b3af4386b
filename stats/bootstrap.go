// Package stats holds the statistics behind "which model is better, and are
// we sure?": bootstrap confidence intervals, paired tests with multiple-
// comparison correction, judge agreement, pass@k, and Bradley–Terry ratings.
//
// Conventions: paired inputs of unequal length use the shorter length;
// non-finite inputs never panic but may give NaN results; every place that
// can return NaN on finite input says so in its doc comment.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Resamples is the number of bootstrap resamples MeanCI and PairedDiff draw.
const Resamples = 2000

// Estimate is a mean with its 95% confidence interval [Lo, Hi] and sample size N.
type Estimate struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"`
}

// newRand gives the deterministic generator every bootstrap uses: same seed, same interval.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// MeanCI is the mean of xs with a 95% percentile-bootstrap CI over the values
// (Resamples resamples, deterministic for a seed). N==0 gives the zero Estimate;
// N==1 gives Lo==Hi==Mean.
//
// Percentile bootstrap because per-task scores are bounded and often skewed
// (pass rates near 0 or 1), where mean±1.96·SE can leave [0,1]; the
// percentile interval stays inside the range of the data.
func MeanCI(xs []float64, seed uint64) Estimate {
	n := len(xs)
	if n == 0 {
		return Estimate{}
	}
	m := mean(xs)
	if n < 2 {
		return Estimate{Mean: m, Lo: m, Hi: m, N: n}
	}
	r := newRand(seed)
	boot := make([]float64, Resamples)
	for b := range boot {
		s := 0.0
		for range n {
			s += xs[r.IntN(n)]
		}
		boot[b] = s / float64(n)
	}
	slices.Sort(boot)
	return Estimate{Mean: m, Lo: quantile(boot, 0.025), Hi: quantile(boot, 0.975), N: n}
}

// quantile of sorted s at q, linearly interpolated (numpy's default, "type 7").
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	f := h - float64(lo)
	if f == 0 {
		return s[lo]
	}
	return s[lo] + f*(s[lo+1]-s[lo])
}
