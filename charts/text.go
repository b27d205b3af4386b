package charts

import (
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// clean makes s safe to embed in XML/HTML text: invalid UTF-8 becomes
// U+FFFD, control characters become spaces, and characters XML forbids are
// replaced. It does not escape markup; see esc.
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			b.WriteByte(' ')
		case r == 0xFFFE || r == 0xFFFF:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// label normalises a user string for display: cleaned, whitespace runs
// collapsed to one space, trimmed.
func label(s string) string {
	s = clean(s)
	if !strings.ContainsAny(s, " \u00a0\u2028\u2029\u3000") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// esc cleans and escapes s for use in SVG text or attribute values.
func esc(s string) string { return html.EscapeString(clean(s)) }

// runeWidth estimates a glyph's advance in em for a sans-serif UI font.
// There are no font metrics on the server; this errs on the wide side.
func runeWidth(r rune) float64 {
	switch {
	case r >= 0x1100 && (r <= 0x115f || (r >= 0x2e80 && r <= 0xa4cf) ||
		(r >= 0xac00 && r <= 0xd7a3) || (r >= 0xf900 && r <= 0xfaff) ||
		(r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) || (r >= 0x1f300 && r <= 0x1faff) ||
		r >= 0x20000):
		return 1.0
	case strings.ContainsRune("ijl.,:;'|!I ", r):
		return 0.32
	case strings.ContainsRune("tfr()[]{}/\\\"`", r):
		return 0.44
	case strings.ContainsRune("<>=+~&#_^", r):
		return 0.84
	case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '@' || r == '%':
		return 0.92
	case r >= 'A' && r <= 'Z':
		return 0.74
	case r >= '0' && r <= '9':
		return 0.64
	default:
		return 0.62
	}
}

// textWidth estimates the rendered width of s in px at the given font size.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w * size
}

// truncate shortens s (already normalised) so it fits maxW px at size,
// ending it with an ellipsis when cut.
func truncate(s string, maxW, size float64) string {
	if textWidth(s, size) <= maxW {
		return s
	}
	budget := maxW - runeWidth('…')*size
	if budget < 0 {
		return ""
	}
	w := 0.0
	for i, r := range s {
		w += runeWidth(r) * size
		if w > budget {
			return strings.TrimRight(s[:i], " ") + ellipsis
		}
	}
	return s
}

// ---- numbers --------------------------------------------------------------

// num formats a coordinate: one decimal, no trailing zeros, never "-0".
func num(v float64) string {
	if !finite(v) {
		return "0"
	}
	v = math.Round(v*10) / 10
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// formatNum formats a data value with dec decimals; magnitudes of a million
// and more use SI suffixes (k M G T) or exponent notation.
func formatNum(v float64, dec int) string {
	if !finite(v) {
		return "–"
	}
	a := math.Abs(v)
	if a >= 1e6 {
		sfx := []string{"M", "G", "T"}
		d := 1e6
		for _, s := range sfx {
			if a < d*1000 {
				return trimZeros(strconv.FormatFloat(v/d, 'f', 2, 64)) + s
			}
			d *= 1000
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	dec = max(0, min(dec, 10))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.TrimLeft(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// valueDecimals picks decimals showing about three significant digits of
// the largest magnitude in a chart.
func valueDecimals(maxAbs float64) int {
	if !finite(maxAbs) || maxAbs == 0 {
		return 2
	}
	return max(0, min(8, 2-int(math.Floor(math.Log10(maxAbs)))))
}

// decimalsFor lowers dec to the fewest decimals that still show every
// value exactly (integers get none), so "95" is not printed as "95.0".
func decimalsFor(dec int, vals []float64) int {
	for d := 0; d < dec; d++ {
		p := math.Pow(10, float64(d))
		ok := true
		for _, v := range vals {
			if !finite(v) || math.Abs(v) >= 1e6 {
				continue
			}
			if math.Abs(v-math.Round(v*p)/p) > 1e-9*math.Max(1, math.Abs(v)) {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
	return dec
}
