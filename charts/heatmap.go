package charts

import (
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Grid is a table of values for Heatmap: Values[r][c] belongs to Rows[r]
// and Cols[c]. Missing entries (short rows) and NaN/Inf are empty cells.
type Grid struct {
	Rows, Cols []string
	Values     [][]float64
}

// at returns the value of cell (r, c), NaN when missing.
func (g Grid) at(r, c int) float64 {
	if r < len(g.Values) && c < len(g.Values[r]) {
		return g.Values[r][c]
	}
	return math.NaN()
}

// viridis stops: perceptually uniform, colour-blind safe, and readable on
// light and dark pages. Cells are opaque and carry their own text colour.
var viridis = [][3]float64{
	{0x44, 0x01, 0x54}, {0x47, 0x2d, 0x7b}, {0x3b, 0x52, 0x8b},
	{0x2c, 0x72, 0x8e}, {0x21, 0x91, 0x8c}, {0x28, 0xae, 0x80},
	{0x5e, 0xc9, 0x62}, {0xad, 0xdc, 0x30}, {0xfd, 0xe7, 0x25},
}

// colorAt maps t in [0,1] to a hex colour on the scale, and returns a text
// colour with good contrast on it.
func colorAt(t float64) (fill, ink string) {
	if !finite(t) {
		t = 0.5
	}
	t = clamp(t, 0, 1)
	f := t * float64(len(viridis)-1)
	i := min(int(f), len(viridis)-2)
	u := f - float64(i)
	var rgb [3]float64
	for k := range rgb {
		rgb[k] = math.Round(viridis[i][k] + u*(viridis[i+1][k]-viridis[i][k]))
	}
	fill = "#" + hex2(rgb[0]) + hex2(rgb[1]) + hex2(rgb[2])
	// Relative luminance (sRGB).
	lin := func(c float64) float64 {
		c /= 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	lum := 0.2126*lin(rgb[0]) + 0.7152*lin(rgb[1]) + 0.0722*lin(rgb[2])
	if lum > 0.22 {
		return fill, "#111"
	}
	return fill, "#fff"
}

func hex2(v float64) string {
	s := strconv.FormatInt(int64(clamp(v, 0, 255)), 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// Heatmap renders a grid of coloured cells (e.g. models × categories) with
// the value printed in each cell when it fits, row labels on the left,
// column labels on top (slanted when they do not fit), and a colour legend.
// The colour scale spans the finite values, or Options Min/Max when set;
// with Reverse the scale is flipped so that low values get the "best"
// (bright) colour. Unit and Format apply to the printed values. When Width
// is 0 the chart is only as wide as its cells need (at most 800 px).
func Heatmap(title string, g Grid, opt Options) template.HTML {
	nr, nc := len(g.Rows), len(g.Cols)
	var ext extent
	for r := 0; r < nr; r++ {
		for c := 0; c < nc; c++ {
			ext.add(g.at(r, c))
		}
	}
	if nr == 0 || nc == 0 || ext.n == 0 {
		return noData("heatmap", title, opt)
	}
	lo, hi := ext.lo, ext.hi
	if flo, fhi := opt.bounds(); finite(flo) || finite(fhi) {
		if finite(flo) {
			lo = flo
		}
		if finite(fhi) {
			hi = fhi
		}
		if lo > hi {
			lo, hi = hi, lo
		}
	}
	tOf := func(v float64) float64 {
		t := 0.5
		if hi > lo {
			t = clamp((v-lo)/(hi-lo), 0, 1)
		}
		if opt.Reverse {
			t = 1 - t
		}
		return t
	}
	var all []float64
	for r := 0; r < nr; r++ {
		for c := 0; c < nc; c++ {
			all = append(all, g.at(r, c))
		}
	}
	dec := decimalsFor(valueDecimals(math.Max(math.Abs(lo), math.Abs(hi))), append(all, lo, hi))

	rows := make([]string, nr)
	cols := make([]string, nc)
	W := opt.width()
	labelW := 0.0
	for i, s := range g.Rows {
		rows[i] = label(s)
		labelW = math.Max(labelW, textWidth(rows[i], fontSize))
	}
	labelW = math.Min(labelW, W*0.3)
	colLabW := 0.0
	for i, s := range g.Cols {
		cols[i] = label(s)
		colLabW = math.Max(colLabW, textWidth(cols[i], smallFont))
	}
	x0 := pad + labelW + 8

	// Cell width: share the room, within limits; the longest value should fit.
	valW := 0.0
	for r := 0; r < nr; r++ {
		for c := 0; c < nc; c++ {
			if v := g.at(r, c); finite(v) {
				valW = math.Max(valW, textWidth(opt.valueFmt(v, dec), smallFont))
			}
		}
	}
	maxCell := math.Max(72, math.Min(120, valW+12))
	cellW := clamp((W-x0-pad)/float64(nc), 14, maxCell)
	slant := colLabW > cellW-6
	const angle = 40.0
	sin, cos := math.Sin(angle*math.Pi/180), math.Cos(angle*math.Pi/180)
	colLabMax := math.Min(colLabW, 150)
	rightRoom := 0.0
	if slant {
		rightRoom = math.Max(0, cos*colLabMax-cellW/2)
		cellW = clamp((W-x0-pad-rightRoom)/float64(nc), 14, maxCell)
		rightRoom = math.Max(0, cos*colLabMax-cellW/2)
	}
	if opt.Width <= 0 {
		W = math.Min(W, math.Max(x0+float64(nc)*cellW+rightRoom+pad, 320))
	}

	top := pad + opt.titleHeight(title)
	headH := 20.0
	if slant {
		headH = sin*colLabMax + 12
	}
	y0 := top + headH
	const legendH = 34
	cellH := 28.0
	H := y0 + float64(nr)*cellH + legendH + pad
	if h := opt.height(); h > 0 {
		H = h
		cellH = math.Max(6, (H-y0-legendH-pad)/float64(nr))
	}

	// Description.
	var items []string
	for r := 0; r < nr; r++ {
		var parts []string
		for c := 0; c < nc; c++ {
			if v := g.at(r, c); finite(v) {
				parts = append(parts, cols[c]+" "+opt.valueFmt(v, dec))
			}
		}
		if len(parts) == 0 {
			parts = []string{"no data"}
		}
		items = append(items, rows[r]+": "+strings.Join(parts, ", "))
	}
	desc := "Heat map, " + plural(nr, "row", "rows") + " × " + plural(nc, "column", "columns") + ", colour scale " +
		opt.valueFmt(lo, dec) + " to " + opt.valueFmt(hi, dec) + ". " + summaryList(items, 30) + "."

	var c canvas
	c.open("heatmap", W, H, title, desc)
	c.visibleTitle(title, opt, W)

	// Column labels.
	c.w(`<g class="tb-collabels" font-size="11" fill-opacity=".85">`)
	for j, s := range cols {
		cx := x0 + (float64(j)+0.5)*cellW
		if slant {
			bx, by := cx-2, y0-6
			c.w(`<text x="`, num(bx), `" y="`, num(by), `" transform="rotate(-40 `, num(bx), ` `, num(by), `)"><title>`, esc(s), `</title>`,
				esc(truncate(s, colLabMax, smallFont)), `</text>`)
		} else {
			c.text(cx, y0-7, "middle", "", s)
		}
	}
	c.w(`</g>`)

	// Rows.
	for r := 0; r < nr; r++ {
		cy := y0 + float64(r)*cellH
		c.w(`<g class="tb-row">`)
		c.w(`<text x="`, num(x0-8), `" y="`, num(cy+cellH/2), `" dy=".35em" text-anchor="end"><title>`, esc(rows[r]), `</title>`,
			esc(truncate(rows[r], labelW, fontSize)), `</text>`)
		for j := 0; j < nc; j++ {
			v := g.at(r, j)
			x := x0 + float64(j)*cellW
			tip := rows[r] + " · " + cols[j] + ": "
			if !finite(v) {
				c.w(`<g class="tb-cell tb-empty"><title>`, esc(tip+"no data"), `</title><rect x="`, num(x+1.5), `" y="`, num(cy+1.5), `" width="`, num(cellW-3),
					`" height="`, num(cellH-3), `" rx="2" fill="none" stroke="currentColor" stroke-opacity=".2" stroke-dasharray="3 2"/>`)
				if cellW >= 14 && cellH >= 12 {
					c.text(x+cellW/2, cy+cellH/2, "middle", `dy=".35em" font-size="11" fill-opacity=".45"`, "–")
				}
				c.w(`</g>`)
				continue
			}
			fill, ink := colorAt(tOf(v))
			vs := opt.valueFmt(v, dec)
			c.w(`<g class="tb-cell"><title>`, esc(tip+vs), `</title><rect x="`, num(x+1), `" y="`, num(cy+1), `" width="`, num(cellW-2),
				`" height="`, num(cellH-2), `" rx="2" fill="`, fill, `"/>`)
			if textWidth(vs, smallFont) <= cellW-6 && cellH >= 12 {
				c.text(x+cellW/2, cy+cellH/2, "middle", `dy=".35em" font-size="11" fill="`+ink+`"`, vs)
			}
			c.w(`</g>`)
		}
		c.w(`</g>`)
	}

	// Legend: min … max as discrete swatches (no gradient ids needed).
	ly := H - pad - 22
	lx := x0
	loTxt, hiTxt := opt.valueFmt(lo, dec), opt.valueFmt(hi, dec)
	c.w(`<g class="tb-legend" font-size="11">`)
	c.text(lx, ly+6, "", `dy=".35em" fill-opacity=".75"`, loTxt)
	sx := lx + textWidth(loTxt, smallFont) + 6
	const steps, sw = 12, 14.0
	for k := 0; k < steps; k++ {
		t := float64(k) / float64(steps-1)
		if opt.Reverse {
			t = 1 - t
		}
		fill, _ := colorAt(t)
		c.w(`<rect x="`, num(sx+float64(k)*sw), `" y="`, num(ly), `" width="`, num(sw), `" height="12" fill="`, fill, `"/>`)
	}
	c.text(sx+steps*sw+6, ly+6, "", `dy=".35em" fill-opacity=".75"`, hiTxt)
	c.w(`</g>`)
	return c.close()
}
