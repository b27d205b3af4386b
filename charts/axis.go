package charts

import "math"

// extent accumulates the finite range of values.
type extent struct {
	lo, hi float64
	n      int
}

func (e *extent) add(vs ...float64) {
	for _, v := range vs {
		if !finite(v) {
			continue
		}
		v = clamp(v, -domainLimit, domainLimit)
		if e.n == 0 || v < e.lo {
			e.lo = v
		}
		if e.n == 0 || v > e.hi {
			e.hi = v
		}
		e.n++
	}
}

func (e extent) maxAbs() float64 { return math.Max(math.Abs(e.lo), math.Abs(e.hi)) }

// ---- axes -----------------------------------------------------------------

// axis maps data values to [0,1] and carries its tick values.
type axis struct {
	lo, hi float64 // domain (log10 units when log)
	ticks  []float64
	dec    int // decimals for tick labels
	log    bool
}

// frac maps v to [0,1] along the axis, clamping outside values.
func (a axis) frac(v float64) float64 {
	if a.log {
		if v <= 0 {
			return 0
		}
		v = math.Log10(v)
	}
	if a.hi == a.lo {
		return 0.5
	}
	return clamp((v-a.lo)/(a.hi-a.lo), 0, 1)
}

// tickDec returns the decimals for the label of tick v.
func (a axis) tickDec(v float64) int {
	if a.log && v > 0 {
		return max(0, min(10, int(-math.Floor(math.Log10(v)+1e-9))))
	}
	return a.dec
}

// niceStep returns a 1-2-5 step close to raw.
func niceStep(raw float64) float64 {
	exp := math.Floor(math.Log10(raw))
	p := math.Pow(10, exp)
	f := raw / p
	switch {
	case f < 1.5:
		return p
	case f < 3:
		return 2 * p
	case f < 7:
		return 5 * p
	default:
		return 10 * p
	}
}

// linearAxis builds an axis over [lo, hi] with about target ticks in 1-2-5
// steps. Unfixed ends are rounded out to a tick; fixed ends (finite fixLo /
// fixHi) are kept exactly.
func linearAxis(lo, hi, fixLo, fixHi float64, target int) axis {
	if finite(fixLo) {
		lo = fixLo
	}
	if finite(fixHi) {
		hi = fixHi
	}
	if lo > hi {
		// A fixed bound beyond all data: keep the fixed end, pad the other.
		if finite(fixLo) {
			hi = lo + math.Max(math.Abs(lo), 1)
		} else {
			lo = hi - math.Max(math.Abs(hi), 1)
		}
	}
	mag := math.Max(math.Abs(lo), math.Abs(hi))
	if hi-lo <= mag*1e-12 || hi-lo < 1e-300 {
		d := 1.0
		if mag > 1e-200 {
			d = mag * 0.1
		}
		if !finite(fixLo) {
			lo -= d
		}
		if !finite(fixHi) {
			hi += d
		}
		if lo == hi { // both fixed and equal cannot happen (bounds()), but be safe
			hi = lo + d
		}
	}
	target = max(2, target)
	step := niceStep((hi - lo) / float64(target-1))
	// Tick k is at k*step. Unfixed ends are rounded out onto a tick, using
	// the same k so the end and its tick are bit-identical.
	k0 := math.Ceil(lo/step - 1e-6)
	k1 := math.Floor(hi/step + 1e-6)
	if !finite(fixLo) {
		k0 = math.Floor(lo / step)
		lo = k0 * step
	}
	if !finite(fixHi) {
		k1 = math.Ceil(hi / step)
		hi = k1 * step
	}
	a := axis{lo: lo, hi: hi}
	for k := k0; k <= k1 && len(a.ticks) < 60; k++ {
		v := k * step
		if v == 0 {
			v = 0 // no -0
		}
		a.ticks = append(a.ticks, v)
	}
	a.dec = max(0, min(10, int(-math.Floor(math.Log10(step)+1e-9))))
	return a
}

// logAxis builds a base-10 axis over positive [lo, hi]. The ends are
// rounded out to the nearest 1-2-5 value and ticks are 1-2-5 per decade
// (only powers of ten when there are many decades).
func logAxis(lo, hi float64) axis {
	d0 := math.Floor(math.Log10(lo))
	d1 := math.Ceil(math.Log10(hi))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	mults := []float64{1, 2, 5}
	k := 1.0
	if d1-d0 > 4 {
		mults = []float64{1}
		k = math.Ceil((d1 - d0) / 8)
		d1 = d0 + math.Ceil((d1-d0)/k)*k
	}
	var cands []float64
	for d := d0; d <= d1; d += k {
		for _, m := range mults {
			cands = append(cands, m*math.Pow(10, d))
		}
	}
	start, end := cands[0], cands[len(cands)-1]
	for _, v := range cands {
		if v <= lo*(1+1e-12) {
			start = v
		}
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i] >= hi*(1-1e-12) {
			end = cands[i]
		}
	}
	if end <= start {
		end = start * 10
	}
	a := axis{lo: math.Log10(start), hi: math.Log10(end), log: true}
	for _, v := range cands {
		if v >= start*(1-1e-12) && v <= end*(1+1e-12) && len(a.ticks) < 60 {
			a.ticks = append(a.ticks, v)
		}
	}
	a.dec = max(0, min(10, int(-d0)))
	return a
}
