package charts

import (
	"html/template"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const hostile = `</text><script>alert(1)</script><!-- & "q" 'a' ]]>`

var nan = math.NaN()

// everyChart renders every chart kind with the given label in every
// string slot.
func everyChart(s string) map[string]template.HTML {
	o := Options{Unit: s, XUnit: s, Refs: []RefLine{{Value: 0.5, Label: s}}, Bands: []Band{{Lo: 0.1, Hi: 0.2, Label: s}}}
	return map[string]template.HTML{
		"bars":    BarsCI(s, []Bar{{Label: s, Value: 1, Lo: 0.5, Hi: 2, N: 3}, {Label: "b", Value: 2}}, o),
		"dist":    Distribution(s, []Series{{Label: s, Values: []float64{1, 2, 3, 4, 100}}}, o),
		"scatter": ScatterPareto(s, s, s, []Point{{Label: s, X: 1, Y: 2}, {Label: s, X: 2, Y: 1}}, o),
		"heatmap": Heatmap(s, Grid{Rows: []string{s}, Cols: []string{s, s + s + s + s}, Values: [][]float64{{1, 2}}}, o),
		"trend":   Trend(s, []Line{{Label: s, Points: []XY{{X: 1, XLabel: s, Y: 1}, {X: 2, Y: 3}}}, {Label: s}}, o),
		"format":  BarsCI("f", []Bar{{Label: "a", Value: 1}}, Options{Format: func(float64) string { return s }}),
		"xfmt": ScatterPareto("f", "x", "y", []Point{{X: 1, Y: 1}, {X: 2, Y: 3}},
			Options{XFormat: func(float64) string { return s }, Format: func(float64) string { return s }}),
		"nodata": BarsCI(s, nil, Options{}),
	}
}

// checkFrame verifies the accessibility frame every chart must have.
func checkFrame(t *testing.T, name string, svg *node) {
	t.Helper()
	if svg.attr["role"] != "img" || strings.TrimSpace(svg.attr["aria-label"]) == "" {
		t.Errorf("%s: want role=img and an aria-label, got %v", name, svg.attr)
	}
	if len(svg.kids) < 2 || svg.kids[0].name != "title" || svg.kids[1].name != "desc" {
		t.Errorf("%s: want <title> then <desc> first", name)
	} else if strings.TrimSpace(svg.kids[1].text) == "" {
		t.Errorf("%s: empty <desc>", name)
	}
	if svg.attr["viewBox"] != "0 0 "+svg.attr["width"]+" "+svg.attr["height"] || svg.attr["class"] == "" {
		t.Errorf("%s: want a viewBox of the natural width and height, and a class to size it by, got %v", name, svg.attr)
	}
	if _, ok := svg.attr["style"]; ok {
		t.Errorf("%s: a style attribute, which the pages' Content-Security-Policy refuses", name)
	}
	if len(svg.all(func(n *node) bool { _, ok := n.attr["id"]; return ok })) > 0 {
		t.Errorf("%s: output must not use id attributes", name)
	}
}

func TestWellFormedAndAccessible(t *testing.T) {
	for name, h := range everyChart("model-a") {
		checkFrame(t, name, mustParse(t, string(h)))
	}
}

func TestHostileLabelsAreEscaped(t *testing.T) {
	for name, h := range everyChart(hostile) {
		s := string(h)
		svg := mustParse(t, s)
		if strings.Contains(strings.ToLower(s), "<script") || strings.Contains(s, "<!--") {
			t.Errorf("%s: raw markup from a label leaked:\n%s", name, s)
		}
		if n := len(svg.byName("script")); n > 0 {
			t.Errorf("%s: %d <script> elements", name, n)
		}
		// The label must still be shown (escaped), not silently dropped.
		if !strings.Contains(svg.allText(), "<script>") {
			t.Errorf("%s: hostile label not present as text", name)
		}
		if !strings.Contains(s, "&lt;script&gt;") {
			t.Errorf("%s: want &lt;script&gt; in markup", name)
		}
	}
}

func TestControlAndInvalidUTF8(t *testing.T) {
	bad := "a\x00b\x01c\x7f\x85\xff\xfe\uFFFE\uFFFF\td\ne"
	for name, h := range everyChart(bad) {
		svg := mustParse(t, string(h))
		if strings.ContainsAny(svg.allText(), "\x00\x01\x7f\uFFFE\uFFFF") {
			t.Errorf("%s: control characters survived", name)
		}
	}
}

func TestBarsGeometry(t *testing.T) {
	bars := []Bar{
		{Label: "a", Value: 0.2, Lo: 0.1, Hi: 0.3},
		{Label: "b", Value: 0.4, Lo: 0.35, Hi: 0.5, N: 10},
		{Label: "c", Value: 0.8, Lo: nan, Hi: nan},
		{Label: "neg", Value: -0.3, Lo: -0.4, Hi: -0.1},
	}
	svg := mustParse(t, string(BarsCI("t", bars, Options{})))
	pos := tickScale(t, svg, true)
	rects := svg.byClass("tb-bar")
	if len(rects) != len(bars) {
		t.Fatalf("want %d bars, got %d", len(bars), len(rects))
	}
	const tol = 0.3
	for i, r := range rects {
		x, w := r.f(t, "x"), r.f(t, "width")
		v := bars[i].Value
		wantX, wantW := math.Min(pos(0), pos(v)), math.Abs(pos(v)-pos(0))
		if !near(x, wantX, tol) || !near(w, wantW, tol) {
			t.Errorf("bar %d (%v): x=%v w=%v, want x=%v w=%v", i, v, x, w, wantX, wantW)
		}
	}
	// Lengths proportional to the values.
	w0, w2 := rects[0].f(t, "width"), rects[2].f(t, "width")
	if !near(w2/w0, 4, 0.02) {
		t.Errorf("bar length ratio %v, want 4", w2/w0)
	}
	// Whiskers at Lo/Hi; none for the bar without an interval.
	cis := svg.byClass("tb-ci")
	if len(cis) != 3 {
		t.Fatalf("want 3 whiskers, got %d", len(cis))
	}
	for k, i := range []int{0, 1, 3} {
		x1, x2 := cis[k].f(t, "x1"), cis[k].f(t, "x2")
		if !near(x1, pos(bars[i].Lo), tol) || !near(x2, pos(bars[i].Hi), tol) {
			t.Errorf("whisker %d: %v..%v, want %v..%v", i, x1, x2, pos(bars[i].Lo), pos(bars[i].Hi))
		}
		// Centred vertically on its bar.
		r := rects[i]
		cy := r.f(t, "y") + r.f(t, "height")/2
		if !near(cis[k].f(t, "y1"), cy, tol) {
			t.Errorf("whisker %d not centred on its bar", i)
		}
	}
	// Value labels and n.
	vals := svg.byClass("tb-value")
	// Two decimals throughout (0.35 needs them), n after the value.
	if got := vals[1].allText(); got != "0.40 n=10" {
		t.Errorf("value label %q, want %q", got, "0.40 n=10")
	}
}

func TestBarsSwappedCIAndOneSided(t *testing.T) {
	svg := mustParse(t, string(BarsCI("t", []Bar{{Label: "a", Value: 5, Lo: 8, Hi: 2}, {Label: "b", Value: 5, Lo: nan, Hi: 9}}, Options{})))
	pos := tickScale(t, svg, true)
	cis := svg.byClass("tb-ci")
	if len(cis) != 2 {
		t.Fatalf("want 2 whiskers, got %d", len(cis))
	}
	if !near(cis[0].f(t, "x1"), pos(2), 0.3) || !near(cis[0].f(t, "x2"), pos(8), 0.3) {
		t.Errorf("swapped interval not normalised")
	}
	if !near(cis[1].f(t, "x1"), pos(5), 0.3) || !near(cis[1].f(t, "x2"), pos(9), 0.3) {
		t.Errorf("one-sided interval should run from the value to Hi")
	}
}

func TestBarsFixedRangeClamps(t *testing.T) {
	svg := mustParse(t, string(BarsCI("t", []Bar{{Label: "in", Value: 0.75}, {Label: "over", Value: 3}}, Options{Min: new(0.5), Max: new(1.0)})))
	pos := tickScale(t, svg, true)
	r := svg.byClass("tb-bar")
	// Zero is outside [0.5, 1]: bars start at the left edge.
	if !near(r[0].f(t, "x"), pos(0.5), 0.3) || !near(r[0].f(t, "width"), pos(0.75)-pos(0.5), 0.3) {
		t.Errorf("bar in fixed range wrong: x=%v w=%v", r[0].attr["x"], r[0].attr["width"])
	}
	if !near(r[1].f(t, "x")+r[1].f(t, "width"), pos(1), 0.3) {
		t.Errorf("bar beyond Max should be clamped to the edge")
	}
	ticks := svg.byClass("tb-tick")
	if ticks[0].text != "0.5" || ticks[len(ticks)-1].text != "1.0" {
		t.Errorf("fixed axis ticks %q..%q, want 0.5..1", ticks[0].text, ticks[len(ticks)-1].text)
	}
}

func TestNaNRowsAndNoData(t *testing.T) {
	svg := mustParse(t, string(BarsCI("t", []Bar{{Label: "ok", Value: 1}, {Label: "bad", Value: nan}, {Label: "inf", Value: math.Inf(1)}}, Options{})))
	if n := len(svg.byClass("tb-bar")); n != 1 {
		t.Errorf("want 1 bar, got %d", n)
	}
	if got := svg.byClass("tb-value")[1].allText(); got != "n/a" {
		t.Errorf("NaN row shows %q, want n/a", got)
	}
	empties := map[string]template.HTML{
		"bars nil":      BarsCI("t", nil, Options{}),
		"bars nan":      BarsCI("t", []Bar{{Label: "a", Value: nan, Lo: 1, Hi: 2}}, Options{}),
		"dist nil":      Distribution("t", nil, Options{}),
		"dist nan":      Distribution("t", []Series{{Label: "a", Values: []float64{nan, math.Inf(-1)}}, {Label: "b"}}, Options{}),
		"scatter nil":   ScatterPareto("t", "x", "y", nil, Options{}),
		"scatter nan":   ScatterPareto("t", "x", "y", []Point{{X: nan, Y: 1}, {X: 1, Y: math.Inf(1)}}, Options{}),
		"heatmap nil":   Heatmap("t", Grid{}, Options{}),
		"heatmap nan":   Heatmap("t", Grid{Rows: []string{"a"}, Cols: []string{"b"}, Values: [][]float64{{nan}}}, Options{}),
		"heatmap short": Heatmap("t", Grid{Rows: []string{"a"}, Cols: []string{"b"}}, Options{}),
		"trend nil":     Trend("t", nil, Options{}),
		"trend nan":     Trend("t", []Line{{Label: "a", Points: []XY{{X: 1, Y: nan}, {X: nan, Y: 1}}}}, Options{}),
	}
	for name, h := range empties {
		svg := mustParse(t, string(h))
		checkFrame(t, name, svg)
		if len(svg.byClass("tb-nodata")) != 1 || !strings.Contains(svg.allText(), "No data") {
			t.Errorf("%s: want the no-data placeholder", name)
		}
		if len(h) > 2000 {
			t.Errorf("%s: placeholder is %d bytes, want small", name, len(h))
		}
	}
	// Non-empty input must not be the placeholder.
	if strings.Contains(string(BarsCI("t", []Bar{{Label: "a", Value: 0}}, Options{})), "tb-nodata") {
		t.Error("a zero value is data, not 'no data'")
	}
}

func TestLongLabelsTruncated(t *testing.T) {
	long := strings.Repeat("very-long-model-name-", 20) + "END"
	svg := mustParse(t, string(BarsCI("t", []Bar{{Label: long, Value: 1}}, Options{})))
	var shown string
	for _, tx := range svg.byName("text") {
		if strings.HasPrefix(tx.text, "very-long") {
			shown = tx.text
		}
	}
	if !strings.HasSuffix(shown, "…") || len(shown) >= len(long) || strings.Contains(shown, "END") {
		t.Errorf("label not truncated with an ellipsis: %q", shown)
	}
	if textWidth(shown, fontSize) > 800*0.34+0.01 {
		t.Errorf("truncated label still %vpx wide", textWidth(shown, fontSize))
	}
	found := false
	for _, ti := range svg.byName("title") {
		if strings.Contains(ti.text, long) {
			found = true
		}
	}
	if !found {
		t.Error("full label missing from the tooltip <title>")
	}
	// Heat map and scatter truncate too, keeping the full text in a title.
	hm := mustParse(t, string(Heatmap("t", Grid{Rows: []string{long}, Cols: []string{long}, Values: [][]float64{{1}}}, Options{})))
	for _, tx := range hm.byName("text") {
		if strings.Contains(tx.text, "END") {
			t.Errorf("heat map shows an untruncated label: %q", tx.text)
		}
	}
	if !strings.Contains(hm.allText(), long) {
		t.Error("heat map lost the full label")
	}
}

func TestTruncate(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("x", 500), strings.Repeat("漢", 100), "a b c d e f g h i j k l m n o p"} {
		for _, w := range []float64{5, 40, 120} {
			got := truncate(s, w, 12)
			if textWidth(s, 12) <= w {
				if got != s {
					t.Errorf("truncate(%q,%v) changed a fitting string to %q", s, w, got)
				}
				continue
			}
			if got == "" && w < textWidth(ellipsis, 12) {
				continue // not even the ellipsis fits
			}
			if !strings.HasSuffix(got, ellipsis) || textWidth(got, 12) > w+0.001 {
				t.Errorf("truncate(%q,%v) = %q (%vpx)", s, w, got, textWidth(got, 12))
			}
			if !strings.HasPrefix(s, strings.TrimSuffix(got, ellipsis)) {
				t.Errorf("truncate(%q,%v) = %q is not a prefix", s, w, got)
			}
		}
	}
}

