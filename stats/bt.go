package stats

import (
	"math"
	"slices"
)

// Comparison is one pairwise judgement between players A and B (indices).
type Comparison struct {
	A, B   int
	Winner int // WinA, WinB or Tie
}

// Comparison outcomes.
const (
	WinA = 0  // A was preferred
	WinB = 1  // B was preferred
	Tie  = -1 // neither; counts half a win to each
)

// BTResamples is the number of bootstrap resamples BradleyTerryCI draws.
const BTResamples = 1000

// btPrior is the number of virtual games, each a tie, that every player plays
// against a fixed reference player (log-strength 0). It keeps the fit finite
// for a player who won (or lost) everything, and puts a player without games
// at the reference strength, while weighing as little as one real game.
const btPrior = 1.0

// BradleyTerryCI is BradleyTerry with 95% percentile-bootstrap CIs from
// BTResamples resamples of the comparisons (deterministic for a seed). Mean is
// the full-data rating, N the number of valid comparisons the player is in.
// Ratings are relative to the field's mean, so the CIs are too.
func BradleyTerryCI(players int, cs []Comparison, seed uint64) []Estimate {
	if players <= 0 {
		return nil
	}
	valid := make([]Comparison, 0, len(cs))
	for _, c := range cs {
		if validComparison(players, c) {
			valid = append(valid, c)
		}
	}
	wins, games := tally(players, valid, nil)
	logp := btFit(players, wins, games, btPrior, nil)
	out := make([]Estimate, players)
	for i, r := range toElo(logp) {
		out[i] = Estimate{Mean: r, Lo: r, Hi: r}
	}
	for _, c := range valid {
		out[c.A].N++
		out[c.B].N++
	}
	if len(valid) == 0 {
		return out
	}
	r := newRand(seed)
	boot := make([][]float64, players) // boot[player][resample]
	for i := range boot {
		boot[i] = make([]float64, BTResamples)
	}
	pick := make([]int, len(valid))
	for b := range BTResamples {
		for j := range pick {
			pick[j] = r.IntN(len(valid))
		}
		w, g := tally(players, valid, pick)
		for i, x := range toElo(btFit(players, w, g, btPrior, logp)) {
			boot[i][b] = x
		}
	}
	for i := range out {
		slices.Sort(boot[i])
		out[i].Lo, out[i].Hi = quantile(boot[i], 0.025), quantile(boot[i], 0.975)
	}
	return out
}

func validComparison(players int, c Comparison) bool {
	return c.A >= 0 && c.A < players && c.B >= 0 && c.B < players && c.A != c.B &&
		(c.Winner == WinA || c.Winner == WinB || c.Winner == Tie)
}

// tally counts wins[i*P+j] (i over j, ties ½) and games[i*P+j] (symmetric)
// over cs, or over cs[pick[0]], cs[pick[1]], … when pick is non-nil.
func tally(players int, cs []Comparison, pick []int) (wins, games []float64) {
	wins = make([]float64, players*players)
	games = make([]float64, players*players)
	add := func(c Comparison) {
		if !validComparison(players, c) {
			return
		}
		a, b := c.A, c.B
		games[a*players+b]++
		games[b*players+a]++
		switch c.Winner {
		case WinA:
			wins[a*players+b]++
		case WinB:
			wins[b*players+a]++
		default:
			wins[a*players+b] += 0.5
			wins[b*players+a] += 0.5
		}
	}
	if pick == nil {
		for _, c := range cs {
			add(c)
		}
	} else {
		for _, j := range pick {
			add(cs[j])
		}
	}
	return wins, games
}

// btFit returns natural-log strengths θ maximising the Bradley–Terry
// log-likelihood, each player also playing prior tied games against a
// reference fixed at θ=0. The model is a logistic regression, so Newton's
// method converges in a handful of steps (the textbook MM iteration needs
// thousands here, because the weak prior barely pins the common shift);
// steps are halved until the likelihood rises. start, if non-nil, is a warm
// start. prior must be > 0: it makes the Hessian strictly diagonally dominant,
// so the Cholesky solve cannot fail.
func btFit(players int, wins, games []float64, prior float64, start []float64) []float64 {
	th := make([]float64, players)
	if start != nil {
		copy(th, start)
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	logSig := func(x float64) float64 { // log σ(x) without overflow
		if x < 0 {
			return x - math.Log1p(math.Exp(x))
		}
		return -math.Log1p(math.Exp(-x))
	}
	loglik := func(th []float64) float64 {
		l := 0.0
		for i := range players {
			l += prior / 2 * (logSig(th[i]) + logSig(-th[i]))
			for j := range players {
				if w := wins[i*players+j]; w > 0 {
					l += w * logSig(th[i]-th[j])
				}
			}
		}
		return l
	}
	grad := make([]float64, players)
	hess := make([]float64, players*players) // negative Hessian, SPD
	step := make([]float64, players)
	trial := make([]float64, players)
	for range 100 {
		clear(hess)
		for i := range players {
			s := sig(th[i])
			grad[i] = prior * (0.5 - s)
			hess[i*players+i] = prior * s * (1 - s)
			for j := range players {
				g := games[i*players+j]
				if g == 0 {
					continue
				}
				s := sig(th[i] - th[j])
				grad[i] += wins[i*players+j] - g*s
				hess[i*players+i] += g * s * (1 - s)
				hess[i*players+j] -= g * s * (1 - s)
			}
		}
		choleskySolve(players, hess, grad, step)
		l0 := loglik(th)
		for range 50 {
			for i := range th {
				trial[i] = th[i] + step[i]
			}
			if loglik(trial) >= l0-1e-12*math.Abs(l0) {
				break
			}
			for i := range step {
				step[i] /= 2
			}
		}
		delta := 0.0
		for i := range th {
			delta = math.Max(delta, math.Abs(trial[i]-th[i]))
		}
		copy(th, trial)
		if delta < 1e-10 {
			break
		}
	}
	return th
}

// choleskySolve solves a·x = b for symmetric positive definite a (n×n, row
// major), overwriting a with its Cholesky factor.
func choleskySolve(n int, a, b, x []float64) {
	for j := range n {
		d := a[j*n+j]
		for k := range j {
			d -= a[j*n+k] * a[j*n+k]
		}
		d = math.Sqrt(math.Max(d, 1e-300))
		a[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := range j {
				s -= a[i*n+k] * a[j*n+k]
			}
			a[i*n+j] = s / d
		}
	}
	for i := range n { // L·y = b
		s := b[i]
		for k := range i {
			s -= a[i*n+k] * x[k]
		}
		x[i] = s / a[i*n+i]
	}
	for i := n - 1; i >= 0; i-- { // Lᵀ·x = y
		s := x[i]
		for k := i + 1; k < n; k++ {
			s -= a[k*n+i] * x[k]
		}
		x[i] = s / a[i*n+i]
	}
}

// toElo maps natural-log strengths to Elo-scale ratings with mean 1000.
func toElo(logp []float64) []float64 {
	out := make([]float64, len(logp))
	m := 0.0
	if len(logp) > 0 {
		m = mean(logp)
	}
	for i, x := range logp {
		out[i] = 1000 + 400/math.Ln10*(x-m)
	}
	return out
}
