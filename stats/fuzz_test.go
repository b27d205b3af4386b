package stats

import (
	"encoding/binary"
	"math"
	"testing"
)

// floatsFrom decodes 8-byte chunks as float64 bits, so the fuzzer reaches
// NaN, ±Inf, subnormals and huge values.
func floatsFrom(data []byte) []float64 {
	out := make([]float64, 0, len(data)/8)
	for len(data) >= 8 {
		out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(data)))
		data = data[8:]
	}
	return out
}

func floatBytes(xs ...float64) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func moderate(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.Abs(x) > 1e100 {
			return false
		}
	}
	return true
}

func inUnit(p float64) bool { return p >= 0 && p <= 1 }

// FuzzNumeric feeds arbitrary floats to every float-slice function: no
// panics, and on moderate input well-formed results.
func FuzzNumeric(f *testing.F) {
	f.Add(floatBytes(), uint64(0))
	f.Add(floatBytes(1), uint64(1))
	f.Add(floatBytes(0.1, 0.9, 0.5, 0.5, 0.2, 0.4), uint64(2))
	f.Add(floatBytes(math.NaN(), 1, math.Inf(1), math.Inf(-1)), uint64(3))
	f.Add(floatBytes(math.MaxFloat64, -math.MaxFloat64, 5e-324, 0), uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		xs := floatsFrom(data)
		if len(xs) > 200 {
			xs = xs[:200]
		}
		a, b := xs[:len(xs)/2], xs[len(xs)/2:]
		e := MeanCI(xs, seed)
		d := PairedDiff(a, b, seed)
		sp := SignTest(a, b)
		w, wp := Wilcoxon(a, b)
		_, _ = Pearson(a, b), Spearman(a, b)
		h := Holm(xs)
		for i, p := range h {
			if !inUnit(p) {
				t.Fatalf("Holm[%d] = %g", i, p)
			}
		}
		if !inUnit(sp) {
			t.Fatalf("SignTest p = %g", sp)
		}
		if !moderate(xs) {
			return
		}
		if e.N != len(xs) || (e.N > 0 && !(e.Lo <= e.Hi)) {
			t.Fatalf("MeanCI = %+v", e)
		}
		if e.N > 0 {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, x := range xs {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
			slack := 1e-12 * math.Max(math.Abs(lo), math.Abs(hi)) // resampled means round
			if e.Lo < lo-slack || e.Hi > hi+slack {
				t.Fatalf("MeanCI %+v outside data range [%g, %g]", e, lo, hi)
			}
		}
		if d.N != min(len(a), len(b)) {
			t.Fatalf("PairedDiff N = %d", d.N)
		}
		if !inUnit(wp) || w < 0 || math.IsNaN(w) {
			t.Fatalf("Wilcoxon = (%g, %g)", w, wp)
		}
	})
}

// FuzzJudging feeds arbitrary ratings and comparisons to Kappa, pass@k and
// Bradley–Terry: no panics, finite ratings, kappa within [−1, 1] or NaN.
func FuzzJudging(f *testing.F) {
	f.Add([]byte{}, int8(2), uint8(0))
	f.Add([]byte{0, 0, 1, 1, 2, 2, 0, 1}, int8(3), uint8(1))
	f.Add([]byte{5, 250, 0, 0, 1}, int8(-1), uint8(7))
	f.Add([]byte{1, 1, 1, 1}, int8(1), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, k int8, w uint8) {
		n := len(data) / 2
		a, b := make([]int, n), make([]int, n)
		for i := range n {
			a[i], b[i] = int(int8(data[2*i])), int(int8(data[2*i+1]))
		}
		r := Kappa(a, b, int(k), Weighting(w%4))
		if !math.IsNaN(r.Kappa) && !(r.Kappa >= -1-1e-9 && r.Kappa <= 1+1e-9 && r.Lo <= r.Hi) {
			t.Fatalf("Kappa = %+v", r)
		}
		if r.N > 0 && !inUnit(r.Agreement) {
			t.Fatalf("Agreement = %g", r.Agreement)
		}
		for _, x := range []float64{PassAtK(int(k), n, int(w)), PassHatK(int(k), n, int(w))} {
			if !math.IsNaN(x) && !inUnit(x) {
				t.Fatalf("pass@k/pass^k = %g", x)
			}
		}
		players := int(k)
		if players > 12 {
			players = 12
		}
		var cs []Comparison
		for i := 0; i+2 < len(data) && len(cs) < 40; i += 3 {
			cs = append(cs, Comparison{int(int8(data[i])) % 13, int(int8(data[i+1])) % 13, int(int8(data[i+2]))%3 - 1})
		}
		ratings := BradleyTerry(players, cs)
		if players > 0 && len(ratings) != players {
			t.Fatalf("%d ratings for %d players", len(ratings), players)
		}
		for _, x := range ratings {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("rating %g", x)
			}
		}
		if len(cs) <= 10 { // the bootstrap is the slow part
			for _, e := range BradleyTerryCI(players, cs, uint64(w)) {
				if !(e.Lo <= e.Hi) || math.IsInf(e.Lo, 0) || math.IsInf(e.Hi, 0) {
					t.Fatalf("CI %+v", e)
				}
			}
		}
	})
}
