package charts

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A series without any data gets no legend entry (nor an empty group), the
// others keep their colours, and the description still names it.
func TestTrendLegendLeavesOutEmptySeries(t *testing.T) {
	nan := math.NaN()
	lines := []Line{
		{Label: "empty", Points: []XY{{X: 0, XLabel: "r1", Y: nan}, {X: 1, XLabel: "r2", Y: nan}}},
		{Label: "a", Points: []XY{{X: 0, XLabel: "r1", Y: 1}, {X: 1, XLabel: "r2", Y: 2}}},
		{Label: "b", Points: []XY{{X: 0, XLabel: "r1", Y: 3}, {X: 1, XLabel: "r2", Y: nan}}},
	}
	svg := mustParse(t, string(Trend("t", lines, Options{})))
	var legend []string
	for _, g := range svg.byClass("tb-legend") {
		for _, tx := range g.byName("text") {
			legend = append(legend, tx.text)
		}
	}
	if !slices.Equal(legend, []string{"a", "b"}) {
		t.Errorf("legend %v, want [a b]", legend)
	}
	if n := len(svg.byClass("tb-series")); n != 2 {
		t.Errorf("%d series groups, want 2", n)
	}
	if got := svg.byClass("tb-line")[0].attr["stroke"]; got != seriesColor(1) {
		t.Errorf("series a drawn in %s, want its own colour %s", got, seriesColor(1))
	}
	if desc := svg.byName("desc")[0].text; !strings.Contains(desc, "empty: no data") {
		t.Errorf("description does not name the empty series: %q", desc)
	}
	// One series with data among empty ones still names itself.
	one := mustParse(t, string(Trend("t", lines[:2], Options{})))
	if g := one.byClass("tb-legend"); len(g) != 1 || len(g[0].byName("text")) != 1 {
		t.Errorf("a single named series with data should keep its legend entry")
	}
}

// X labels stay inside the viewBox, never touch each other, and the last
// run's label is shown, at the default width and at a phone's.
func TestTrendLabelsFit(t *testing.T) {
	for _, n := range []int{2, 3, 6, 9, 30} {
		for _, width := range []int{360, 800} {
			var pts []XY
			for i := range n {
				name := "Nightly main 2026-11-" + strconv.Itoa(i+1)
				if i%3 == 1 {
					name = "Release candidate " + strconv.Itoa(i)
				}
				pts = append(pts, XY{X: float64(i), XLabel: name, Y: float64(i % 4)})
			}
			svg := mustParse(t, string(Trend("t", []Line{{Label: "m", Points: pts}}, Options{Width: width})))
			vb := strings.Fields(svg.attr["viewBox"])
			W, _ := strconv.ParseFloat(vb[2], 64)
			H, _ := strconv.ParseFloat(vb[3], 64)
			var ticks []*node
			for _, tk := range svg.byClass("tb-tick") {
				if tk.up.attr["text-anchor"] == "middle" {
					ticks = append(ticks, tk)
				}
			}
			if len(ticks) == 0 {
				t.Fatalf("%d runs at %d px: no x labels", n, width)
			}
			prevHi := math.Inf(-1)
			for _, tk := range ticks {
				w := textWidth(tk.text, smallFont)
				x, y := tk.f(t, "x"), tk.f(t, "y")
				if x-w/2 < 0 || x+w/2 > W || y > H || y < 0 {
					t.Errorf("%d runs at %d px: label %q at %v,%v (%.0f wide) outside %vx%v", n, width, tk.text, x, y, w, W, H)
				}
				if x-w/2 < prevHi {
					t.Errorf("%d runs at %d px: label %q overlaps the one before", n, width, tk.text)
				}
				prevHi = x + w/2
			}
			if last := ticks[len(ticks)-1].tooltip(); last != pts[n-1].XLabel {
				t.Errorf("%d runs at %d px: last label is %q, want the latest run %q", n, width, last, pts[n-1].XLabel)
			}
		}
	}
}
