package charts

import (
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Series is a named set of values, e.g. one model's per-item scores.
type Series struct {
	Label  string
	Values []float64
}

// boxStats summarises a sorted sample (Tukey box plot).
type boxStats struct {
	n                     int
	min, q1, med, q3, max float64
	lowW, hiW             float64 // whisker ends: most extreme values within 1.5 IQR
	mean                  float64
}

func computeBox(xs []float64) boxStats {
	s := boxStats{n: len(xs)}
	if s.n == 0 {
		return s
	}
	s.min, s.max = xs[0], xs[len(xs)-1]
	s.q1, s.med, s.q3 = quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)
	iqr := s.q3 - s.q1
	loF, hiF := s.q1-1.5*iqr, s.q3+1.5*iqr
	s.lowW, s.hiW = s.q1, s.q3
	for _, v := range xs {
		if v >= loF {
			s.lowW = math.Min(v, s.q1)
			break
		}
	}
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i] <= hiF {
			s.hiW = math.Max(xs[i], s.q3)
			break
		}
	}
	sum := 0.0
	for _, v := range xs {
		sum += v
	}
	s.mean = sum / float64(s.n)
	if !finite(s.mean) { // overflow with huge values
		s.mean = s.med
	}
	return s
}

// Distribution renders one row per series on a shared value axis: a
// histogram (shaded) above a Tukey box plot — box from the first to the
// third quartile, a median bar, whiskers to the most extreme values within
// 1.5×IQR and outlier dots — with the median and sample size on the right.
// Data with few distinct values (pass/fail, Likert scales) is drawn as one
// spike per value instead of binned. Output size does not grow with the
// number of values: bins are aggregated and outlier dots merged per pixel.
// Options Min/Max, Unit, Format, Refs and Bands apply to the value axis.
func Distribution(title string, series []Series, opt Options) template.HTML {
	type row struct {
		label string
		xs    []float64
		st    boxStats
	}
	rows := make([]row, len(series))
	var ext extent
	for i, s := range series {
		xs := sortedFinite(s.Values)
		for j, v := range xs {
			xs[j] = clamp(v, -domainLimit, domainLimit)
		}
		rows[i] = row{label: label(s.Label), xs: xs, st: computeBox(xs)}
		if len(xs) > 0 {
			ext.add(xs[0], xs[len(xs)-1])
		}
	}
	if ext.n == 0 {
		return noData("distribution", title, opt)
	}
	opt.refExtent(&ext)

	W := opt.width()
	var meds []float64
	for _, r := range rows {
		if r.st.n > 0 {
			meds = append(meds, r.st.med, r.st.q1, r.st.q3)
		}
	}
	dec := decimalsFor(valueDecimals(ext.maxAbs()), meds)
	medTxt := make([]string, len(rows))
	nTxt := make([]string, len(rows))
	valueW, labelW := 0.0, 0.0
	for i, r := range rows {
		if r.st.n > 0 {
			medTxt[i] = opt.valueFmt(r.st.med, dec)
			nTxt[i] = " n=" + strconv.Itoa(r.st.n)
		} else {
			medTxt[i] = "no data"
		}
		valueW = math.Max(valueW, textWidth(medTxt[i], fontSize)+textWidth(nTxt[i], smallFont))
		labelW = math.Max(labelW, textWidth(r.label, fontSize))
	}
	valueW = math.Min(valueW, W*0.22)
	labelW = math.Min(labelW, W*0.34)
	x0 := pad + labelW + 8
	x1 := W - pad - valueW - 8
	plotW := x1 - x0

	top := pad + opt.titleHeight(title)
	if opt.hasRefLabels() {
		top += 16
	}
	const axisH, captionH = 22, 18
	rowH := 46.0
	H := top + float64(len(rows))*rowH + axisH + captionH + pad
	if h := opt.height(); h > 0 {
		H = h
		rowH = math.Max(8, (H-top-axisH-captionH-pad)/float64(len(rows)))
	}
	y1 := top + float64(len(rows))*rowH

	fixLo, fixHi := opt.bounds()
	ax := linearAxis(ext.lo, ext.hi, fixLo, fixHi, int(math.Max(3, plotW/90)))
	pos := func(v float64) float64 { return x0 + ax.frac(v)*plotW }

	items := make([]string, 0, len(rows))
	tips := make([]string, len(rows))
	for i, r := range rows {
		st := r.st
		var t string
		if st.n == 0 {
			t = r.label + ": no data"
		} else {
			f := func(v float64) string { return opt.valueFmt(v, dec) }
			t = r.label + ": n=" + strconv.Itoa(st.n) + ", median " + f(st.med) + ", mean " + f(st.mean) +
				", quartiles " + f(st.q1) + " – " + f(st.q3) + ", range " + f(st.min) + " – " + f(st.max)
		}
		tips[i] = t
		items = append(items, t)
	}
	desc := "Distribution of values per series (histogram and box plot), " +
		plural(len(rows), "series", "series") + ". " + summaryList(items, 40) + "."

	var c canvas
	c.open("distribution", W, H, title, desc)
	c.visibleTitle(title, opt, W)
	c.bands(opt, ax, pos, true, top, y1)
	c.xTicks(ax, x0, x1, top, y1, func(v float64) string { return opt.valueFmt(v, ax.dec) })

	nb := int(clamp(math.Floor(plotW/8), 10, 80))
	for i, r := range rows {
		ry := top + float64(i)*rowH
		yb := ry + rowH*0.55   // histogram baseline
		histH := rowH*0.55 - 4 // histogram height
		boxH := math.Min(10, rowH*0.25)
		cy := yb + 3 + boxH/2
		cy = math.Min(cy, ry+rowH-boxH/2)
		if i > 0 {
			c.w(`<line x1="`, num(pad), `" y1="`, num(ry), `" x2="`, num(W-pad), `" y2="`, num(ry), `" stroke="currentColor" stroke-opacity=".08"/>`)
		}
		c.w(`<g class="tb-row"><title>`, esc(tips[i]), `</title>`)
		c.text(x0-8, ry+rowH/2, "end", `dy=".35em"`, truncate(r.label, labelW, fontSize))
		if r.st.n > 0 {
			c.w(`<path class="tb-hist" d="`, histPath(r.xs, ax, pos, x0, x1, yb, histH, nb),
				`" fill="`, colMark, `" fill-opacity=".35" stroke="`, colMark, `" stroke-opacity=".7" stroke-width="1"/>`)
			drawBox(&c, r.st, r.xs, pos, cy, boxH)
		}
		c.w(`<text class="tb-value" x="`, num(x1+8), `" y="`, num(ry+rowH/2), `" dy=".35em"`)
		if r.st.n == 0 {
			c.w(` fill-opacity=".6"`)
		}
		c.w(`>`, esc(truncate(medTxt[i], valueW, fontSize)))
		if nTxt[i] != "" {
			c.w(`<tspan font-size="11" fill-opacity=".6">`, esc(nTxt[i]), `</tspan>`)
		}
		c.w(`</text></g>`)
	}
	c.refLines(opt, ax, pos, true, top, y1)
	c.text(pad, H-pad-2, "", `class="tb-caption" font-size="11" fill-opacity=".6"`,
		truncate("Shaded: histogram · box: quartiles · bar: median · whiskers: 1.5×IQR · dots: outliers · right: median, n", W-2*pad, smallFont))
	return c.close()
}