func TestNiceTicks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 2000; i++ {
		lo := (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(12)-6))
		hi := lo + rng.Float64()*math.Pow(10, float64(rng.IntN(12)-6))
		target := 2 + rng.IntN(10)
		a := linearAxis(lo, hi, nan, nan, target)
		if a.lo > lo || a.hi < hi {
			t.Fatalf("axis [%v,%v] does not cover data [%v,%v]", a.lo, a.hi, lo, hi)
		}
		if len(a.ticks) < 2 || len(a.ticks) > 2*target+3 {
			t.Fatalf("[%v,%v] target %d: %d ticks", lo, hi, target, len(a.ticks))
		}
		step := (a.ticks[len(a.ticks)-1] - a.ticks[0]) / float64(len(a.ticks)-1)
		mant := step / math.Pow(10, math.Floor(math.Log10(step*(1+1e-6))))
		// Float error grows with the offset relative to the step.
		tol := 1e-6 + 8*math.Max(math.Abs(a.lo), math.Abs(a.hi))*2.3e-16/step
		if !near(mant, 1, tol) && !near(mant, 2, tol) && !near(mant, 5, tol) && !near(mant, 10, 10*tol) {
			t.Fatalf("[%v,%v]: step %v is not 1-2-5", lo, hi, step)
		}
		for k := 1; k < len(a.ticks); k++ {
			if !near(a.ticks[k]-a.ticks[k-1], step, step*1e-6+math.Abs(a.ticks[k])*1e-15) {
				t.Fatalf("uneven ticks %v", a.ticks)
			}
		}
		if !near(a.ticks[0], a.lo, step*1e-6) || !near(a.ticks[len(a.ticks)-1], a.hi, step*1e-6) {
			t.Fatalf("auto axis ends %v..%v not on ticks %v", a.lo, a.hi, a.ticks)
		}
	}
	a := linearAxis(0, 0.83, nan, nan, 6)
	want := []float64{0, 0.2, 0.4, 0.6, 0.8, 1}
	if len(a.ticks) != len(want) {
		t.Fatalf("0..0.83 ticks %v, want %v", a.ticks, want)
	}
	for i := range want {
		if !near(a.ticks[i], want[i], 1e-12) {
			t.Errorf("0..0.83 ticks %v, want %v", a.ticks, want)
		}
	}
	if a.lo != 0 || a.hi != 1 {
		t.Errorf("0..0.83 domain %v..%v, want 0..1", a.lo, a.hi)
	}
	// Degenerate range and a single value.
	if a := linearAxis(5, 5, nan, nan, 5); !(a.lo < 5 && a.hi > 5) {
		t.Errorf("single value axis %v..%v", a.lo, a.hi)
	}
	if a := linearAxis(0, 0, nan, nan, 5); !(a.lo <= 0 && a.hi > 0) {
		t.Errorf("zero axis %v..%v", a.lo, a.hi)
	}
	// Huge values stay finite.
	if a := linearAxis(-domainLimit, domainLimit, nan, nan, 5); !finite(a.lo) || !finite(a.hi) || len(a.ticks) < 2 {
		t.Errorf("huge axis %v..%v %v", a.lo, a.hi, a.ticks)
	}
	// Log axis: ends on 1-2-5 values around the data.
	la := logAxis(0.013, 15)
	if !near(math.Pow(10, la.lo), 0.01, 1e-12) || !near(math.Pow(10, la.hi), 20, 1e-9) {
		t.Errorf("log axis %v..%v, want 0.01..20", math.Pow(10, la.lo), math.Pow(10, la.hi))
	}
	if la := logAxis(1e-300, 1e300); len(la.ticks) < 2 || len(la.ticks) > 12 {
		t.Errorf("600-decade log axis has %d ticks", len(la.ticks))
	}
}

