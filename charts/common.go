package charts

import (
	"html"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Options tunes a chart. The zero value gives sensible defaults everywhere;
// fields that do not apply to a chart kind are ignored.
type Options struct {
	// Width is the natural width in px (the viewBox width); 0 means 800.
	// The SVG shrinks to fit narrower containers but never grows beyond it.
	Width int
	// Height is the total height in px. 0 derives it from the content
	// (rows for bars, distributions and heat maps) or uses 400 (scatter,
	// trend).
	Height int

	// Min and Max fix the value axis (x for BarsCI and Distribution, y for
	// ScatterPareto and Trend, the colour scale for Heatmap). nil means
	// "from the data", rounded out to nice tick values. Marks outside a fixed
	// range are clamped to the plot edge.
	Min, Max *float64
	// Unit is appended to value labels and value-axis ticks, e.g. "%" or " s".
	Unit string
	// Format, if set, formats every value-axis number (ticks, labels,
	// tooltips) instead of the built-in formatting; Unit is then not added.
	// Its output is escaped like any other text.
	Format func(float64) string

	// XUnit and XFormat are Unit and Format for the x axis of ScatterPareto
	// and the numeric x axis of Trend.
	XUnit   string
	XFormat func(float64) string
	// LogX uses a logarithmic x axis in ScatterPareto (useful for costs
	// spanning orders of magnitude). It falls back to linear when any x is
	// not positive.
	LogX bool

	// Reverse flips the Heatmap colour scale, for metrics where lower is
	// better (cost, latency): the "best" colour then marks the minimum.
	Reverse bool

	// Refs are labelled reference lines (targets, baselines) and Bands are
	// shaded ranges on the value axis of BarsCI, Distribution, ScatterPareto
	// and Trend. They are included in the automatic axis range.
	Refs  []RefLine
	Bands []Band

	// HideTitle omits the visible title text (it stays in <title> and
	// aria-label), for pages that already show a heading.
	HideTitle bool
}

// RefLine is a labelled reference value drawn across the plot, e.g. a
// pass threshold or a baseline score.
type RefLine struct {
	Value float64
	Label string
}

// Band is a labelled shaded range on the value axis, e.g. an acceptable
// range or a baseline's confidence interval.
type Band struct {
	Lo, Hi float64
	Label  string
}

const (
	defaultWidth  = 800
	defaultHeight = 400
	fontSize      = 12.0
	smallFont     = 11.0
	titleFont     = 14.0
	pad           = 10.0
	fontFamily    = "system-ui,-apple-system,Segoe UI,Roboto,Helvetica Neue,Arial,sans-serif"
	ellipsis      = "…"
	// colMark is the main mark colour; colFront highlights the Pareto front.
	colMark  = "#3c71f7"
	colFront = "#e0681f"
	// domainLimit keeps axis arithmetic finite for absurd inputs.
	domainLimit = 1e300
)

// palette holds mid-tone series colours that read on light and dark pages.
var palette = []string{
	"#3c71f7", // blue
	"#e0681f", // orange
	"#0a9fb5", // cyan
	"#9062ca", // violet
	"#d39d00", // amber
	"#4a9d2a", // green
	"#d6455d", // rose
	"#7b8495", // grey
	"#b0703a", // brown
	"#2f9e8f", // teal
}

func seriesColor(i int) string { return palette[i%len(palette)] }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// ---- options --------------------------------------------------------------

func (o Options) width() float64 {
	if o.Width <= 0 {
		return defaultWidth
	}
	return math.Max(float64(o.Width), 160)
}

// height returns the fixed height, or 0 when it should be derived.
func (o Options) height() float64 {
	if o.Height <= 0 {
		return 0
	}
	return math.Max(float64(o.Height), 80)
}

// bounds returns the fixed value-axis bounds (NaN when not fixed). A
// reversed or degenerate pair is ignored.
func (o Options) bounds() (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	if o.Min != nil && finite(*o.Min) {
		lo = clamp(*o.Min, -domainLimit, domainLimit)
	}
	if o.Max != nil && finite(*o.Max) {
		hi = clamp(*o.Max, -domainLimit, domainLimit)
	}
	if finite(lo) && finite(hi) && lo >= hi {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// titleHeight is the vertical space taken by the visible title.
func (o Options) titleHeight(title string) float64 {
	if o.HideTitle || label(title) == "" {
		return 0
	}
	return 24
}

// valueFmt formats a value-axis number with dec decimals (Unit appended) or
// with the caller's Format.
func (o Options) valueFmt(v float64, dec int) string {
	if o.Format != nil {
		return label(o.Format(v))
	}
	return formatNum(v, dec) + unit(o.Unit)
}

func (o Options) xFmt(v float64, dec int) string {
	if o.XFormat != nil {
		return label(o.XFormat(v))
	}
	return formatNum(v, dec) + unit(o.XUnit)
}

// unit cleans a unit suffix, keeping a deliberate leading space (" ms").
func unit(u string) string {
	lead := strings.HasPrefix(u, " ")
	u = label(u)
	if lead && u != "" {
		u = " " + u
	}
	return u
}

// refExtent adds reference lines and bands to a value extent.
func (o Options) refExtent(e *extent) {
	for _, r := range o.Refs {
		e.add(r.Value)
	}
	for _, b := range o.Bands {
		if finite(b.Lo) && finite(b.Hi) {
			e.add(b.Lo, b.Hi)
		}
	}
}

func (o Options) hasRefLabels() bool {
	for _, r := range o.Refs {
		if finite(r.Value) && label(r.Label) != "" {
			return true
		}
	}
	for _, b := range o.Bands {
		if finite(b.Lo) && finite(b.Hi) && label(b.Label) != "" {
			return true
		}
	}
	return false
}

// ---- text -----------------------------------------------------------------

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

// ---- SVG writing ----------------------------------------------------------

// canvas accumulates SVG markup.
type canvas struct {
	strings.Builder
}

func (c *canvas) w(parts ...string) {
	for _, p := range parts {
		c.WriteString(p)
	}
}

// open writes the <svg> start tag with title and description.
func (c *canvas) open(kind string, width, height float64, title, desc string) {
	t := label(title)
	name := t
	if name == "" {
		name = kind + " chart"
	}
	W, H := num(width), num(height)
	c.w(`<svg xmlns="http://www.w3.org/2000/svg" class="tb-chart tb-chart-`, kind,
		`" viewBox="0 0 `, W, ` `, H, `" width="`, W, `" height="`, H,
		`" preserveAspectRatio="xMinYMin meet" role="img" aria-label="`, esc(name),
		`" font-family="`, fontFamily, `" font-size="12" fill="currentColor"`,
		` style="width:100%;max-width:`, W, `px;height:auto;display:block;overflow:visible">`)
	c.w(`<title>`, esc(name), `</title><desc>`, esc(desc), `</desc>`)
}

// visibleTitle draws the title text at the top left.
func (c *canvas) visibleTitle(title string, o Options, width float64) {
	if o.titleHeight(title) == 0 {
		return
	}
	c.w(`<text class="tb-title" x="`, num(pad), `" y="`, num(pad+12), `" font-size="14" font-weight="600">`,
		esc(truncate(label(title), width-2*pad, titleFont)), `</text>`)
}

func (c *canvas) close() template.HTML {
	c.w(`</svg>`)
	return template.HTML(c.String())
}

// text writes a text element; s is escaped. extra holds literal attributes.
func (c *canvas) text(x, y float64, anchor, extra, s string) {
	c.w(`<text x="`, num(x), `" y="`, num(y), `"`)
	if anchor != "" && anchor != "start" {
		c.w(` text-anchor="`, anchor, `"`)
	}
	if extra != "" {
		c.w(` `, extra)
	}
	c.w(`>`, esc(s), `</text>`)
}

// noData renders the small placeholder chart for empty input.
func noData(kind, title string, o Options) template.HTML {
	W := o.width()
	th := o.titleHeight(title)
	H := th + 60
	if h := o.height(); h > 0 {
		H = h
	}
	var c canvas
	c.open(kind, W, H, title, "No data.")
	c.visibleTitle(title, o, W)
	c.w(`<rect class="tb-nodata" x="`, num(pad), `" y="`, num(th+pad), `" width="`, num(W-2*pad), `" height="`, num(H-th-2*pad),
		`" rx="4" fill="none" stroke="currentColor" stroke-opacity=".25" stroke-dasharray="4 3"/>`)
	c.text(W/2, th+(H-th)/2, "middle", `dy=".35em" fill-opacity=".65"`, "No data")
	return c.close()
}

// refs draws bands and reference lines. pos maps a value to a pixel on the
// value axis; vertical is true when the value axis is horizontal (lines are
// vertical). (a0,a1) is the plot extent across the lines.
func (c *canvas) bands(o Options, ax axis, pos func(float64) float64, vertical bool, a0, a1 float64) {
	for _, b := range o.Bands {
		if !finite(b.Lo) || !finite(b.Hi) {
			continue
		}
		p0, p1 := pos(b.Lo), pos(b.Hi)
		if p0 > p1 {
			p0, p1 = p1, p0
		}
		c.w(`<g class="tb-band"><title>`, esc(bandTitle(b, o, ax)), `</title>`)
		if vertical {
			c.w(`<rect x="`, num(p0), `" y="`, num(a0), `" width="`, num(p1-p0), `" height="`, num(a1-a0), `" fill="currentColor" fill-opacity=".07"/>`)
			if l := label(b.Label); l != "" {
				c.text(p0+3, a0-4, "", `font-size="11" fill-opacity=".7"`, truncate(l, 160, smallFont))
			}
		} else {
			c.w(`<rect x="`, num(a0), `" y="`, num(p0), `" width="`, num(a1-a0), `" height="`, num(p1-p0), `" fill="currentColor" fill-opacity=".07"/>`)
			if l := label(b.Label); l != "" {
				c.text(a0+4, p0+12, "", `font-size="11" fill-opacity=".7"`, truncate(l, 200, smallFont))
			}
		}
		c.w(`</g>`)
	}
}

func bandTitle(b Band, o Options, ax axis) string {
	s := o.valueFmt(b.Lo, ax.dec+1) + " – " + o.valueFmt(b.Hi, ax.dec+1)
	if l := label(b.Label); l != "" {
		s = l + ": " + s
	}
	return s
}

func (c *canvas) refLines(o Options, ax axis, pos func(float64) float64, vertical bool, a0, a1 float64) {
	for _, r := range o.Refs {
		if !finite(r.Value) {
			continue
		}
		p := pos(r.Value)
		l := label(r.Label)
		t := o.valueFmt(r.Value, ax.dec+1)
		if l != "" {
			t = l + ": " + t
		}
		c.w(`<g class="tb-ref"><title>`, esc(t), `</title>`)
		if vertical {
			c.w(`<line x1="`, num(p), `" y1="`, num(a0), `" x2="`, num(p), `" y2="`, num(a1), `" stroke="currentColor" stroke-opacity=".7" stroke-width="1.25" stroke-dasharray="5 3"/>`)
			if l != "" {
				c.text(p, a0-4, "middle", `font-size="11" fill-opacity=".8"`, truncate(l, 160, smallFont))
			}
		} else {
			c.w(`<line x1="`, num(a0), `" y1="`, num(p), `" x2="`, num(a1), `" y2="`, num(p), `" stroke="currentColor" stroke-opacity=".7" stroke-width="1.25" stroke-dasharray="5 3"/>`)
			if l != "" {
				c.text(a1-2, p-4, "end", `font-size="11" fill-opacity=".8"`, truncate(l, 200, smallFont))
			}
		}
		c.w(`</g>`)
	}
}

// xTicks draws vertical grid lines and tick labels under a horizontal value
// axis spanning [x0,x1] × [y0,y1].
func (c *canvas) xTicks(ax axis, x0, x1, y0, y1 float64, lab func(float64) string) {
	c.w(`<g class="tb-grid" stroke="currentColor" stroke-opacity=".12">`)
	for _, t := range ax.ticks {
		x := x0 + ax.frac(t)*(x1-x0)
		c.w(`<line x1="`, num(x), `" y1="`, num(y0), `" x2="`, num(x), `" y2="`, num(y1), `"/>`)
	}
	c.w(`</g><g class="tb-axis" font-size="11" fill-opacity=".75" text-anchor="middle">`)
	for _, t := range ax.ticks {
		x := x0 + ax.frac(t)*(x1-x0)
		c.w(`<text class="tb-tick" x="`, num(x), `" y="`, num(y1+14), `">`, esc(lab(t)), `</text>`)
	}
	c.w(`</g>`)
	c.w(`<line class="tb-baseline" x1="`, num(x0), `" y1="`, num(y1), `" x2="`, num(x1), `" y2="`, num(y1), `" stroke="currentColor" stroke-opacity=".35"/>`)
}

// yTicks draws horizontal grid lines and tick labels left of a vertical
// value axis spanning [x0,x1] × [y0,y1] (y1 is the bottom).
func (c *canvas) yTicks(ax axis, x0, x1, y0, y1 float64, lab func(float64) string) {
	c.w(`<g class="tb-grid" stroke="currentColor" stroke-opacity=".12">`)
	for _, t := range ax.ticks {
		y := y1 - ax.frac(t)*(y1-y0)
		c.w(`<line x1="`, num(x0), `" y1="`, num(y), `" x2="`, num(x1), `" y2="`, num(y), `"/>`)
	}
	c.w(`</g><g class="tb-axis" font-size="11" fill-opacity=".75" text-anchor="end">`)
	for _, t := range ax.ticks {
		y := y1 - ax.frac(t)*(y1-y0)
		c.w(`<text class="tb-tick" x="`, num(x0-6), `" y="`, num(y), `" dy=".35em">`, esc(lab(t)), `</text>`)
	}
	c.w(`</g>`)
}

// tickLabelWidth is the widest tick label in px (small font).
func tickLabelWidth(ax axis, lab func(float64) string) float64 {
	w := 0.0
	for _, t := range ax.ticks {
		w = math.Max(w, textWidth(lab(t), smallFont))
	}
	return w
}

// quantile returns the type-7 (linear interpolation) quantile of sorted xs.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	h := p * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// summaryList joins items for a <desc>, capping the count.
func summaryList(items []string, maxItems int) string {
	if len(items) > maxItems {
		rest := len(items) - maxItems
		items = append(items[:maxItems:maxItems], "and "+strconv.Itoa(rest)+" more")
	}
	return strings.Join(items, "; ")
}

// plural formats a count with a singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// sortedFinite returns the finite values of vs, sorted.
func sortedFinite(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if finite(v) {
			out = append(out, v)
		}
	}
	sort.Float64s(out)
	return out
}
