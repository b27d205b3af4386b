package stats

import (
	"math"
	"testing"
)

// Expected values are exact rationals 1 − C(n−c,k)/C(n,k) and C(c,k)/C(n,k)
// computed with Python's fractions and math.comb (stats/testdata/reference.py).
func TestPassAtKAndPassHatK(t *testing.T) {
	cases := []struct {
		n, c, k         int
		passAt, passHat float64
	}{
		{10, 3, 1, 0.3, 0.3}, // k=1: both are the plain pass rate
		{10, 3, 5, 0.9166666666666666, 0},
		{10, 0, 3, 0, 0},
		{10, 10, 3, 1, 1},
		{200, 13, 10, 0.49755111473060615, 1.2738851058221087e-14},
		{200, 13, 100, 0.9999194971988055, 0},
		{5, 2, 4, 1, 0},
		{1000, 1, 500, 0.5, 0},
		{3, 2, 2, 1, 1.0 / 3}, // C(2,2)/C(3,2)
	}
	for _, c := range cases {
		check(t, "PassAtK", PassAtK(c.n, c.c, c.k), c.passAt, 1e-12)
		got := PassHatK(c.n, c.c, c.k)
		if math.Abs(got-c.passHat) > 1e-12*math.Max(c.passHat, 1e-300) && math.Abs(got-c.passHat) > 1e-300 {
			t.Errorf("PassHatK(%d,%d,%d) = %g, want %g", c.n, c.c, c.k, got, c.passHat)
		}
	}
	for _, bad := range [][3]int{{0, 0, 1}, {5, 2, 0}, {5, 2, 6}, {5, 6, 1}, {5, -1, 1}} {
		if !math.IsNaN(PassAtK(bad[0], bad[1], bad[2])) || !math.IsNaN(PassHatK(bad[0], bad[1], bad[2])) {
			t.Errorf("n,c,k=%v: want NaN for invalid input", bad)
		}
	}
	// pass@k grows and pass^k shrinks with k.
	for k := 1; k < 20; k++ {
		if PassAtK(20, 7, k+1) < PassAtK(20, 7, k) || PassHatK(20, 7, k+1) > PassHatK(20, 7, k) {
			t.Errorf("not monotone at k=%d", k)
		}
	}
}