func TestFormatNum(t *testing.T) {
	cases := []struct {
		v    float64
		dec  int
		want string
	}{
		{0.8, 2, "0.80"}, {-0.0001, 2, "0.00"}, {12.345, 1, "12.3"}, {1234567, 0, "1.23M"},
		{-2.5e9, 0, "-2.5G"}, {3e20, 0, "3e+20"}, {nan, 2, "–"},
	}
	for _, c := range cases {
		if got := formatNum(c.v, c.dec); got != c.want {
			t.Errorf("formatNum(%v,%d) = %q, want %q", c.v, c.dec, got, c.want)
		}
	}
	if d := decimalsFor(3, []float64{95, 98, 39}); d != 0 {
		t.Errorf("integers need 0 decimals, got %d", d)
	}
	if d := decimalsFor(3, []float64{0.5, 0.77}); d != 2 {
		t.Errorf("want 2 decimals, got %d", d)
	}
	if got := (Options{Unit: " ms"}).valueFmt(12, 0); got != "12 ms" {
		t.Errorf("unit spacing lost: %q", got)
	}
}

// bruteFront is the O(n²) definition of the Pareto front.
func bruteFront(pts []Point) []int {
	var out []int
	for i, p := range pts {
		if !finite(p.X) || !finite(p.Y) {
			continue
		}
		dom := false
		for j, q := range pts {
			if j == i || !finite(q.X) || !finite(q.Y) {
				continue
			}
			if q.X <= p.X && q.Y >= p.Y && (q.X < p.X || q.Y > p.Y) {
				dom = true
				break
			}
		}
		if !dom {
			out = append(out, i)
		}
	}
	return out
}

