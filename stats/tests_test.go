package stats

import (
	"math"
	"testing"
)

// Expected values from scipy 1.10.1 (scipy.stats.wilcoxon defaults,
// scipy.stats.binomtest) and statsmodels 0.13.5 (mcnemar, multipletests),
// produced by stats/testdata/reference.py.

func TestWilcoxonAgainstScipy(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
		w, p float64
	}{
		{"exact n=10", // exact null distribution
			[]float64{0.62, 0.71, 0.55, 0.9, 0.33, 0.47, 0.81, 0.66, 0.59, 0.74},
			[]float64{0.58, 0.64, 0.61, 0.71, 0.36, 0.38, 0.69, 0.49, 0.6, 0.52},
			7, 0.037109375},
		{"exact at centre", []float64{1, 2, 3, 4}, []float64{0, 4, 0, 0}, 2, 0.375},
		{"normal n=60",
			[]float64{0.6002, 0.6597, 0.5452, 0.4219, 0.5091, 0.4017, 0.612, 0.868, 0.5016, 0.4759, 0.698, 0.6714, 0.6211, 0.4139, 0.5941, 0.7391, 0.3312, 0.5085, 0.2198, 0.3421, 0.2317, 0.553, 0.3465, 0.6543, 0.6314, 0.5626, 0.0966, 0.4923, 0.5903, 0.6227, 0.294, 0.5044, 0.4043, 0.4382, 0.8122, 0.4385, 0.5935, 0.7769, 0.4833, 0.5777, 0.6221, 0.6128, 0.355, 0.6152, 0.8718, 0.2906, 0.7719, 0.6239, 0.4717, 1.0001, 0.7525, 0.3601, 0.6149, 0.7153, 0.5622, 0.7366, 0.5867, 0.7334, 0.8877, 0.4649},
			[]float64{0.5499, 0.676, 0.5025, 0.5106, 0.537, 0.3913, 0.4921, 0.7235, 0.604, 0.5254, 0.6033, 0.8406, 0.6374, 0.3936, 0.4384, 0.6402, 0.3339, 0.5154, 0.2148, 0.1597, 0.2445, 0.5534, 0.2812, 0.6364, 0.6211, 0.644, 0.0678, 0.5067, 0.4437, 0.5274, 0.2664, 0.4076, 0.4083, 0.303, 0.7827, 0.3502, 0.6926, 0.7122, 0.6221, 0.7512, 0.6225, 0.6728, 0.3086, 0.3607, 0.925, 0.323, 0.7214, 0.5446, 0.4593, 0.9907, 0.6523, 0.2781, 0.6883, 0.6932, 0.5287, 0.812, 0.5307, 0.7892, 0.7605, 0.4156},
			646, 0.04767306229231091},
		{"zeros and ties n=15", // 5 zeros dropped, tie-corrected normal
			[]float64{1, 2, 3, 4, 5, 3, 2, 4, 5, 1, 3, 4, 2, 5, 4},
			[]float64{1, 1, 2, 4, 3, 3, 1, 2, 4, 2, 3, 2, 2, 3, 1},
			3, 0.01085324680751466},
		{"zeros and ties n=80",
			ints2floats([]int{5, 3, 2, 4, 5, 3, 0, 4, 1, 1, 1, 1, 5, 2, 0, 1, 2, 2, 1, 5, 5, 3, 5, 2, 0, 1, 0, 5, 1, 2, 1, 5, 0, 3, 5, 3, 5, 5, 4, 4, 3, 3, 4, 2, 5, 5, 2, 2, 4, 5, 0, 0, 1, 2, 0, 3, 3, 5, 4, 1, 4, 4, 4, 4, 1, 4, 0, 3, 5, 5, 1, 1, 3, 2, 4, 1, 1, 0, 2, 1}),
			ints2floats([]int{1, 5, 4, 5, 3, 0, 4, 3, 5, 2, 1, 3, 2, 3, 2, 1, 0, 5, 4, 2, 1, 3, 2, 3, 0, 1, 4, 0, 4, 2, 0, 4, 4, 4, 5, 4, 5, 0, 5, 5, 4, 4, 4, 5, 5, 3, 4, 5, 1, 0, 1, 0, 2, 0, 1, 1, 4, 1, 5, 1, 5, 3, 1, 0, 1, 3, 0, 0, 0, 4, 0, 0, 2, 1, 3, 5, 5, 3, 3, 4}),
			1077.5, 0.8564216631814047},
	}
	for _, c := range cases {
		w, p := Wilcoxon(c.a, c.b)
		check(t, c.name+" w", w, c.w, 1e-12)
		check(t, c.name+" p", p, c.p, 1e-9)
		// The two-sided test is symmetric in its arguments.
		w2, p2 := Wilcoxon(c.b, c.a)
		if w2 != w || !near(p2, p, 1e-12) {
			t.Errorf("%s: swapped gives (%g, %g), want (%g, %g)", c.name, w2, p2, w, p)
		}
	}
}

