package charts

import (
	"html/template"
	"math"
	"strconv"
)

// Bar is one row of a BarsCI chart.
type Bar struct {
	// Label names the row (e.g. a model); long labels are truncated on
	// screen, the full text is in the tooltip.
	Label string
	// Value is the bar length. A non-finite Value shows the row as "n/a".
	Value float64
	// Lo and Hi are the confidence-interval whisker ends. NaN (or equal to
	// Value) means no whisker on that side; they are swapped if reversed.
	Lo, Hi float64
	// N is the sample size shown next to the value; 0 hides it.
	N int
}

// BarsCI renders horizontal bars in input order (sort beforehand), one row
// per Bar, with the label on the left, the value and sample size on the
// right, confidence-interval whiskers, and a value axis with 1-2-5 ticks.
// Bars grow from zero (or from the axis edge when a fixed Min/Max excludes
// zero), so negative values extend left. Options Min/Max, Unit, Format,
// Refs and Bands apply to the value axis; Height fixes the total height.
func BarsCI(title string, bars []Bar, opt Options) template.HTML {
	type row struct {
		label     string
		v, lo, hi float64
		ok, ci    bool
		n         int
	}
	rows := make([]row, len(bars))
	var ext extent
	okCount := 0
	for i, b := range bars {
		r := row{label: label(b.Label), n: b.N}
		if finite(b.Value) {
			r.ok = true
			okCount++
			r.v = clamp(b.Value, -domainLimit, domainLimit)
			lo, hi := r.v, r.v
			if finite(b.Lo) {
				lo = clamp(b.Lo, -domainLimit, domainLimit)
			}
			if finite(b.Hi) {
				hi = clamp(b.Hi, -domainLimit, domainLimit)
			}
			if lo > hi {
				lo, hi = hi, lo
			}
			r.lo, r.hi, r.ci = lo, hi, lo != hi
			ext.add(r.v, lo, hi)
		}
		rows[i] = r
	}
	if okCount == 0 {
		return noData("bars", title, opt)
	}
	ext.add(0)
	opt.refExtent(&ext)

	W := opt.width()
	var all []float64
	for _, r := range rows {
		if r.ok {
			all = append(all, r.v, r.lo, r.hi)
		}
	}
	dec := decimalsFor(valueDecimals(ext.maxAbs()), all)

	// Right column: value and n.
	valTxt := make([]string, len(rows))
	nTxt := make([]string, len(rows))
	valueW := 0.0
	for i, r := range rows {
		if r.ok {
			valTxt[i] = opt.valueFmt(r.v, dec)
		} else {
			valTxt[i] = "n/a"
		}
		if r.n > 0 {
			nTxt[i] = " n=" + strconv.Itoa(r.n)
		}
		valueW = math.Max(valueW, textWidth(valTxt[i], fontSize)+textWidth(nTxt[i], smallFont))
	}
	valueW = math.Min(valueW, W*0.22)

	// Left column: labels.
	labelW := 0.0
	for _, r := range rows {
		labelW = math.Max(labelW, textWidth(r.label, fontSize))
	}
	labelW = math.Min(labelW, W*0.34)

	x0 := pad + labelW + 8
	x1 := W - pad - valueW - 8

	top := pad + opt.titleHeight(title)
	if opt.hasRefLabels() {
		top += 16
	}
	const axisH = 22
	rowH := 26.0
	H := top + float64(len(rows))*rowH + axisH + pad
	if h := opt.height(); h > 0 {
		H = h
		rowH = math.Max(4, (H-top-axisH-pad)/float64(len(rows)))
	}
	y1 := top + float64(len(rows))*rowH
	barH := math.Min(rowH*0.62, 18)

	fixLo, fixHi := opt.bounds()
	ax := linearAxis(ext.lo, ext.hi, fixLo, fixHi, int(math.Max(3, (x1-x0)/90)))
	pos := func(v float64) float64 { return x0 + ax.frac(v)*(x1-x0) }
	base := pos(clamp(0, ax.lo, ax.hi))

	// Description.
	items := make([]string, 0, len(rows))
	tips := make([]string, len(rows))
	for i, r := range rows {
		t := r.label + ": " + valTxt[i]
		if r.ok && r.ci {
			t += " (interval " + opt.valueFmt(r.lo, dec) + " – " + opt.valueFmt(r.hi, dec) + ")"
		}
		if r.n > 0 {
			t += ", n=" + strconv.Itoa(r.n)
		}
		tips[i] = t
		items = append(items, t)
	}
	desc := "Horizontal bar chart, " + plural(len(rows), "bar", "bars") + ". " + summaryList(items, 60) + "."

	var c canvas
	c.open("bars", W, H, title, desc)
	c.visibleTitle(title, opt, W)
	c.bands(opt, ax, pos, true, top, y1)
	c.xTicks(ax, x0, x1, top, y1, func(v float64) string { return opt.valueFmt(v, ax.dec) })
	if ax.lo < 0 && ax.hi > 0 {
		c.w(`<line class="tb-zero" x1="`, num(base), `" y1="`, num(top), `" x2="`, num(base), `" y2="`, num(y1), `" stroke="currentColor" stroke-opacity=".45"/>`)
	}
	for i, r := range rows {
		cy := top + (float64(i)+0.5)*rowH
		c.w(`<g class="tb-row"><title>`, esc(tips[i]), `</title>`)
		c.text(x0-8, cy, "end", `dy=".35em"`, truncate(r.label, labelW, fontSize))
		if r.ok {
			xv := pos(r.v)
			c.w(`<rect class="tb-bar" x="`, num(math.Min(base, xv)), `" y="`, num(cy-barH/2), `" width="`, num(math.Abs(xv-base)),
				`" height="`, num(barH), `" rx="2" fill="`, colMark, `" fill-opacity=".8"/>`)
			if r.ci {
				xl, xh := pos(r.lo), pos(r.hi)
				capH := math.Min(barH*0.4, 6)
				c.w(`<line class="tb-ci" x1="`, num(xl), `" y1="`, num(cy), `" x2="`, num(xh), `" y2="`, num(cy), `" stroke="currentColor" stroke-width="1.5"/>`)
				c.w(`<path class="tb-ci-cap" d="M`, num(xl), ` `, num(cy-capH), `V`, num(cy+capH), `M`, num(xh), ` `, num(cy-capH), `V`, num(cy+capH),
					`" stroke="currentColor" stroke-width="1.5" fill="none"/>`)
			}
		}
		c.w(`<text class="tb-value" x="`, num(x1+8), `" y="`, num(cy), `" dy=".35em"`)
		if !r.ok {
			c.w(` fill-opacity=".6"`)
		}
		c.w(`>`, esc(truncate(valTxt[i], valueW, fontSize)))
		if nTxt[i] != "" {
			c.w(`<tspan font-size="11" fill-opacity=".6">`, esc(nTxt[i]), `</tspan>`)
		}
		c.w(`</text></g>`)
	}
	c.refLines(opt, ax, pos, true, top, y1)
	return c.close()
}
