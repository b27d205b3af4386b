package charts

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// checkFuzzOutput asserts the invariants every chart must keep for any
// input: well-formed XML, the accessibility frame, no markup injected by
// labels and no NaN/Inf leaking into attributes.
func checkFuzzOutput(t *testing.T, name, out string) *node {
	t.Helper()
	svg, err := parseSVG(out)
	if err != nil {
		t.Fatalf("%s: not well-formed: %v\n%s", name, err, out)
	}
	checkFrame(t, name, svg)
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Fatalf("%s: <script in output", name)
	}
	allowed := map[string]bool{"svg": true, "title": true, "desc": true, "g": true, "text": true, "tspan": true,
		"rect": true, "line": true, "path": true, "circle": true}
	for _, n := range svg.all(func(*node) bool { return true }) {
		if !allowed[n.name] {
			t.Fatalf("%s: unexpected element <%s>", name, n.name)
		}
		for k, v := range n.attr {
			if k == "aria-label" {
				continue
			}
			if strings.Contains(v, "NaN") || strings.Contains(v, "Inf") {
				t.Fatalf("%s: <%s %s=%q>", name, n.name, k, v)
			}
		}
	}
	return svg
}

func fuzzOpts(w, h int, lo, hi float64, unit string) Options {
	o := Options{Width: w % 5000, Height: h % 5000, Unit: unit}
	if !math.IsNaN(lo) {
		o.Min = &lo
	}
	if !math.IsNaN(hi) {
		o.Max = &hi
	}
	return o
}

// FuzzBarsCI feeds arbitrary labels and values to BarsCI (and, with the
// same data, Distribution and Heatmap).
func FuzzBarsCI(f *testing.F) {
	f.Add("Score", "model-a", 0.8, 0.7, 0.9, 10, 0, 0, math.NaN(), math.NaN(), "%")
	f.Add(hostile, hostile, -1.0, math.NaN(), math.Inf(1), -3, 100, 50, 0.5, 0.2, hostile)
	f.Add("", "\x00\xff\uFFFE", 1e308, -1e308, 5e-324, 0, 1, 1, 1e300, -1e300, "")
	f.Add("t", strings.Repeat("漢a<", 200), 0.0, 0.0, 0.0, 1<<40, -1, -1, 0.0, 0.0, " ms")
	f.Fuzz(func(t *testing.T, title, lab string, v, lo, hi float64, n, w, h int, mn, mx float64, unit string) {
		o := fuzzOpts(w, h, mn, mx, unit)
		o.Refs = []RefLine{{Value: lo, Label: lab}}
		o.Bands = []Band{{Lo: lo, Hi: hi, Label: lab}}
		bars := []Bar{
			{Label: lab, Value: v, Lo: lo, Hi: hi, N: n},
			{Label: lab + lab, Value: hi, Lo: v, Hi: lo},
			{Label: "", Value: lo, Lo: math.NaN(), Hi: v, N: -n},
		}
		svg := checkFuzzOutput(t, "bars", string(BarsCI(title, bars, o)))
		for _, r := range svg.byClass("tb-bar") {
			if r.f(t, "width") < 0 {
				t.Fatalf("negative bar width %v", r.attr["width"])
			}
		}
		vals := []float64{v, lo, hi, v, v * 2, lo - hi}
		checkFuzzOutput(t, "dist", string(Distribution(title, []Series{{Label: lab, Values: vals}, {Label: lab}}, o)))
		g := Grid{Rows: []string{lab, title}, Cols: []string{unit, lab}, Values: [][]float64{{v, lo}, {hi}}}
		o.Reverse = n%2 == 0
		checkFuzzOutput(t, "heatmap", string(Heatmap(title, g, o)))
	})
}

// FuzzScatter feeds arbitrary points to ScatterPareto (and Trend), and
// checks ParetoFront against the O(n²) definition.
func FuzzScatter(f *testing.F) {
	f.Add("Score vs cost", "m", 1.0, 0.5, 2.0, 0.7, 2.0, 0.7, false, "cost", 0, 0)
	f.Add(hostile, hostile, math.NaN(), 1.0, math.Inf(-1), 0.0, -0.0, 0.0, true, hostile, 300, 90)
	f.Add("", "\xff", 1e-300, 1e300, 1e300, -1e300, 5e-324, 5e-324, true, "", -7, 1)
	f.Fuzz(func(t *testing.T, title, lab string, x1, y1, x2, y2, x3, y3 float64, logx bool, axisLab string, w, h int) {
		pts := []Point{{Label: lab, X: x1, Y: y1}, {Label: lab + "2", X: x2, Y: y2}, {Label: axisLab, X: x3, Y: y3}, {Label: lab, X: x1, Y: y1}}
		front := ParetoFront(pts)
		if want := bruteFront(pts); !slices.Equal(front, want) {
			t.Fatalf("ParetoFront(%v) = %v, want %v", pts, front, want)
		}
		o := Options{Width: w % 5000, Height: h % 5000, LogX: logx, XUnit: axisLab}
		svg := checkFuzzOutput(t, "scatter", string(ScatterPareto(title, axisLab, lab, pts, o)))
		if len(front) > 0 && len(svg.byClass("tb-front")) != len(front) {
			t.Fatalf("%d front markers, want %d", len(svg.byClass("tb-front")), len(front))
		}
		lines := []Line{
			{Label: lab, Points: []XY{{X: x1, XLabel: lab, Y: y1}, {X: x2, Y: y2}, {X: x3, XLabel: axisLab, Y: y3}}},
			{Label: axisLab, Points: []XY{{X: y1, Y: x1}}},
		}
		o.Refs = []RefLine{{Value: y2, Label: lab}}
		checkFuzzOutput(t, "trend", string(Trend(title, lines, o)))
	})
}
