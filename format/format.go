// Package format is how Tribunal writes numbers for people: the run page,
// the CLI's tables and the HTML report all call these, so one figure reads
// the same everywhere. Missing values print as None.
package format

import (
	"math"
	"strconv"
	"time"
)

// None stands for a value that is missing (not measured, not priced, no data).
const None = "–"

func missing(p *float64) bool { return p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) }

// Num writes a number with prec decimals.
func Num(p *float64, prec int) string {
	if missing(p) {
		return None
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

// Score writes a judge score (on the judge's own scale) with two decimals.
func Score(p *float64) string { return Num(p, 2) }

// Overall writes a 0–100 overall score with one decimal.
func Overall(p *float64) string { return Num(p, 1) }

// Pct writes a fraction 0–1 as a percentage with one decimal.
func Pct(p *float64) string {
	if missing(p) {
		return None
	}
	return strconv.FormatFloat(*p*100, 'f', 1, 64) + "%"
}

// USD writes money: cents above a cent, five decimals below (model calls
// cost fractions of a cent), "$0" for nothing spent.
func USD(p *float64) string {
	if missing(p) {
		return None
	}
	switch v := *p; {
	case v == 0:
		return "$0"
	case math.Abs(v) < 0.01:
		return "$" + strconv.FormatFloat(v, 'f', 5, 64)
	default:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// Ms writes a duration in milliseconds, in seconds from 10 s on.
func Ms(p *float64) string {
	if missing(p) {
		return None
	}
	if *p >= 10_000 {
		return strconv.FormatFloat(*p/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(*p, 'f', 0, 64) + " ms"
}

// MsInt is Ms for whole milliseconds.
func MsInt(p *int64) string {
	if p == nil {
		return None
	}
	v := float64(*p)
	return Ms(&v)
}

// Int writes a whole number.
func Int(p *int64) string {
	if p == nil {
		return None
	}
	return strconv.FormatInt(*p, 10)
}

// CI writes a mean with its 95 % interval: "72.4 [65.1, 79.0]".
func CI(mean, lo, hi float64, prec int) string {
	return Num(&mean, prec) + " [" + Num(&lo, prec) + ", " + Num(&hi, prec) + "]"
}

// P writes a p-value; NaN (no test could be made) is None.
func P(p float64) string {
	if math.IsNaN(p) {
		return None
	}
	if p < 0.001 {
		return "< 0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// Duration writes a time left or taken, to the second: "1h02m", "3m05s", "42s".
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return strconv.Itoa(h) + "h" + pad(m) + "m"
	case m > 0:
		return strconv.Itoa(m) + "m" + pad(s) + "s"
	}
	return strconv.Itoa(s) + "s"
}

func pad(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Tokens writes a count of tokens (a context window) with thousands
// separators, "131,072"; 0 (not reported) is None.
func Tokens(n int64) string {
	if n <= 0 {
		return None
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
