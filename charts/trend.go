package charts

import (
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// XY is one observation of a Trend line: X positions it (a run index or a
// Unix time), XLabel names that position on the axis (e.g. a run name or
// date; the first non-empty label per X wins), Y is the value. A non-finite
// Y leaves a gap in the line; a non-finite X drops the point.
type XY struct {
	X      float64
	XLabel string
	Y      float64
}

// Line is one named series of a Trend chart.
type Line struct {
	Label  string
	Points []XY
}

// Trend renders one line per series over runs or time, with markers and
// tooltips per point (while they fit: up to 300 points, 8 px apart), a legend when there is more than
// one line, and optional reference lines (thresholds) and bands (Options
// Refs, Bands) on the y axis. When any point has an XLabel the x axis shows
// those labels at the data positions (thinned to avoid overlap); otherwise
// it shows nice numeric ticks (XUnit/XFormat). Options Min/Max, Unit and
// Format apply to the y axis.
func Trend(title string, lines []Line, opt Options) template.HTML {
	type pt struct {
		x, y float64
	}
	type series struct {
		label string // as given, "" when unnamed
		name  string // label, or "series N" when unnamed
		pts   []pt
		n     int // points with a finite y
	}
	ss := make([]series, len(lines))
	var ex, ey extent
	xLabels := map[float64]string{}
	var allX []float64
	total := 0
	for i, l := range lines {
		s := series{label: label(l.Label), name: label(l.Label)}
		if s.name == "" {
			s.name = "series " + strconv.Itoa(i+1)
		}
		for _, p := range l.Points {
			if !finite(p.X) {
				continue
			}
			x := clamp(p.X, -domainLimit, domainLimit)
			if x == 0 {
				x = 0 // fold -0 into 0 for the label map
			}
			y := p.Y
			if finite(y) {
				y = clamp(y, -domainLimit, domainLimit)
				ey.add(y)
				total++
				s.n++
			}
			// Runs with a missing value still belong on the x axis.
			ex.add(x)
			allX = append(allX, x)
			if lb := label(p.XLabel); lb != "" && xLabels[x] == "" {
				xLabels[x] = lb
			}
			s.pts = append(s.pts, pt{x, y})
		}
		sort.SliceStable(s.pts, func(a, b int) bool { return s.pts[a].x < s.pts[b].x })
		ss[i] = s
	}
	if total == 0 {
		return noData("trend", title, opt)
	}
	opt.refExtent(&ey)

	W := opt.width()
	H := opt.height()
	if H == 0 {
		H = defaultHeight
	}

	// Legend layout (wrapping). A series without data has nothing to point
	// to: it is left out (the description still names it), and the others
	// keep their colours.
	type entry struct {
		x, y  float64
		label string
		color string
	}
	var legend []entry
	top := pad + opt.titleHeight(title)
	withData, named := 0, false
	for _, s := range ss {
		if s.n > 0 {
			withData++
			named = named || s.label != ""
		}
	}
	if withData > 1 || (withData == 1 && named) {
		lx, ly := pad, top+8
		for i, s := range ss {
			if s.n == 0 {
				continue
			}
			l := truncate(s.name, math.Min(200, W-2*pad-38), smallFont)
			w := 22 + textWidth(l, smallFont) + 16
			if lx > pad && lx+w > W-pad {
				lx, ly = pad, ly+18
			}
			legend = append(legend, entry{lx, ly, l, seriesColor(i)})
			lx += w
		}
		top = ly + 14
	}
	if opt.hasRefLabels() {
		top += 4
	}
	bottom := H - pad - 20
	if bottom-top < 40 {
		bottom = top + 40
		H = bottom + pad + 20
	}

	fixLo, fixHi := opt.bounds()
	yax := linearAxis(ey.lo, ey.hi, fixLo, fixHi, int(math.Max(3, (bottom-top)/50)))
	ylab := func(v float64) string { return opt.valueFmt(v, yax.dec) }
	var ysv []float64
	for _, s := range ss {
		for _, p := range s.pts {
			if finite(p.y) {
				ysv = append(ysv, p.y)
			}
		}
	}
	ydec := decimalsFor(valueDecimals(ey.maxAbs()), ysv)
	left := pad + tickLabelWidth(yax, ylab) + 8
	right := W - pad - 8
	py := func(v float64) float64 { return bottom - yax.frac(v)*(bottom-top) }

	// X axis: labelled positions or numeric ticks. Labelled plots keep an
	// inner margin so the first and last points are not on the frame.
	// With labels, every distinct x that has data gets a (thinned) tick;
	// unlabelled ones show the number.
	labelled := len(xLabels) > 0
	var xs []float64
	if labelled {
		xs = slices.Clone(allX)
		slices.Sort(xs)
		xs = slices.Compact(xs)
	}
	var xax axis
	inner := 0.0
	if labelled {
		xax = axis{lo: ex.lo, hi: ex.hi}
		if ex.lo == ex.hi {
			xax.lo, xax.hi = ex.lo-1, ex.hi+1
		}
		inner = 14
	} else {
		xax = linearAxis(ex.lo, ex.hi, math.NaN(), math.NaN(), int(math.Max(3, (right-left)/90)))
	}
	px := func(v float64) float64 { return left + inner + xax.frac(v)*(right-left-2*inner) }
	xdec := decimalsFor(valueDecimals(ex.maxAbs()), allX)
	xname := func(x float64) string {
		if l := xLabels[x]; l != "" {
			return l
		}
		return opt.xFmt(x, xdec)
	}

	// Description.
	var items []string
	for _, s := range ss {
		var first, last *pt
		n := 0
		for k := range s.pts {
			if finite(s.pts[k].y) {
				if first == nil {
					first = &s.pts[k]
				}
				last = &s.pts[k]
				n++
			}
		}
		if n == 0 {
			items = append(items, s.name+": no data")
			continue
		}
		items = append(items, s.name+": "+plural(n, "point", "points")+", from "+opt.valueFmt(first.y, ydec)+" ("+xname(first.x)+") to "+
			opt.valueFmt(last.y, ydec)+" ("+xname(last.x)+")")
	}
	desc := "Line chart of " + plural(len(ss), "series", "series") + ". " + summaryList(items, 30) + "."

	var c canvas
	c.open("trend", W, H, title, desc)
	c.visibleTitle(title, opt, W)
	if len(legend) > 0 {
		c.w(`<g class="tb-legend" font-size="11">`)
		for _, e := range legend {
			c.w(`<line x1="`, num(e.x), `" y1="`, num(e.y), `" x2="`, num(e.x+16), `" y2="`, num(e.y), `" stroke="`, e.color, `" stroke-width="2.5"/>`)
			c.w(`<circle cx="`, num(e.x+8), `" cy="`, num(e.y), `" r="3" fill="`, e.color, `"/>`)
			c.text(e.x+22, e.y, "", `dy=".35em"`, e.label)
		}
		c.w(`</g>`)
	}
	c.bands(opt, yax, py, false, left, right)
	c.yTicks(yax, left, right, top, bottom, ylab)
	if labelled {
		c.xLabels(xs, px, xname, left, right, inner, top, bottom, W)
		c.w(`<line class="tb-baseline" x1="`, num(left), `" y1="`, num(bottom), `" x2="`, num(right), `" y2="`, num(bottom), `" stroke="currentColor" stroke-opacity=".35"/>`)
	} else {
		c.xTicks(xax, left, right, top, bottom, func(v float64) string { return opt.xFmt(v, xax.dec) })
	}
	if yax.lo < 0 && yax.hi > 0 {
		c.w(`<line class="tb-zero" x1="`, num(left), `" y1="`, num(py(0)), `" x2="`, num(right), `" y2="`, num(py(0)), `" stroke="currentColor" stroke-opacity=".35"/>`)
	}
	c.refLines(opt, yax, py, false, left, right)

	// Markers (with per-point tooltips) only while they stay legible: at
	// most 300 in all and at least 8 px apart along a line.
	maxPts := 0
	for _, s := range ss {
		maxPts = max(maxPts, len(s.pts))
	}
	markers := total <= 300 && (right-left)/float64(max(maxPts, 1)) >= 8
	for i, s := range ss {
		if s.n == 0 {
			continue
		}
		col := seriesColor(i)
		name := s.name
		var d strings.Builder
		pen := false
		for k, p := range s.pts {
			if !finite(p.y) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			d.WriteString(cmd + num(px(p.x)) + " " + num(py(p.y)))
			// An isolated point would be invisible as a path: mark it.
			isolated := !pen && (k+1 >= len(s.pts) || !finite(s.pts[k+1].y))
			if isolated && !markers {
				d.WriteString("h0")
			}
			pen = true
		}
		c.w(`<g class="tb-series"><title>`, esc(name), `</title>`)
		if d.Len() > 0 {
			c.w(`<path class="tb-line" d="`, d.String(), `" fill="none" stroke="`, col, `" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>`)
		}
		if markers {
			for _, p := range s.pts {
				if !finite(p.y) {
					continue
				}
				c.w(`<circle class="tb-point" cx="`, num(px(p.x)), `" cy="`, num(py(p.y)), `" r="3.5" fill="`, col,
					`" stroke="currentColor" stroke-opacity=".6" stroke-width=".8"><title>`, esc(name+" · "+xname(p.x)+": "+opt.valueFmt(p.y, ydec)), `</title></circle>`)
			}
		}
		c.w(`</g>`)
	}
	return c.close()
}

// xLabels draws the labelled x positions xs (sorted, distinct) under a plot
// spanning [left,right] × [top,bottom] in a chart W wide. Labels are cut to
// the room between positions (down to a readable minimum), thinned to every
// step-th, kept inside the chart, and any that would still touch its
// neighbour is dropped, the last one (the latest run) being kept over the
// one before it.
func (c *canvas) xLabels(xs []float64, px func(float64) float64, name func(float64) string, left, right, inner, top, bottom, W float64) {
	gap := right - left - 2*inner
	if len(xs) > 1 {
		// The narrowest room between two positions, but not below the mean:
		// a cluster of close runs thins rather than cutting every label.
		minGap := math.Inf(1)
		for i := 1; i < len(xs); i++ {
			minGap = math.Min(minGap, px(xs[i])-px(xs[i-1]))
		}
		gap = math.Max(math.Min(minGap, gap/float64(len(xs)-1)), 1)
	}
	const space = 8.0 // between two labels
	maxW := clamp(gap-space, 48, 120)
	txt := make([]string, len(xs))
	widest := 0.0
	for i, x := range xs {
		txt[i] = truncate(name(x), maxW, smallFont)
		widest = math.Max(widest, textWidth(txt[i], smallFont))
	}
	step := max(1, int(math.Ceil((widest+space)/gap)))
	type placed struct {
		i         int
		x, lo, hi float64
	}
	var ps []placed
	for i := 0; i < len(xs); i++ {
		if i%step != 0 && i != len(xs)-1 {
			continue
		}
		w := textWidth(txt[i], smallFont)
		x := clamp(px(xs[i]), pad+w/2, W-pad-w/2)
		p := placed{i, x, x - w/2, x + w/2}
		if len(ps) > 0 && p.lo < ps[len(ps)-1].hi+space {
			if i != len(xs)-1 || len(ps) == 1 {
				continue
			}
			ps = ps[:len(ps)-1] // the latest run's label wins over the one before
			if p.lo < ps[len(ps)-1].hi+space {
				continue
			}
		}
		ps = append(ps, p)
	}
	c.w(`<g class="tb-grid" stroke="currentColor" stroke-opacity=".12">`)
	for _, p := range ps {
		x := px(xs[p.i])
		c.w(`<line x1="`, num(x), `" y1="`, num(top), `" x2="`, num(x), `" y2="`, num(bottom), `"/>`)
	}
	c.w(`</g><g class="tb-axis" font-size="11" fill-opacity=".75" text-anchor="middle">`)
	for _, p := range ps {
		c.w(`<text class="tb-tick" x="`, num(p.x), `" y="`, num(bottom+14), `"><title>`, esc(name(xs[p.i])), `</title>`, esc(txt[p.i]), `</text>`)
	}
	c.w(`</g>`)
}
