package stats

import "math"

// Weighting says how much partial credit Kappa gives to near-miss ratings.
type Weighting int

// Weightings for Kappa; Linear or Quadratic suit ordinal grades (1–5 stars).
const (
	Unweighted Weighting = iota // only identical ratings agree
	Linear                      // disagreement weight |i−j|/(k−1)
	Quadratic                   // disagreement weight ((i−j)/(k−1))²
)

// KappaResult is Cohen's kappa with a 95% CI, the number of rated items and
// the raw proportion of items rated identically.
type KappaResult struct {
	Kappa, Lo, Hi float64
	N             int
	Agreement     float64
}

// z975 is the 97.5% standard-normal quantile.
const z975 = 1.959963984540054

// Kappa is Cohen's kappa between two raters (judge vs human, or judge vs
// judge) for ratings 0..k−1; pairs with a rating outside that range are
// skipped. The CI is Wald, Kappa ± 1.96·ASE with the large-sample ASE of
// Fleiss, Cohen & Everitt (1969) as in SAS and statsmodels' cohens_kappa,
// clipped to [−1, 1]. Kappa, Lo and Hi are NaN when kappa is undefined: no
// items, k < 2, or chance agreement already perfect (both raters used one
// and the same category throughout; see Agreement then).
func Kappa(a, b []int, k int, w Weighting) KappaResult {
	if k < 1 {
		return KappaTable(nil, 0, w)
	}
	table := make([]float64, k*k)
	for i := range min(len(a), len(b)) {
		if a[i] >= 0 && a[i] < k && b[i] >= 0 && b[i] < k {
			table[a[i]*k+b[i]]++
		}
	}
	return KappaTable(table, k, w)
}

// KappaTable is Kappa from the raters' contingency table: table[i*k+j]
// counts the items rater a rated i and rater b rated j. Callers that can
// count in the database (a run's million scores) pass the counts alone.
func KappaTable(table []float64, k int, w Weighting) KappaResult {
	nan := math.NaN()
	res := KappaResult{Kappa: nan, Lo: nan, Hi: nan}
	if k < 1 || len(table) != k*k {
		return res
	}
	var total, agree float64
	for i := range k {
		for j := range k {
			total += table[i*k+j]
		}
		agree += table[i*k+i]
	}
	res.N = int(total)
	if res.N == 0 {
		return res
	}
	n := total
	res.Agreement = agree / n
	if k < 2 {
		return res
	}

	// Agreement weights wt[i][j] in [0,1]: 1 on the diagonal.
	wt := make([]float64, k*k)
	for i := range k {
		for j := range k {
			d := math.Abs(float64(i-j)) / float64(k-1)
			switch w {
			case Linear:
				wt[i*k+j] = 1 - d
			case Quadratic:
				wt[i*k+j] = 1 - d*d
			default:
				if i == j {
					wt[i*k+j] = 1
				}
			}
		}
	}
	row := make([]float64, k) // rater a's marginal proportions
	col := make([]float64, k) // rater b's
	for i := range k {
		for j := range k {
			p := table[i*k+j] / n
			row[i] += p
			col[j] += p
		}
	}
	po, pe := 0.0, 0.0
	wRow := make([]float64, k) // Σ_j col_j·w_ij
	wCol := make([]float64, k) // Σ_i row_i·w_ij
	for i := range k {
		for j := range k {
			po += table[i*k+j] / n * wt[i*k+j]
			pe += row[i] * col[j] * wt[i*k+j]
			wRow[i] += col[j] * wt[i*k+j]
			wCol[j] += row[i] * wt[i*k+j]
		}
	}
	if pe >= 1-1e-12 {
		return res
	}
	kappa := (po - pe) / (1 - pe)
	v := 0.0
	for i := range k {
		for j := range k {
			t := wt[i*k+j] - (wRow[i]+wCol[j])*(1-kappa)
			v += table[i*k+j] / n * t * t
		}
	}
	t := kappa - pe*(1-kappa)
	v = (v - t*t) / ((1 - pe) * (1 - pe) * n)
	se := math.Sqrt(math.Max(v, 0))
	res.Kappa = kappa
	clip := func(x float64) float64 { return math.Max(-1, math.Min(1, x)) }
	res.Lo, res.Hi = clip(kappa-z975*se), clip(kappa+z975*se)
	return res
}
