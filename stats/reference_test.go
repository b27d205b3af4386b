package stats

import "math"

// Variants the tests check the real functions against, or use to build
// their expectations; the app itself does not call them.

// PairedDiff is the mean of a[i]-b[i] with a 95% bootstrap CI resampling
// whole pairs (tasks), so the per-task correlation between the two models is
// kept and the interval is much tighter than two independent CIs suggest.
func PairedDiff(a, b []float64, seed uint64) Estimate {
	n := min(len(a), len(b))
	d := make([]float64, n)
	for i := range d {
		d[i] = a[i] - b[i]
	}
	return MeanCI(d, seed)
}

// BradleyTerry fits Bradley–Terry strengths to the comparisons (ties count
// half a win to each) and reports them on the Elo scale: ratings R with
// P(i beats j) = 1/(1+10^((R_j−R_i)/400)), shifted so their mean is 1000.
// Comparisons with an index outside 0..players−1, A == B or another Winner
// value are skipped. See btPrior for the small prior that makes it converge.
func BradleyTerry(players int, cs []Comparison) []float64 {
	if players <= 0 {
		return nil
	}
	wins, games := tally(players, cs, nil)
	return toElo(btFit(players, wins, games, btPrior, nil))
}

// SignTest is the two-sided exact sign test of a[i] vs b[i] (binomial, p=½).
// Ties are dropped: they say nothing about which side is better. Returns 1
// when no pair differs.
func SignTest(a, b []float64) float64 {
	pos, neg := 0, 0
	for i := range min(len(a), len(b)) {
		switch {
		case a[i] > b[i]:
			pos++
		case a[i] < b[i]:
			neg++
		}
	}
	return binomTwoSided(min(pos, neg), pos+neg)
}

// McNemarChi2 is the textbook chi-square McNemar test with Yates' continuity
// correction, (max(0, |b−c|−1))²/(b+c) on 1 degree of freedom; b+c == 0 gives (0, 1).
// Prefer McNemar (exact) for small counts.
func McNemarChi2(b, c int) (chi2, p float64) {
	b, c = max(b, 0), max(c, 0)
	if b+c == 0 {
		return 0, 1
	}
	d := math.Max(0, math.Abs(float64(b-c))-1)
	chi2 = d * d / float64(b+c)
	return chi2, math.Erfc(math.Sqrt(chi2 / 2))
}

// Pearson is the linear correlation of x and y (e.g. judge score vs answer
// length, the length-bias probe). NaN when undefined: fewer than 2 pairs or
// either side constant.
func Pearson(x, y []float64) float64 {
	n := min(len(x), len(y))
	if n < 2 {
		return math.NaN()
	}
	mx, my := mean(x[:n]), mean(y[:n])
	// Scale deviations to at most 1 so squares of large values cannot overflow.
	ax, ay := 0.0, 0.0
	for i := range n {
		ax, ay = math.Max(ax, math.Abs(x[i]-mx)), math.Max(ay, math.Abs(y[i]-my))
	}
	if ax == 0 || ay == 0 {
		return math.NaN()
	}
	sxy, sxx, syy := 0.0, 0.0, 0.0
	for i := range n {
		dx, dy := (x[i]-mx)/ax, (y[i]-my)/ay
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, sxy/(math.Sqrt(sxx)*math.Sqrt(syy))))
}

// Spearman is the rank correlation of x and y (Pearson on average ranks), robust
// to the odd very long answer. NaN when undefined, as for Pearson.
func Spearman(x, y []float64) float64 {
	n := min(len(x), len(y))
	rx, _ := ranks(x[:n])
	ry, _ := ranks(y[:n])
	return Pearson(rx, ry)
}