func TestParetoFront(t *testing.T) {
	P := func(x, y float64) Point { return Point{X: x, Y: y} }
	cases := []struct {
		name string
		pts  []Point
		want []int
	}{
		{"empty", nil, nil},
		{"single", []Point{P(1, 1)}, []int{0}},
		{"chain", []Point{P(1, 1), P(2, 2), P(3, 3)}, []int{0, 1, 2}},
		{"dominated", []Point{P(1, 3), P(2, 2), P(3, 1)}, []int{0}},
		{"duplicates kept", []Point{P(1, 1), P(1, 1), P(2, 0)}, []int{0, 1}},
		{"same x, lower y dominated", []Point{P(1, 5), P(1, 4)}, []int{0}},
		{"same y, higher x dominated", []Point{P(2, 5), P(1, 5)}, []int{1}},
		{"tie on x at the front", []Point{P(0, 1), P(2, 5), P(2, 5), P(2, 3), P(3, 5)}, []int{0, 1, 2}},
		{"nan and inf ignored", []Point{P(nan, 9), P(1, 1), P(0, math.Inf(1)), P(2, 2)}, []int{1, 3}},
		{"negative values", []Point{P(-1, -1), P(-2, -3), P(0, 0)}, []int{0, 1, 2}},
		{"signed zero equal", []Point{P(0, 1), P(math.Copysign(0, -1), 1)}, []int{0, 1}},
	}
	for _, c := range cases {
		got := ParetoFront(c.pts)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		if b := bruteFront(c.pts); !slices.Equal(b, c.want) {
			t.Errorf("%s: brute force disagrees with the table: %v", c.name, b)
		}
	}
	// Random sets with many ties agree with the definition.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		pts := make([]Point, rng.IntN(30))
		for k := range pts {
			pts[k] = P(float64(rng.IntN(6)), float64(rng.IntN(6)))
			if rng.IntN(20) == 0 {
				pts[k].Y = nan
			}
		}
		if got, want := ParetoFront(pts), bruteFront(pts); !slices.Equal(got, want) {
			t.Fatalf("%v: got %v, want %v", pts, got, want)
		}
	}
}

