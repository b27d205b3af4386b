package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bootXS and its reference interval: numpy 1.24.2 percentile bootstrap with
// 200000 resamples (stats/testdata/reference.py). A different RNG and far
// more resamples than ours, so endpoints are compared loosely.
var bootXS = []float64{0.513, 0.43, 0.131, 0.327, 0.251, 0.222, 0.124, 0.314, 0.388, 0.118, 0.197, 0.453, 0.19, 0.213, 0.583, 0.319, 0.666, 0.191, 0.205, 0.117, 0.342, 0.091, 0.163, 0.1, 0.415, 0.303, 0.228, 0.748, 0.119, 0.127, 0.477, 0.382, 0.141, 0.184, 0.056, 0.31, 0.358, 0.31, 0.328, 0.249}

const bootMean, bootLo, bootHi = 0.28457499999999997, 0.237125, 0.335675

func TestMeanCIAgainstNumpy(t *testing.T) {
	e := MeanCI(bootXS, 1)
	check(t, "Mean", e.Mean, bootMean, 1e-12)
	if e.N != len(bootXS) {
		t.Errorf("N = %d, want %d", e.N, len(bootXS))
	}
	// The Monte Carlo error of a 2000-resample 2.5% quantile is ~1.5% of
	// the interval's width; allow 5%. Using the 5% instead of the 2.5%
	// quantile would move an endpoint by ~8% of the width and fail.
	tol := 0.05 * (bootHi - bootLo)
	if math.Abs(e.Lo-bootLo) > tol || math.Abs(e.Hi-bootHi) > tol {
		t.Errorf("CI [%.5f, %.5f], numpy [%.5f, %.5f] ± %.4f", e.Lo, e.Hi, bootLo, bootHi, tol)
	}
}

func TestMeanCIDeterministic(t *testing.T) {
	a, b := MeanCI(bootXS, 42), MeanCI(bootXS, 42)
	if a != b {
		t.Errorf("same seed, different results: %+v vs %+v", a, b)
	}
	if c := MeanCI(bootXS, 43); c == a {
		t.Errorf("different seeds gave identical intervals %+v", c)
	}
}

func TestMeanCIContainsMeanAndNarrows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	width := func(n int) float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(2)) // pass/fail
		}
		e := MeanCI(xs, 9)
		if !(e.Lo <= e.Mean && e.Mean <= e.Hi) {
			t.Errorf("n=%d: mean %g outside [%g, %g]", n, e.Mean, e.Lo, e.Hi)
		}
		if e.Lo < 0 || e.Hi > 1 {
			t.Errorf("n=%d: CI [%g, %g] leaves [0,1]", n, e.Lo, e.Hi)
		}
		return e.Hi - e.Lo
	}
	w30, w300, w3000 := width(30), width(300), width(3000)
	// Width shrinks like 1/√n: ×10 data → ≈ ×0.32 width.
	if !(w300 < 0.45*w30 && w3000 < 0.45*w300) {
		t.Errorf("widths %g, %g, %g do not shrink like 1/sqrt(n)", w30, w300, w3000)
	}
}

func TestMeanCIMatchesNormalTheoryForLargeN(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = r.Float64()
	}
	e := MeanCI(xs, 3)
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	se := math.Sqrt(ss/float64(len(xs))) / math.Sqrt(float64(len(xs)))
	check(t, "Lo", e.Lo, m-1.96*se, 0.15*se)
	check(t, "Hi", e.Hi, m+1.96*se, 0.15*se)
}

func TestMeanCIDegenerate(t *testing.T) {
	if e := MeanCI(nil, 1); e != (Estimate{}) {
		t.Errorf("empty: %+v, want zero Estimate", e)
	}
	if e := MeanCI([]float64{0.7}, 1); e != (Estimate{0.7, 0.7, 0.7, 1}) {
		t.Errorf("single: %+v", e)
	}
	if e := MeanCI([]float64{0.3, 0.3, 0.3, 0.3}, 1); e != (Estimate{0.3, 0.3, 0.3, 4}) {
		t.Errorf("constant: %+v", e)
	}
}

func TestPairedDiff(t *testing.T) {
	// Model A is 0.05 better than B on every task, plus small noise, while
	// the tasks themselves vary a lot: the paired CI must be far tighter
	// than the CIs of the two means.
	r := rand.New(rand.NewPCG(8, 8))
	a, b := make([]float64, 100), make([]float64, 100)
	for i := range a {
		task := r.Float64()
		b[i] = task
		a[i] = task + 0.05 + 0.02*(r.Float64()-0.5)
	}
	d := PairedDiff(a, b, 1)
	check(t, "Mean", d.Mean, mean(a)-mean(b), 1e-12)
	if d.N != 100 || !(d.Lo > 0.045 && d.Hi < 0.055) {
		t.Errorf("paired diff %+v, want N=100 and CI inside (0.045, 0.055)", d)
	}
	ea := MeanCI(a, 1)
	if ea.Hi-ea.Lo < 10*(d.Hi-d.Lo) {
		t.Errorf("paired CI width %g not much tighter than unpaired %g", d.Hi-d.Lo, ea.Hi-ea.Lo)
	}
	// Unequal lengths use the shorter one.
	if e := PairedDiff(a, b[:10], 1); e.N != 10 {
		t.Errorf("N = %d, want 10", e.N)
	}
}

func TestQuantileMatchesNumpyType7(t *testing.T) {
	s := []float64{1, 2, 4, 8}
	// numpy.percentile([1,2,4,8], [0, 2.5, 50, 97.5, 100]) = 1, 1.075, 3, 7.7, 8
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.025, 1.075}, {0.5, 3}, {0.975, 7.7}, {1, 8}} {
		check(t, "quantile", quantile(s, c.q), c.want, 1e-12)
	}
}
