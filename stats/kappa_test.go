package stats

import (
	"math"
	"testing"
)

// Kappa values from sklearn 1.2.1 cohen_kappa_score(labels=range(k), weights=
// None/"linear"/"quadratic"); ASE-based CIs from statsmodels 0.13.5
// cohens_kappa(table, wt=...) kappa_low/kappa_upp (stats/testdata/reference.py).

func repeatInts(pairs ...int) []int { // value, count, value, count, ...
	var out []int
	for i := 0; i < len(pairs); i += 2 {
		for range pairs[i+1] {
			out = append(out, pairs[i])
		}
	}
	return out
}

func TestKappaAgainstSklearnAndStatsmodels(t *testing.T) {
	type want struct{ kappa, lo, hi float64 }
	cases := []struct {
		name string
		a, b []int
		k    int
		ws   [3]want // Unweighted, Linear, Quadratic
	}{
		{
			// Wikipedia's worked example: 50 grant proposals, Yes=1/No=0;
			// both Yes 20, A Yes B No 5, A No B Yes 10, both No 15 → κ = 0.4.
			"wikipedia 50 proposals",
			repeatInts(1, 25, 0, 25), repeatInts(1, 20, 0, 5, 1, 10, 0, 15), 2,
			[3]want{
				{0.4, 0.151092290476661, 0.6489077095233389},
				{0.4, 0.15109229047666106, 0.648907709523339},
				{0.4, 0.15109229047666106, 0.648907709523339},
			},
		},
		{
			"5-point grades",
			[]int{0, 0, 3, 2, 2, 3, 3, 0, 2, 0, 2, 4, 2, 0, 2, 0, 3, 4, 4, 3, 4, 1, 0, 2, 2, 3, 4, 1, 4, 0, 1, 3, 1, 3, 2, 2, 4, 4, 4, 2},
			[]int{1, 1, 2, 1, 1, 3, 4, 0, 3, 0, 3, 4, 3, 0, 2, 1, 4, 4, 4, 2, 4, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 2, 2, 4, 1, 1, 4, 4, 4, 1}, 5,
			[3]want{
				{0.2283950617283952, 0.05281238306343669, 0.40397774039335343},
				{0.6108949416342413, 0.4861294864001464, 0.7356603968683362},
				{0.8432601880877743, 0.7765728059088118, 0.9099475702667367},
			},
		},
		{
			"3 categories",
			[]int{0, 1, 2, 2, 1, 0, 2, 1, 1, 0, 2, 2, 0, 1},
			[]int{0, 2, 2, 1, 1, 0, 2, 0, 1, 0, 2, 1, 1, 1}, 3,
			[3]want{
				{0.46153846153846145, 0.07775671931618322, 0.8453202037607401},
				{0.5783132530120483, 0.2566575078189062, 0.8999689982051902},
				{0.7058823529411764, 0.4591036775101256, 0.9526610283722274},
			},
		},
	}
	for _, c := range cases {
		for wi, w := range []Weighting{Unweighted, Linear, Quadratic} {
			r := Kappa(c.a, c.b, c.k, w)
			name := c.name + [...]string{" unweighted", " linear", " quadratic"}[wi]
			check(t, name+" kappa", r.Kappa, c.ws[wi].kappa, 1e-9)
			check(t, name+" lo", r.Lo, c.ws[wi].lo, 1e-9)
			check(t, name+" hi", r.Hi, c.ws[wi].hi, 1e-9)
			if r.N != len(c.a) {
				t.Errorf("%s: N = %d, want %d", name, r.N, len(c.a))
			}
		}
	}
	check(t, "wikipedia agreement", Kappa(cases[0].a, cases[0].b, 2, Unweighted).Agreement, 0.7, 1e-12)
}

func TestKappaDegenerate(t *testing.T) {
	// Both raters always say "pass": agreement is perfect but so is chance
	// agreement, so kappa is undefined (NaN) and Agreement tells the story.
	r := Kappa([]int{1, 1, 1}, []int{1, 1, 1}, 2, Linear)
	if !math.IsNaN(r.Kappa) || !math.IsNaN(r.Lo) || r.N != 3 || r.Agreement != 1 {
		t.Errorf("constant raters: %+v", r)
	}
	if r := Kappa(nil, nil, 3, Unweighted); !math.IsNaN(r.Kappa) || r.N != 0 {
		t.Errorf("empty: %+v", r)
	}
	if r := Kappa([]int{0}, []int{0}, 0, Unweighted); !math.IsNaN(r.Kappa) {
		t.Errorf("k=0: %+v", r)
	}
	// Perfect agreement over several categories: κ = 1, CI clipped at 1.
	r = Kappa([]int{0, 1, 2, 0}, []int{0, 1, 2, 0}, 3, Quadratic)
	if r.Kappa != 1 || r.Hi != 1 || r.Lo > 1 {
		t.Errorf("perfect: %+v", r)
	}
	// Out-of-range ratings are skipped, not counted.
	r = Kappa([]int{0, 1, 5, -1, 1}, []int{0, 1, 0, 0, 0}, 2, Unweighted)
	if r.N != 3 {
		t.Errorf("N = %d, want 3 (two pairs out of range)", r.N)
	}
	// Unequal lengths use the shorter.
	if r := Kappa([]int{0, 1, 1}, []int{0, 1}, 2, Unweighted); r.N != 2 {
		t.Errorf("N = %d, want 2", r.N)
	}
}

func TestCorrelationAgainstScipy(t *testing.T) {
	// scipy 1.10.1 pearsonr / spearmanr (stats/testdata/reference.py).
	length := []float64{120, 340, 560, 80, 900, 450, 230, 610, 330, 700, 150, 480}
	score := []float64{6.0, 7.5, 8.0, 5.0, 9.0, 7.0, 7.0, 8.5, 6.5, 8.0, 5.5, 7.5}
	check(t, "Pearson", Pearson(length, score), 0.9250829863402704, 1e-12)
	check(t, "Spearman", Spearman(length, score), 0.9525615702844266, 1e-12)
	x2 := []float64{1, 2, 2, 3, 3, 3, 4, 5}
	y2 := []float64{10, 8, 9, 7, 7, 6, 3, 4}
	check(t, "Pearson ties", Pearson(x2, y2), -0.9287900478603925, 1e-12)
	check(t, "Spearman ties", Spearman(x2, y2), -0.9509071946874429, 1e-12)

	for _, c := range []struct{ x, y []float64 }{
		{nil, nil}, {[]float64{1}, []float64{2}}, {[]float64{1, 1, 1}, []float64{1, 2, 3}},
	} {
		if r := Pearson(c.x, c.y); !math.IsNaN(r) {
			t.Errorf("Pearson(%v, %v) = %g, want NaN", c.x, c.y, r)
		}
		if r := Spearman(c.x, c.y); !math.IsNaN(r) {
			t.Errorf("Spearman(%v, %v) = %g, want NaN", c.x, c.y, r)
		}
	}
	// Huge values must not overflow sxx·syy.
	check(t, "Pearson huge", Pearson([]float64{1e200, 2e200, 3e200}, []float64{1e200, 2e200, 3e200}), 1, 1e-12)
}
