package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SpearmanCounted of tallied pairs is Spearman of the pairs written out,
// ties included (few distinct values, as scores and answer lengths are).
func TestSpearmanCountedMatchesSpearman(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		var pairs []Counted
		var x, y []float64
		for range 1 + rng.IntN(40) {
			p := Counted{X: float64(rng.IntN(8)), Y: float64(rng.IntN(5)) / 2, N: int64(rng.IntN(30))}
			if trial%2 == 0 {
				p.Y += p.X / 3 // correlated
			}
			pairs = append(pairs, p)
			for range p.N {
				x, y = append(x, p.X), append(y, p.Y)
			}
		}
		want, got := Spearman(x, y), SpearmanCounted(pairs)
		if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(want-got) > 1e-9) {
			t.Errorf("trial %d: SpearmanCounted %v = %g, Spearman of the %d pairs written out = %g", trial, pairs, got, len(x), want)
		}
	}
}

func TestSpearmanCountedUndefined(t *testing.T) {
	for _, pairs := range [][]Counted{
		nil,
		{{X: 1, Y: 2, N: 1}},
		{{X: 1, Y: 2, N: 5}},                     // one value each
		{{X: 1, Y: 2, N: 3}, {X: 1, Y: 3, N: 2}}, // x constant
		{{X: 1, Y: 2, N: 1}, {X: 2, Y: 3, N: 0}}, // one pair counted
	} {
		if r := SpearmanCounted(pairs); !math.IsNaN(r) {
			t.Errorf("SpearmanCounted(%v) = %g, want NaN", pairs, r)
		}
	}
	check(t, "SpearmanCounted ties", SpearmanCounted([]Counted{{1, 10, 1}, {2, 8, 1}, {2, 9, 1}, {3, 7, 2}, {3, 6, 1}, {4, 3, 1}, {5, 4, 1}}), -0.9509071946874429, 1e-12)
}