// histPath builds one closed path for a series' histogram with its
// baseline at yb and maximum height h. Few distinct values are drawn as
// spikes at each value; otherwise values are counted into nb equal bins
// over the axis domain. Values outside the domain are left out.
func histPath(xs []float64, ax axis, pos func(float64) float64, x0, x1, yb, h float64, nb int) string {
	var b strings.Builder
	// Distinct values (xs is sorted).
	type vc struct {
		v float64
		n int
	}
	var distinct []vc
	for _, v := range xs {
		if len(distinct) > 0 && distinct[len(distinct)-1].v == v {
			distinct[len(distinct)-1].n++
			continue
		}
		if len(distinct) > 32 {
			distinct = nil
			break
		}
		distinct = append(distinct, vc{v, 1})
	}
	if distinct != nil && len(distinct) <= 32 {
		maxN := 0
		for _, d := range distinct {
			maxN = max(maxN, d.n)
		}
		// Spike width: a bin's width, narrowed so neighbours never touch.
		sw := (x1 - x0) / float64(nb)
		for i := 1; i < len(distinct); i++ {
			sw = math.Min(sw, (pos(distinct[i].v)-pos(distinct[i-1].v))*0.7)
		}
		sw = math.Max(sw, 2)
		for _, d := range distinct {
			if !ax.log && (d.v < ax.lo || d.v > ax.hi) {
				continue
			}
			x := pos(d.v)
			y := yb - h*float64(d.n)/float64(maxN)
			l := clamp(x-sw/2, x0, x1-sw)
			b.WriteString("M" + num(l) + " " + num(yb) + "V" + num(y) + "H" + num(l+sw) + "V" + num(yb) + "Z")
		}
		if b.Len() == 0 {
			return "M0 0"
		}
		return b.String()
	}
	counts := make([]int, nb)
	bw := (ax.hi - ax.lo) / float64(nb)
	for _, v := range xs {
		if v < ax.lo || v > ax.hi {
			continue
		}
		k := int((v - ax.lo) / bw)
		counts[min(max(k, 0), nb-1)]++
	}
	maxN := 0
	for _, n := range counts {
		maxN = max(maxN, n)
	}
	if maxN == 0 {
		return "M0 0"
	}
	b.WriteString("M" + num(x0) + " " + num(yb))
	prev := yb
	for k, n := range counts {
		y := yb - h*float64(n)/float64(maxN)
		if y != prev {
			b.WriteString("V" + num(y))
			prev = y
		}
		b.WriteString("H" + num(x0+(x1-x0)*float64(k+1)/float64(nb)))
	}
	b.WriteString("V" + num(yb) + "Z")
	return b.String()
}

