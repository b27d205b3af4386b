package charts

import (
	"math"
	"sort"
	"strconv"
	"strings"
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