func TestScatterMarksFront(t *testing.T) {
	pts := []Point{
		{Label: "cheap", X: 0.1, Y: 0.6}, {Label: "mid", X: 1, Y: 0.8}, {Label: "bad", X: 2, Y: 0.7},
		{Label: "best", X: 3, Y: 0.9}, {Label: "dup", X: 1, Y: 0.8}, {Label: "nan", X: nan, Y: 1},
	}
	for _, logx := range []bool{false, true} {
		svg := mustParse(t, string(ScatterPareto("t", "cost", "score", pts, Options{LogX: logx})))
		front := svg.byClass("tb-front")
		if len(front) != 4 {
			t.Fatalf("log=%v: want 4 front markers, got %d", logx, len(front))
		}
		ypos := tickScale(t, svg, false)
		want := map[string]bool{"cheap": true, "mid": true, "dup": true, "best": true}
		for _, c := range front {
			name, _, _ := strings.Cut(c.tooltip(), ":")
			if !want[name] {
				t.Errorf("log=%v: %q marked as front", logx, name)
			}
			var p Point
			for _, q := range pts {
				if q.Label == name {
					p = q
				}
			}
			if !near(c.f(t, "cy"), ypos(p.Y), 0.3) {
				t.Errorf("log=%v: %s at cy=%v, want %v", logx, name, c.attr["cy"], ypos(p.Y))
			}
		}
		others := svg.all(func(n *node) bool { return hasClass(n, "tb-point") && !hasClass(n, "tb-front") })
		if len(others) != 1 || !strings.HasPrefix(others[0].tooltip(), "bad:") {
			t.Errorf("log=%v: want one non-front point 'bad'", logx)
		}
		line := svg.byClass("tb-front-line")
		if len(line) != 1 || strings.Count(line[0].attr["d"], "H") != 3 {
			t.Errorf("log=%v: want one staircase through the front, got %v", logx, line)
		}
		if !logx {
			xpos := tickScale(t, svg, true)
			for _, c := range front {
				name, _, _ := strings.Cut(c.tooltip(), ":")
				for _, q := range pts {
					if q.Label == name && !near(c.f(t, "cx"), xpos(q.X), 0.3) {
						t.Errorf("%s at cx=%v, want %v", name, c.attr["cx"], xpos(q.X))
					}
				}
			}
		}
	}
}