// drawBox draws the box plot for one series centred on cy.
func drawBox(c *canvas, st boxStats, xs []float64, pos func(float64) float64, cy, boxH float64) {
	xq1, xq3, xm := pos(st.q1), pos(st.q3), pos(st.med)
	xlw, xhw := pos(st.lowW), pos(st.hiW)
	ht := boxH / 2
	c.w(`<path class="tb-whisker" d="M`, num(xlw), ` `, num(cy), `H`, num(xq1), `M`, num(xq3), ` `, num(cy), `H`, num(xhw),
		`M`, num(xlw), ` `, num(cy-ht*0.7), `V`, num(cy+ht*0.7), `M`, num(xhw), ` `, num(cy-ht*0.7), `V`, num(cy+ht*0.7),
		`" stroke="currentColor" stroke-opacity=".75" fill="none"/>`)
	c.w(`<rect class="tb-box" x="`, num(xq1), `" y="`, num(cy-ht), `" width="`, num(xq3-xq1), `" height="`, num(boxH),
		`" fill="`, colMark, `" fill-opacity=".55" stroke="currentColor" stroke-opacity=".75"/>`)
	c.w(`<line class="tb-median" x1="`, num(xm), `" y1="`, num(cy-ht-2), `" x2="`, num(xm), `" y2="`, num(cy+ht+2), `" stroke="currentColor" stroke-width="2.5"/>`)
	// Outliers, merged per pixel so output stays small.
	var d strings.Builder
	last := math.Inf(-1)
	for _, v := range xs {
		if v >= st.lowW && v <= st.hiW {
			continue
		}
		x := math.Round(pos(v))
		if x == last {
			continue
		}
		last = x
		d.WriteString("M" + num(x) + " " + num(cy) + "h0")
	}
	if d.Len() > 0 {
		c.w(`<path class="tb-outliers" d="`, d.String(), `" stroke="currentColor" stroke-opacity=".5" stroke-width="3.5" stroke-linecap="round" fill="none"/>`)
	}
}
