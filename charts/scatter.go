package charts

import (
	"html/template"
	"math"
	"sort"
	"strings"
)

// Point is one labelled point of a ScatterPareto chart.
type Point struct {
	Label string
	X, Y  float64
}

// ParetoFront returns the indexes (ascending) of the points that no other
// point dominates, where lower X and higher Y are better — e.g. X = cost,
// Y = score: the "best value" set. Point q dominates p when q.X <= p.X and
// q.Y >= p.Y with at least one strict. Exact duplicates do not dominate each
// other, so all copies of a front point are returned. Points with a NaN or
// infinite coordinate are ignored.
func ParetoFront(pts []Point) []int {
	idx := make([]int, 0, len(pts))
	for i, p := range pts {
		if finite(p.X) && finite(p.Y) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		pa, pb := pts[idx[a]], pts[idx[b]]
		if pa.X != pb.X {
			return pa.X < pb.X
		}
		return pa.Y > pb.Y
	})
	var front []int
	best := math.Inf(-1) // best Y among points with strictly smaller X
	for i := 0; i < len(idx); {
		j := i
		x := pts[idx[i]].X
		for j < len(idx) && pts[idx[j]].X == x {
			j++
		}
		gmax := pts[idx[i]].Y // groups are sorted by Y descending
		if gmax > best {
			for k := i; k < j && pts[idx[k]].Y == gmax; k++ {
				front = append(front, idx[k])
			}
			best = gmax
		}
		i = j
	}
	sort.Ints(front)
	return front
}

