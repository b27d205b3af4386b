package stats

import (
	"cmp"
	"math"
	"slices"
)

// Counted is a pair of values (x, y) seen N times.
type Counted struct {
	X, Y float64
	N    int64
}

// SpearmanCounted is Spearman of the pairs each repeated N times, without
// repeating them: a judge's million verdicts fall into a few hundred
// (length, score) pairs, and ranking those is what ranking the verdicts does,
// since tied values share their average rank. Equal to Spearman of the
// expanded pairs up to float rounding; NaN when that is.
func SpearmanCounted(pairs []Counted) float64 {
	var total int64
	for _, p := range pairs {
		total += max(p.N, 0)
	}
	if total < 2 {
		return math.NaN()
	}
	rx := countedRanks(pairs, func(p Counted) float64 { return p.X })
	ry := countedRanks(pairs, func(p Counted) float64 { return p.Y })
	return countedPearson(pairs, rx, ry, float64(total))
}

// countedRanks is the average rank of each pair's value among all counted
// values: the values before it plus the middle of its ties.
func countedRanks(pairs []Counted, value func(Counted) float64) []float64 {
	idx := make([]int, len(pairs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return cmp.Compare(value(pairs[i]), value(pairs[j])) })
	rk := make([]float64, len(pairs))
	var before int64
	for i := 0; i < len(idx); {
		v := value(pairs[idx[i]])
		var tied int64
		j := i
		for ; j < len(idx) && value(pairs[idx[j]]) == v; j++ {
			tied += max(pairs[idx[j]].N, 0)
		}
		avg := float64(before) + float64(tied+1)/2
		for _, k := range idx[i:j] {
			rk[k] = avg
		}
		before += tied
		i = j
	}
	return rk
}

// countedPearson is Pearson of the ranks rx and ry, each pair weighted by
// its count, computed as Pearson does (deviations scaled to at most 1).
func countedPearson(pairs []Counted, rx, ry []float64, total float64) float64 {
	mx, my := 0.0, 0.0
	for i, p := range pairs {
		w := float64(max(p.N, 0))
		mx += w * rx[i]
		my += w * ry[i]
	}
	mx, my = mx/total, my/total
	ax, ay := 0.0, 0.0
	for i, p := range pairs {
		if p.N > 0 {
			ax, ay = math.Max(ax, math.Abs(rx[i]-mx)), math.Max(ay, math.Abs(ry[i]-my))
		}
	}
	if ax == 0 || ay == 0 {
		return math.NaN()
	}
	sxy, sxx, syy := 0.0, 0.0, 0.0
	for i, p := range pairs {
		w := float64(max(p.N, 0))
		dx, dy := (rx[i]-mx)/ax, (ry[i]-my)/ay
		sxy += w * dx * dy
		sxx += w * dx * dx
		syy += w * dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, sxy/(math.Sqrt(sxx)*math.Sqrt(syy))))
}
