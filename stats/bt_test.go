package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// btGames expands (a, b, a wins, b wins, ties) rows into comparisons.
func btGames(rows [][5]int) []Comparison {
	var cs []Comparison
	for _, r := range rows {
		for range r[2] {
			cs = append(cs, Comparison{r[0], r[1], WinA})
		}
		for range r[3] {
			cs = append(cs, Comparison{r[0], r[1], WinB})
		}
		for range r[4] {
			cs = append(cs, Comparison{r[0], r[1], Tie})
		}
	}
	return cs
}

// Same tournament as stats/testdata/reference.py. Player 4 played only
// twice: it won both games against 0 and lost 1, won 4 and tied 1 against 3.
var btRows = [][5]int{
	{0, 1, 7, 3, 2}, {0, 2, 8, 1, 1}, {0, 3, 5, 5, 0}, {1, 2, 6, 4, 1},
	{1, 3, 2, 6, 2}, {2, 3, 3, 7, 0}, {0, 4, 2, 0, 0}, {3, 4, 4, 1, 1},
}

// Expected ratings: the maximum-likelihood fit found by scipy 1.10.1
// optimize.minimize(BFGS) on the same log-likelihood (virtual prior games
// included as data) — a different algorithm from our Newton iteration.
func TestBradleyTerryAgainstScipyMLE(t *testing.T) {
	want := []float64{1131.3716685052377, 981.6553722664821, 911.2753629297621, 1099.7342044427394, 875.9633918557786}
	got := BradleyTerry(5, btGames(btRows))
	for i := range want {
		check(t, "rating", got[i], want[i], 1e-8) // BFGS agrees to ~1e-6 Elo points
	}
}

// synthetic plays games between every pair of players with known Elo ratings.
func synthetic(elo []float64, perPair int, seed uint64) []Comparison {
	r := rand.New(rand.NewPCG(seed, 1))
	var cs []Comparison
	for a := range elo {
		for b := a + 1; b < len(elo); b++ {
			pa := 1 / (1 + math.Pow(10, (elo[b]-elo[a])/400))
			for range perPair {
				w := WinB
				if r.Float64() < pa {
					w = WinA
				}
				cs = append(cs, Comparison{a, b, w})
			}
		}
	}
	return cs
}

func TestBradleyTerryRecoversKnownStrengths(t *testing.T) {
	truth := []float64{1000, 1200, 800, 1100, 900} // mean 1000
	cs := synthetic(truth, 200, 4)
	got := BradleyTerry(len(truth), cs)
	// Each player has 800 games: SE ≈ 13 Elo points, so allow 50.
	for i := range truth {
		if math.Abs(got[i]-truth[i]) > 50 {
			t.Errorf("player %d: rating %.1f, true %.0f", i, got[i], truth[i])
		}
	}
	order := []int{1, 3, 0, 4, 2}
	for i := 1; i < len(order); i++ {
		if got[order[i-1]] <= got[order[i]] {
			t.Errorf("ordering broken: %v", got)
		}
	}
	check(t, "mean", mean(got), 1000, 1e-9)
}

func TestBradleyTerryDegenerate(t *testing.T) {
	if got := BradleyTerry(0, nil); got != nil {
		t.Errorf("no players: %v", got)
	}
	// Player 0 wins everything, player 3 never plays; invalid comparisons are skipped.
	cs := []Comparison{{0, 1, WinA}, {0, 1, WinA}, {0, 2, WinA}, {1, 2, Tie},
		{0, 0, WinA}, {5, 1, WinA}, {1, 2, 7}, {-1, 2, WinB}}
	got := BradleyTerry(4, cs)
	for i, r := range got {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			t.Fatalf("rating %d = %g", i, r)
		}
	}
	if !(got[0] > got[1] && got[0] > got[2]) {
		t.Errorf("undefeated player not on top: %v", got)
	}
	// Player 3 has no games, so it sits exactly at the reference strength.
	w, g := tally(4, cs, nil)
	if th := btFit(4, w, g, btPrior, nil); math.Abs(th[3]) > 1e-9 {
		t.Errorf("no-games player at log-strength %g, want 0", th[3])
	}
	// The invalid comparisons changed nothing.
	if again := BradleyTerry(4, cs[:4]); !near(again[0], got[0], 1e-12) {
		t.Errorf("invalid comparisons changed the fit: %v vs %v", again, got)
	}
	// No comparisons at all: everyone at 1000.
	for _, r := range BradleyTerry(3, nil) {
		check(t, "empty", r, 1000, 1e-12)
	}
}

func TestBradleyTerryCI(t *testing.T) {
	truth := []float64{1000, 1200, 800, 1100, 900}
	cs := synthetic(truth, 100, 7)
	cs = append(cs, Comparison{0, 1, Tie}) // player 1 has one extra game
	ci := BradleyTerryCI(6, cs, 1)         // player 5 never plays
	pt := BradleyTerry(6, cs)
	for i, e := range ci[:5] {
		check(t, "Mean is the point fit", e.Mean, pt[i], 1e-12)
		if !(e.Lo < e.Mean && e.Mean < e.Hi) {
			t.Errorf("player %d: %+v does not bracket its rating", i, e)
		}
		// 400 games each: SE ≈ 18 → width ≈ 70.
		if w := e.Hi - e.Lo; w < 30 || w > 150 {
			t.Errorf("player %d: CI width %.1f implausible", i, w)
		}
	}
	if ci[0].N != 401 || ci[1].N != 401 || ci[2].N != 400 || ci[5].N != 0 {
		t.Errorf("N = %d %d %d %d, want 401 401 400 0", ci[0].N, ci[1].N, ci[2].N, ci[5].N)
	}
	again := BradleyTerryCI(6, cs, 1)
	for i := range ci {
		if ci[i] != again[i] {
			t.Errorf("not deterministic for a seed: %+v vs %+v", ci[i], again[i])
		}
	}
	// More games per pair → tighter intervals.
	big := BradleyTerryCI(5, synthetic(truth, 800, 7), 1)
	if big[0].Hi-big[0].Lo > 0.6*(ci[0].Hi-ci[0].Lo) {
		t.Errorf("8× the games: width %.1f vs %.1f", big[0].Hi-big[0].Lo, ci[0].Hi-ci[0].Lo)
	}
	if got := BradleyTerryCI(2, nil, 1); got[0] != (Estimate{1000, 1000, 1000, 0}) {
		t.Errorf("no comparisons: %+v", got[0])
	}
}