// ScatterPareto plots points (e.g. x = cost, lower is better; y = score,
// higher is better), highlights the Pareto front ("best value") — points
// marked and joined by a staircase line showing the best y reachable for a
// given x — and labels the front points (all points when there are few).
// Options Min/Max, Unit, Format, Refs and Bands apply to the y axis;
// XUnit, XFormat and LogX to the x axis. Points with non-finite coordinates
// are skipped. Thousands of points are merged per pixel (no tooltip for
// points off the front when there are more than 400).
func ScatterPareto(title, xLabel, yLabel string, pts []Point, opt Options) template.HTML {
	var ok []int
	var ex, ey extent
	for i, p := range pts {
		if finite(p.X) && finite(p.Y) {
			ok = append(ok, i)
			ex.add(p.X)
			ey.add(p.Y)
		}
	}
	if len(ok) == 0 {
		return noData("scatter", title, opt)
	}
	opt.refExtent(&ey)
	front := ParetoFront(pts)
	onFront := make(map[int]bool, len(front))
	for _, i := range front {
		onFront[i] = true
	}
	xl, yl := label(xLabel), label(yLabel)

	W := opt.width()
	H := opt.height()
	if H == 0 {
		H = defaultHeight
	}
	top := pad + opt.titleHeight(title) + 20 // legend line
	if opt.hasRefLabels() {
		top += 4
	}
	bottom := H - pad - 20
	if xl != "" {
		bottom -= 18
	}
	fixLo, fixHi := opt.bounds()
	yax := linearAxis(ey.lo, ey.hi, fixLo, fixHi, int(math.Max(3, (bottom-top)/50)))
	var xsv, ysv []float64
	for _, i := range ok {
		xsv = append(xsv, pts[i].X)
		ysv = append(ysv, pts[i].Y)
	}
	ydec := decimalsFor(valueDecimals(ey.maxAbs()), ysv)
	ylab := func(v float64) string { return opt.valueFmt(v, yax.dec) }
	left := pad + tickLabelWidth(yax, ylab) + 8
	if yl != "" {
		left += 18
	}
	right := W - pad - 12

	var xax axis
	if opt.LogX && ex.lo > 0 {
		xax = logAxis(ex.lo, ex.hi)
	} else {
		xax = linearAxis(ex.lo, ex.hi, math.NaN(), math.NaN(), int(math.Max(3, (right-left)/90)))
	}
	xdec := decimalsFor(valueDecimals(ex.maxAbs()), xsv)
	px := func(v float64) float64 { return left + xax.frac(v)*(right-left) }
	py := func(v float64) float64 { return bottom - yax.frac(v)*(bottom-top) }

	// Description.
	fx := func(v float64) string { return opt.xFmt(v, xdec) }
	fy := func(v float64) string { return opt.valueFmt(v, ydec) }
	tip := func(p Point) string {
		s := label(p.Label)
		if s != "" {
			s += ": "
		}
		xn, yn := xl, yl
		if xn == "" {
			xn = "x"
		}
		if yn == "" {
			yn = "y"
		}
		return s + xn + " " + fx(p.X) + ", " + yn + " " + fy(p.Y)
	}
	frontSorted := append([]int(nil), front...)
	sort.SliceStable(frontSorted, func(a, b int) bool {
		pa, pb := pts[frontSorted[a]], pts[frontSorted[b]]
		if pa.X != pb.X {
			return pa.X < pb.X
		}
		return frontSorted[a] < frontSorted[b]
	})
	var fItems, items []string
	for _, i := range frontSorted {
		fItems = append(fItems, tip(pts[i]))
	}
	for _, i := range ok {
		items = append(items, tip(pts[i]))
	}
	desc := "Scatter plot of " + plural(len(ok), "point", "points")
	if xl != "" || yl != "" {
		desc += " (x: " + xl + ", y: " + yl + ")"
	}
	desc += ". Pareto front, lower x and higher y is better: " + summaryList(fItems, 30) + "."
	if len(ok) <= 60 {
		desc += " All points: " + summaryList(items, 60) + "."
	}

	var c canvas
	c.open("scatter", W, H, title, desc)
	c.visibleTitle(title, opt, W)

	// Legend.
	ly := pad + opt.titleHeight(title) + 8
	c.w(`<g class="tb-legend" font-size="11">`)
	c.w(`<circle cx="`, num(pad+5), `" cy="`, num(ly), `" r="5" fill="`, colFront, `" stroke="currentColor" stroke-width="1.2"/>`)
	c.text(pad+14, ly, "", `dy=".35em"`, "Pareto front (best value)")
	if len(front) < len(ok) {
		lx := pad + 14 + textWidth("Pareto front (best value)", smallFont) + 18
		c.w(`<circle cx="`, num(lx), `" cy="`, num(ly), `" r="4" fill="`, colMark, `" fill-opacity=".55"/>`)
		c.text(lx+9, ly, "", `dy=".35em"`, "other")
	}
	c.w(`</g>`)

	c.bands(opt, yax, py, false, left, right)
	c.yTicks(yax, left, right, top, bottom, ylab)
	c.xTicks(xax, left, right, top, bottom, func(v float64) string { return opt.xFmt(v, xax.tickDec(v)) })
	if yax.lo < 0 && yax.hi > 0 {
		c.w(`<line class="tb-zero" x1="`, num(left), `" y1="`, num(py(0)), `" x2="`, num(right), `" y2="`, num(py(0)), `" stroke="currentColor" stroke-opacity=".35"/>`)
	}
	if yl != "" {
		cy := (top + bottom) / 2
		c.w(`<text class="tb-axis-label" transform="rotate(-90)" x="`, num(-cy), `" y="`, num(pad+10), `" text-anchor="middle" font-size="11" fill-opacity=".85">`,
			esc(truncate(yl, bottom-top, smallFont)), `</text>`)
	}
	if xl != "" {
		c.text((left+right)/2, bottom+34, "middle", `class="tb-axis-label" font-size="11" fill-opacity=".85"`, truncate(xl, right-left, smallFont))
	}
	c.refLines(opt, yax, py, false, left, right)

	// Staircase through the front.
	if len(frontSorted) > 1 {
		var d strings.Builder
		p0 := pts[frontSorted[0]]
		d.WriteString("M" + num(px(p0.X)) + " " + num(py(p0.Y)))
		for _, i := range frontSorted[1:] {
			d.WriteString("H" + num(px(pts[i].X)) + "V" + num(py(pts[i].Y)))
		}
		c.w(`<path class="tb-front-line" d="`, d.String(), `" fill="none" stroke="`, colFront, `" stroke-width="2" stroke-opacity=".85" stroke-linejoin="round"/>`)
	}

	// Other points.
	many := len(ok) > 400
	if many {
		var d strings.Builder
		seen := make(map[[2]float64]bool)
		for _, i := range ok {
			if onFront[i] {
				continue
			}
			k := [2]float64{math.Round(px(pts[i].X)), math.Round(py(pts[i].Y))}
			if seen[k] {
				continue
			}
			seen[k] = true
			d.WriteString("M" + num(k[0]) + " " + num(k[1]) + "h0")
		}
		if d.Len() > 0 {
			c.w(`<path class="tb-points" d="`, d.String(), `" stroke="`, colMark, `" stroke-opacity=".45" stroke-width="7" stroke-linecap="round" fill="none"/>`)
		}
	} else {
		for _, i := range ok {
			if onFront[i] {
				continue
			}
			p := pts[i]
			c.w(`<circle class="tb-point" cx="`, num(px(p.X)), `" cy="`, num(py(p.Y)), `" r="4" fill="`, colMark, `" fill-opacity=".55"><title>`,
				esc(tip(p)), `</title></circle>`)
		}
	}
	for _, i := range frontSorted {
		p := pts[i]
		c.w(`<circle class="tb-point tb-front" cx="`, num(px(p.X)), `" cy="`, num(py(p.Y)), `" r="5.5" fill="`, colFront,
			`" stroke="currentColor" stroke-width="1.2"><title>`, esc(tip(p)), ` (Pareto front)</title></circle>`)
	}

	// Labels: front points first, then the rest when there are few points.
	var cand []int
	cand = append(cand, frontSorted...)
	if len(ok) <= 20 {
		for _, i := range ok {
			if !onFront[i] {
				cand = append(cand, i)
			}
		}
	}
	// Obstacles for labels: the front line and the point markers.
	var obstacles []box
	for k, i := range frontSorted {
		x, y := px(pts[i].X), py(pts[i].Y)
		obstacles = append(obstacles, box{x - 6, y - 6, x + 6, y + 6})
		if k+1 < len(frontSorted) {
			n := frontSorted[k+1]
			nx, ny := px(pts[n].X), py(pts[n].Y)
			obstacles = append(obstacles, box{x, y - 1.5, nx, y + 1.5}, box{nx - 1.5, math.Min(y, ny), nx + 1.5, math.Max(y, ny)})
		}
	}
	if !many {
		for _, i := range ok {
			if !onFront[i] {
				x, y := px(pts[i].X), py(pts[i].Y)
				obstacles = append(obstacles, box{x - 4, y - 4, x + 4, y + 4})
			}
		}
	}
	placeLabels(&c, pts, cand, px, py, left, right, top, bottom, onFront, obstacles)
	return c.close()
}

