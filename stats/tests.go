package stats

import (
	"cmp"
	"math"
	"slices"
)

// binomTwoSided is the two-sided exact binomial p-value (p=½) for k of n,
// k being the smaller count: 2·P(X≤k), capped at 1.
func binomTwoSided(k, n int) float64 {
	if n <= 0 || 2*k >= n {
		return 1
	}
	// Sum pmf terms in log space: 2^-n underflows for n > 1074.
	s := 0.0
	for i := 0; i <= k; i++ {
		s += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*s)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Wilcoxon is the two-sided Wilcoxon signed-rank test of a[i] vs b[i],
// returning w = min(R+, R−) and its p-value, matching scipy.stats.wilcoxon's
// defaults (zero_method="wilcox", correction=False). Zero differences are
// dropped (they have no sign). The p-value is exact when 1..50 pairs remain
// with no zeros and no tied |differences|; otherwise it is the normal
// approximation with the tie-corrected variance (scipy 1.10 still uses its
// exact table when |differences| tie without zeros, though that table
// assumes untied ranks; we do not). No differing pair: (0, 1).
func Wilcoxon(a, b []float64) (w, p float64) {
	n := min(len(a), len(b))
	d := make([]float64, 0, n)
	for i := range n {
		if x := a[i] - b[i]; x != 0 {
			d = append(d, x)
		}
	}
	zeros := n - len(d)
	n = len(d)
	if n == 0 {
		return 0, 1
	}
	abs := make([]float64, n)
	for i, x := range d {
		abs[i] = math.Abs(x)
	}
	rk, tieSizes := ranks(abs)
	rplus, rminus := 0.0, 0.0
	for i, x := range d {
		if x > 0 {
			rplus += rk[i]
		} else {
			rminus += rk[i]
		}
	}
	w = math.Min(rplus, rminus)
	if zeros == 0 && len(tieSizes) == 0 && n <= 50 {
		return w, wilcoxonExact(n, int(w))
	}
	fn := float64(n)
	mn := fn * (fn + 1) / 4
	v := fn * (fn + 1) * (2*fn + 1)
	for _, t := range tieSizes {
		v -= 0.5 * t * (t*t - 1)
	}
	z := (w - mn) / math.Sqrt(v/24)
	return w, math.Erfc(math.Abs(z) / math.Sqrt2)
}

// wilcoxonExact is 2·P(T ≤ t) under H0 for n untied pairs, capped at 1: the
// null distribution counts the subsets of ranks 1..n with each sum (counts
// stay below 2^50, exact in float64).
func wilcoxonExact(n, t int) float64 {
	maxSum := n * (n + 1) / 2
	c := make([]float64, maxSum+1)
	c[0] = 1
	for r := 1; r <= n; r++ {
		for s := maxSum; s >= r; s-- {
			c[s] += c[s-r]
		}
	}
	tail := 0.0
	for s := 0; s <= t && s <= maxSum; s++ {
		tail += c[s]
	}
	return math.Min(1, 2*tail/math.Ldexp(1, n))
}

// ranks gives 1-based ranks of xs, averaging ties, plus the size of every
// group of ties (for variance corrections).
func ranks(xs []float64) (rk []float64, tieSizes []float64) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(xs[i], xs[j]) })
	rk = make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // mean of ranks i+1..j
		for _, k := range idx[i:j] {
			rk[k] = avg
		}
		if j-i > 1 {
			tieSizes = append(tieSizes, float64(j-i))
		}
		i = j
	}
	return rk, tieSizes
}

// McNemar is the two-sided exact McNemar test for pass/fail on the same
// tasks, from the discordant counts b (A passed, B failed) and c (A failed,
// B passed): a binomial test of b out of b+c at p=½, as statsmodels'
// mcnemar(exact=True). Concordant tasks carry no information and are not
// needed. Negative counts are treated as 0; b+c == 0 gives 1.
func McNemar(b, c int) float64 {
	b, c = max(b, 0), max(c, 0)
	return binomTwoSided(min(b, c), b+c)
}

// Holm returns Holm–Bonferroni adjusted p-values in the input order:
// monotone in the raw p, capped at 1, NaN treated as 1. Use it when one
// baseline is compared with several models, so "significant" keeps meaning
// 5% family-wise.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(p(i), p(j)) })
	out := make([]float64, m)
	running := 0.0
	for r, i := range idx {
		running = math.Max(running, math.Min(1, float64(m-r)*p(i)))
		out[i] = running
	}
	return out
}
