package stats

import "math"

// PassAtK is the unbiased pass@k estimate from n attempts of which c passed:
// the chance that at least one of k attempts drawn without replacement
// passes, 1 − C(n−c,k)/C(n,k) (Chen et al. 2021). NaN unless 1 ≤ k ≤ n and
// 0 ≤ c ≤ n.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	if n-c < k {
		return 1
	}
	// C(n−c,k)/C(n,k) = Π_{i=n−c+1..n} (1 − k/i): a product of terms in
	// (0,1], no huge binomials, so no overflow or cancellation.
	q := 1.0
	for i := n - c + 1; i <= n; i++ {
		q *= 1 - float64(k)/float64(i)
	}
	return 1 - q
}

// PassHatK is pass^k from n attempts of which c passed: the chance that all
// of k attempts drawn without replacement pass, C(c,k)/C(n,k) (τ-bench), a
// measure of reliability rather than of best-of-k. NaN unless 1 ≤ k ≤ n and
// 0 ≤ c ≤ n.
func PassHatK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	// C(c,k)/C(n,k) = Π_{i<k} (c−i)/(n−i); zero as soon as c < k.
	q := 1.0
	for i := range k {
		q *= float64(c-i) / float64(n-i)
	}
	return math.Max(q, 0)
}