func TestScatterSinglePointAndMany(t *testing.T) {
	svg := mustParse(t, string(ScatterPareto("t", "x", "y", []Point{{Label: "only", X: 3, Y: 3}}, Options{})))
	if len(svg.byClass("tb-front")) != 1 || len(svg.byClass("tb-front-line")) != 0 {
		t.Error("single point: want one front marker and no line")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	pts := make([]Point, 10000)
	for i := range pts {
		pts[i] = Point{Label: "m" + strconv.Itoa(i), X: rng.Float64() * 10, Y: rng.Float64()}
	}
	h := ScatterPareto("t", "x", "y", pts, Options{})
	svg = mustParse(t, string(h))
	if len(h) > 250_000 {
		t.Errorf("10k-point scatter is %d bytes", len(h))
	}
	if got, want := len(svg.byClass("tb-front")), len(ParetoFront(pts)); got != want {
		t.Errorf("front markers %d, want %d", got, want)
	}
	if n := len(svg.byName("circle")); n > 100 {
		t.Errorf("%d circles for 10k points; expected merged dots", n)
	}
}

func TestHeatmapColours(t *testing.T) {
	g := Grid{
		Rows: []string{"m1", "m2"},
		Cols: []string{"c1", "c2", "c3"},
		Values: [][]float64{
			{10, 55, nan},
			{-5, 100}, // short row: last cell missing
		},
	}
	lo, _ := colorAt(0)
	hi, _ := colorAt(1)
	if lo != "#440154" || hi != "#fde725" {
		t.Fatalf("scale ends %s %s", lo, hi)
	}
	for _, rev := range []bool{false, true} {
		svg := mustParse(t, string(Heatmap("t", g, Options{Reverse: rev})))
		cells := svg.byClass("tb-cell")
		if len(cells) != 6 {
			t.Fatalf("want 6 cells, got %d", len(cells))
		}
		fill := func(i int) string { return cells[i].byName("rect")[0].attr["fill"] }
		wantMin, wantMax := lo, hi
		if rev {
			wantMin, wantMax = hi, lo
		}
		if fill(3) != wantMin || fill(4) != wantMax {
			t.Errorf("rev=%v: min cell %s, max cell %s; want %s %s", rev, fill(3), fill(4), wantMin, wantMax)
		}
		if f := fill(1); f == lo || f == hi {
			t.Errorf("middle value got an extreme colour %s", f)
		}
		for _, i := range []int{2, 5} {
			if !hasClass(cells[i], "tb-empty") || fill(i) != "none" {
				t.Errorf("cell %d should be empty", i)
			}
		}
		if got := cells[0].byName("text")[0].text; got != "10" {
			t.Errorf("cell text %q, want 10", got)
		}
		if tip := cells[4].tooltip(); tip != "m2 · c2: 100" {
			t.Errorf("tooltip %q", tip)
		}
	}
	// Fixed scale: values at Min and Max get the extremes, beyond is clamped.
	svg := mustParse(t, string(Heatmap("t", Grid{Rows: []string{"r"}, Cols: []string{"a", "b", "c"}, Values: [][]float64{{0, 1, 7}}},
		Options{Min: new(0.0), Max: new(1.0)})))
	cells := svg.byClass("tb-cell")
	if f := cells[0].byName("rect")[0].attr["fill"]; f != lo {
		t.Errorf("value at Min: %s", f)
	}
	if f := cells[2].byName("rect")[0].attr["fill"]; f != hi {
		t.Errorf("value beyond Max: %s", f)
	}
	// Text colour contrasts with the cell.
	if _, ink := colorAt(0); ink != "#fff" {
		t.Errorf("dark cell ink %s", ink)
	}
	if _, ink := colorAt(1); ink != "#111" {
		t.Errorf("bright cell ink %s", ink)
	}
}

func TestDistribution(t *testing.T) {
	st := computeBox([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	if st.q1 != 3 || st.med != 5 || st.q3 != 7 || st.lowW != 1 || st.hiW != 9 || st.mean != 5 {
		t.Errorf("box stats %+v", st)
	}
	st = computeBox([]float64{1, 2, 3, 4, 5, 6, 7, 8, 100})
	if st.hiW != 8 || st.max != 100 {
		t.Errorf("outlier not excluded from whisker: %+v", st)
	}

	vals := []float64{1, 2, 3, 4, 5, 6, 7, 8, 100, nan, math.Inf(1)}
	svg := mustParse(t, string(Distribution("t", []Series{{Label: "a", Values: vals}, {Label: "empty"}}, Options{})))
	pos := tickScale(t, svg, true)
	med := svg.byClass("tb-median")
	if len(med) != 1 || !near(med[0].f(t, "x1"), pos(5), 0.3) {
		t.Fatalf("median line %v, want x=%v", med, pos(5))
	}
	box := svg.byClass("tb-box")[0]
	if !near(box.f(t, "x"), pos(3), 0.3) || !near(box.f(t, "x")+box.f(t, "width"), pos(7), 0.3) {
		t.Errorf("box spans %v+%v, want %v..%v", box.attr["x"], box.attr["width"], pos(3), pos(7))
	}
	out := svg.byClass("tb-outliers")
	if len(out) != 1 || strings.Count(out[0].attr["d"], "M") != 1 {
		t.Errorf("want one outlier dot, got %v", out)
	}
	if !strings.Contains(svg.allText(), "n=9") {
		t.Error("n should count only finite values (9)")
	}
	if !strings.Contains(svg.allText(), "no data") {
		t.Error("empty series should say no data")
	}
	if len(svg.byClass("tb-hist")) != 1 {
		t.Error("want one histogram path")
	}
}

func bigSeries() []Series {
	rng := rand.New(rand.NewPCG(5, 6))
	ss := make([]Series, 10)
	for i := range ss {
		vs := make([]float64, 10000)
		for k := range vs {
			vs[k] = rng.NormFloat64()*0.15 + 0.1*float64(i)
			if k%97 == 0 {
				vs[k] = rng.Float64()*10 - 5 // heavy tails: many outliers
			}
		}
		ss[i] = Series{Label: "model-" + strconv.Itoa(i), Values: vs}
	}
	return ss
}

func TestDistributionSizeBound(t *testing.T) {
	h := Distribution("big", bigSeries(), Options{})
	if len(h) > 100_000 {
		t.Errorf("10×10k distribution is %d bytes, want < 100 KB", len(h))
	}
	svg := mustParse(t, string(h))
	if n := len(svg.all(func(*node) bool { return true })); n > 400 {
		t.Errorf("%d elements; values must be aggregated", n)
	}
	t.Logf("10×10k distribution: %d bytes", len(h))

	// Worst case for outliers: IQR 0, so every other value is an outlier.
	// Dots are merged per pixel, so their count is bounded by the width.
	ss := make([]Series, 10)
	for i := range ss {
		vs := make([]float64, 10000)
		for k := range vs {
			if k%2 == 0 {
				vs[k] = float64(k) / 10000
			} else {
				vs[k] = 0.5
			}
		}
		ss[i] = Series{Label: "s", Values: vs}
	}
	h = Distribution("outliers", ss, Options{})
	svg = mustParse(t, string(h))
	for _, o := range svg.byClass("tb-outliers") {
		if n := strings.Count(o.attr["d"], "M"); n > 800 {
			t.Fatalf("%d outlier dots in one row; want them merged per pixel", n)
		}
	}
	if len(h) > 100_000 {
		t.Errorf("outlier-heavy distribution is %d bytes", len(h))
	}
}

func TestTrend(t *testing.T) {
	lines := []Line{
		{Label: "a", Points: []XY{{X: 3, XLabel: "r3", Y: 0.3}, {X: 1, XLabel: "r1", Y: 0.1}, {X: 2, XLabel: "r2", Y: nan}, {X: 4, Y: 0.4}}},
		{Label: "b", Points: []XY{{X: 1, Y: 0.5}, {X: nan, Y: 1}}},
	}
	svg := mustParse(t, string(Trend("t", lines, Options{Refs: []RefLine{{Value: 0.45, Label: "goal"}}})))
	paths := svg.byClass("tb-line")
	if len(paths) != 2 {
		t.Fatalf("want 2 lines, got %d", len(paths))
	}
	// Line a: point 1, gap at 2, then 3 -> 4: two subpaths.
	if d := paths[0].attr["d"]; strings.Count(d, "M") != 2 || strings.Count(d, "L") != 1 {
		t.Errorf("gap not respected: %q", d)
	}
	pts := svg.byClass("tb-point")
	if len(pts) != 4 {
		t.Errorf("want 4 markers, got %d", len(pts))
	}
	// Points sorted by x: first marker of a is r1 at y=0.1.
	ypos := tickScale(t, svg, false)
	if !strings.Contains(pts[0].tooltip(), "r1") || !near(pts[0].f(t, "cy"), ypos(0.1), 0.3) {
		t.Errorf("first marker %q at %v", pts[0].tooltip(), pts[0].attr["cy"])
	}
	var labels []string
	for _, tk := range svg.byClass("tb-tick") {
		if tk.up.attr["text-anchor"] == "middle" {
			labels = append(labels, tk.text)
		}
	}
	if !slices.Equal(labels, []string{"r1", "r2", "r3", "4"}) {
		t.Errorf("x labels %v", labels)
	}
	if len(svg.byClass("tb-ref")) != 1 {
		t.Error("missing reference line")
	}
	if len(svg.byClass("tb-legend")) != 1 {
		t.Error("missing legend")
	}
	// Single point: visible marker, axis around it.
	one := mustParse(t, string(Trend("t", []Line{{Points: []XY{{X: 5, Y: 2}}}}, Options{})))
	if len(one.byClass("tb-point")) != 1 {
		t.Error("single point not drawn")
	}
	// Many points: labels thinned, no per-point markers, still small.
	var big []XY
	for i := 0; i < 1000; i++ {
		big = append(big, XY{X: float64(i), XLabel: "run-" + strconv.Itoa(i), Y: math.Sin(float64(i))})
	}
	h := Trend("t", []Line{{Label: "x", Points: big}}, Options{})
	many := mustParse(t, string(h))
	if n := len(many.byClass("tb-tick")); n > 40 {
		t.Errorf("%d x labels for 1000 runs; should be thinned", n)
	}
	if len(many.byClass("tb-point")) != 0 || len(h) > 60_000 {
		t.Errorf("1000-point trend: %d markers, %d bytes", len(many.byClass("tb-point")), len(h))
	}
}

func TestDeterministic(t *testing.T) {
	render := func() string {
		var b strings.Builder
		for _, k := range []string{"bars", "dist", "scatter", "heatmap", "trend"} {
			b.WriteString(string(everyChart("x y")[k]))
		}
		b.WriteString(string(Distribution("d", bigSeries(), Options{})))
		lines := []Line{{Label: "a", Points: []XY{{X: 2, XLabel: "b", Y: 1}, {X: 1, XLabel: "a", Y: 2}, {X: 3, XLabel: "c", Y: 0}}}}
		b.WriteString(string(Trend("t", lines, Options{})))
		return b.String()
	}
	first := render()
	for i := 0; i < 5; i++ {
		if render() != first {
			t.Fatal("output differs between runs")
		}
	}
}

func TestOptionsSizes(t *testing.T) {
	bars := []Bar{{Label: "a", Value: 1}, {Label: "b", Value: 2}}
	svg := mustParse(t, string(BarsCI("t", bars, Options{Width: 400, Height: 300})))
	if svg.attr["viewBox"] != "0 0 400 300" {
		t.Errorf("viewBox %q", svg.attr["viewBox"])
	}
	// Content stays inside the viewBox.
	for _, r := range svg.byName("rect") {
		if x := r.f(t, "x"); x < 0 || x+r.f(t, "width") > 400 {
			t.Errorf("rect outside the chart: %v", r.attr)
		}
	}
	svg = mustParse(t, string(Trend("t", []Line{{Points: []XY{{X: 1, Y: 1}}}}, Options{Height: 10})))
	if h, _ := strconv.ParseFloat(strings.Fields(svg.attr["viewBox"])[3], 64); h < 80 {
		t.Errorf("tiny Height should be raised to a minimum, got %v", h)
	}
	if strings.Contains(string(BarsCI("Visible", bars, Options{HideTitle: true})), "tb-title") {
		t.Error("HideTitle still shows the title")
	}
	if !strings.Contains(string(BarsCI("Visible", bars, Options{})), "tb-title") {
		t.Error("title not shown")
	}
}

func BenchmarkDistribution10x10k(b *testing.B) {
	ss := bigSeries()
	b.ReportAllocs()
	for b.Loop() {
		_ = Distribution("bench", ss, Options{})
	}
}