type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// placeLabels writes point labels greedily: right, left, above, below or
// diagonally next to the point, skipping a label that would overlap an obstacle (markers, the
// front line), an earlier label, or leave the plot.
func placeLabels(c *canvas, pts []Point, cand []int, px, py func(float64) float64, left, right, top, bottom float64, onFront map[int]bool, obstacles []box) {
	placed := obstacles
	c.w(`<g class="tb-labels" font-size="11">`)
	for _, i := range cand {
		l := truncate(label(pts[i].Label), 150, smallFont)
		if l == "" {
			continue
		}
		x, y := px(pts[i].X), py(pts[i].Y)
		w := textWidth(l, smallFont)
		const h = 13.0
		type opt struct {
			b      box
			tx, ty float64
			anchor string
		}
		opts := []opt{
			{box{x + 8, y - h/2, x + 8 + w, y + h/2}, x + 8, y, "start"},
			{box{x - 8 - w, y - h/2, x - 8, y + h/2}, x - 8, y, "end"},
			{box{x - w/2, y - 9 - h, x + w/2, y - 9}, x, y - 9 - h/2, "middle"},
			{box{x - w/2, y + 9, x + w/2, y + 9 + h}, x, y + 9 + h/2, "middle"},
			{box{x + 6, y - 7 - h, x + 6 + w, y - 7}, x + 6, y - 7 - h/2, "start"},
			{box{x + 6, y + 7, x + 6 + w, y + 7 + h}, x + 6, y + 7 + h/2, "start"},
			{box{x - 6 - w, y - 7 - h, x - 6, y - 7}, x - 6, y - 7 - h/2, "end"},
			{box{x - 6 - w, y + 7, x - 6, y + 7 + h}, x - 6, y + 7 + h/2, "end"},
		}
		for _, o := range opts {
			if o.b.x0 < left-4 || o.b.x1 > right+pad || o.b.y0 < top-4 || o.b.y1 > bottom+4 {
				continue
			}
			clash := false
			for _, p := range placed {
				if o.b.overlaps(p) {
					clash = true
					break
				}
			}
			if clash {
				continue
			}
			placed = append(placed, o.b)
			extra := `dy=".35em"`
			if !onFront[i] {
				extra += ` fill-opacity=".7"`
			}
			c.text(o.tx, o.ty, o.anchor, extra, l)
			break
		}
	}
	c.w(`</g>`)
}
