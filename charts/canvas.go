package charts

import (
	"html/template"
	"math"
	"strings"
)

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
		`" font-family="`, fontFamily, `" font-size="12" fill="currentColor">`)
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