// The exact branch against brute force: enumerate all 2^n sign patterns.
func TestWilcoxonExactBruteForce(t *testing.T) {
	for n := 1; n <= 12; n++ {
		maxSum := n * (n + 1) / 2
		for tStat := 0; tStat <= maxSum/2; tStat++ {
			le := 0
			for mask := uint(0); mask < 1<<n; mask++ {
				s := 0
				for r := 1; r <= n; r++ {
					if mask&(1<<(r-1)) != 0 {
						s += r
					}
				}
				if s <= tStat {
					le++
				}
			}
			want := math.Min(1, 2*float64(le)/float64(uint(1)<<n))
			check(t, "exact", wilcoxonExact(n, tStat), want, 1e-15)
		}
	}
}

func TestWilcoxonDegenerate(t *testing.T) {
	if w, p := Wilcoxon(nil, nil); w != 0 || p != 1 {
		t.Errorf("empty: (%g, %g), want (0, 1)", w, p)
	}
	if w, p := Wilcoxon([]float64{1, 2, 3}, []float64{1, 2, 3}); w != 0 || p != 1 {
		t.Errorf("all zero differences: (%g, %g), want (0, 1)", w, p)
	}
	// One pair, no ties: the exact p is 1.
	if w, p := Wilcoxon([]float64{1}, []float64{0}); w != 0 || p != 1 {
		t.Errorf("one pair: (%g, %g), want (0, 1)", w, p)
	}
}

// signData builds pairs with pos wins for a, neg wins for b and ties ties.
func signData(pos, neg, ties int) (a, b []float64) {
	for range pos {
		a, b = append(a, 1), append(b, 0)
	}
	for range neg {
		a, b = append(a, 0), append(b, 0.5)
	}
	for range ties {
		a, b = append(a, 0.3), append(b, 0.3)
	}
	return a, b
}

func TestSignTestAgainstScipyBinomtest(t *testing.T) {
	cases := []struct {
		k, n int
		p    float64
	}{
		{3, 10, 0.34375}, {0, 5, 0.0625}, {5, 10, 1}, {1, 1, 1},
		{40, 100, 0.05688793364098088}, {930, 2000, 0.001875578584597194}, {12, 13, 0.00341796875},
	}
	for _, c := range cases {
		a, b := signData(c.k, c.n-c.k, 7) // the 7 ties must not matter
		check(t, "SignTest", SignTest(a, b), c.p, 1e-9)
	}
	if p := SignTest([]float64{1, 2}, []float64{1, 2}); p != 1 {
		t.Errorf("all ties: p = %g, want 1", p)
	}
	// Large n must not underflow to garbage: 10000 vs 0 is ~0, 5000 vs 5000 is 1.
	a, b := signData(10000, 0, 0)
	if p := SignTest(a, b); !(p >= 0 && p < 1e-300) {
		t.Errorf("10000-0: p = %g", p)
	}
	a, b = signData(5000, 5000, 0)
	check(t, "5000-5000", SignTest(a, b), 1, 0)
}

func TestMcNemarAgainstStatsmodels(t *testing.T) {
	cases := []struct {
		b, c          int
		exact         float64
		chi2, chi2P   float64
		chi2Reference bool // false where statsmodels' |b−c|<1 quirk differs (see McNemarChi2)
	}{
		{6, 16, 0.052478790283203125, 3.6818181818181817, 0.055008833629265896, true},    // Wikipedia's worked example
		{150, 86, 3.715936139571387e-05, 16.81779661016949, 4.114562281345944e-05, true}, // Agresti's presidential approval
		{0, 5, 0.0625, 3.2, 0.07363827012030258, true},
		{3, 3, 1, 0, 1, false},
		{1, 0, 1, 0, 1, true},
		{12, 30, 0.007915897334896727, 6.880952380952381, 0.008711912962379598, true},
		{400, 455, 0.06471883603762849, 3.4105263157894736, 0.06478178160748328, true},
	}
	for _, c := range cases {
		check(t, "McNemar", McNemar(c.b, c.c), c.exact, 1e-9)
		check(t, "McNemar swapped", McNemar(c.c, c.b), c.exact, 1e-9)
		chi2, p := McNemarChi2(c.b, c.c)
		check(t, "McNemarChi2 stat", chi2, c.chi2, 1e-12)
		check(t, "McNemarChi2 p", p, c.chi2P, 1e-9)
	}
	if p := McNemar(0, 0); p != 1 {
		t.Errorf("McNemar(0,0) = %g, want 1", p)
	}
	if chi2, p := McNemarChi2(0, 0); chi2 != 0 || p != 1 {
		t.Errorf("McNemarChi2(0,0) = (%g, %g), want (0, 1)", chi2, p)
	}
}

func TestHolmAgainstStatsmodels(t *testing.T) {
	cases := []struct{ in, want []float64 }{
		{[]float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		{[]float64{0.2, 0.01, 0.5, 0.04, 0.04}, []float64{0.4, 0.05, 0.5, 0.16, 0.16}},
		{[]float64{0.9, 0.8}, []float64{1, 1}},
		{[]float64{0.001}, []float64{0.001}},
		{nil, []float64{}},
		{[]float64{math.NaN(), 0.01}, []float64{1, 0.02}}, // NaN treated as 1
	}
	for _, c := range cases {
		got := Holm(c.in)
		if len(got) != len(c.want) {
			t.Fatalf("Holm(%v) has %d values, want %d", c.in, len(got), len(c.want))
		}
		for i := range got {
			check(t, "Holm", got[i], c.want[i], 1e-12)
		}
	}
}
