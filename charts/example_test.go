package charts_test

import (
	"fmt"
	"html/template"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"tribunal/charts"
)

// sampleCharts renders every chart kind with realistic data (plus edge
// cases) for the preview page.
func sampleCharts() []template.HTML {
	rng := rand.New(rand.NewPCG(1, 2))
	models := []string{
		"gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022", "llama-3.1-70b-instruct",
		"mistral-large-latest", "qwen2.5-72b-instruct-with-an-absurdly-long-deployment-name-v2", "gemma-2-9b-it",
	}
	scores := []float64{0.86, 0.84, 0.71, 0.74, 0.69, 0.52}
	var bars []charts.Bar
	for i, m := range models {
		bars = append(bars, charts.Bar{Label: m, Value: scores[i], Lo: scores[i] - 0.04 - 0.01*float64(i), Hi: scores[i] + 0.03 + 0.01*float64(i), N: 200 + 37*i})
	}
	var series []charts.Series
	for i, m := range models {
		var vs []float64
		for k := 0; k < 2000; k++ {
			v := scores[i] + rng.NormFloat64()*0.12
			if rng.IntN(40) == 0 {
				v = rng.Float64()
			}
			vs = append(vs, math.Max(0, math.Min(1, v)))
		}
		series = append(series, charts.Series{Label: m, Values: vs})
	}
	series = append(series, charts.Series{Label: "pass/fail judge", Values: []float64{0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1}})
	series = append(series, charts.Series{Label: "likert 1-5 (rescaled)", Values: []float64{0.2, 0.4, 0.6, 0.6, 0.8, 0.8, 0.8, 1, 1, 0.6}})
	costs := []float64{2.50, 3.00, 0.35, 2.00, 0.40, 0.07}
	var pts []charts.Point
	for i, m := range models {
		pts = append(pts, charts.Point{Label: m, X: costs[i], Y: scores[i]})
	}
	pts = append(pts, charts.Point{Label: "tiny-local", X: 0.01, Y: 0.31}, charts.Point{Label: "big-expensive", X: 15, Y: 0.85})
	cats := []string{"reasoning", "coding", "math", "extraction", "summarisation", "safety refusals"}
	g := charts.Grid{Rows: models, Cols: cats}
	for i := range models {
		var row []float64
		for j := range cats {
			v := scores[i] + (rng.Float64()-0.5)*0.3
			if i == 2 && j == 4 {
				v = math.NaN()
			}
			row = append(row, math.Round(math.Max(0, math.Min(1, v))*100))
		}
		g.Values = append(g.Values, row)
	}
	var lines []charts.Line
	for i, m := range models[:4] {
		l := charts.Line{Label: m}
		for r := 0; r < 12; r++ {
			y := scores[i] - 0.1 + 0.01*float64(r) + (rng.Float64()-0.5)*0.04
			if i == 3 && r == 5 {
				y = math.NaN()
			}
			l.Points = append(l.Points, charts.XY{X: float64(r + 1), XLabel: "run-" + strconv.Itoa(r+1), Y: y})
		}
		lines = append(lines, l)
	}
	var kpi []charts.Line
	lat := charts.Line{Label: "p95 latency"}
	for r := 0; r < 30; r++ {
		lat.Points = append(lat.Points, charts.XY{X: float64(r), Y: 800 + 300*math.Sin(float64(r)/4) + rng.Float64()*100})
	}
	kpi = append(kpi, lat)
	// Stress cases: many points, many runs, many categories.
	var cloud []charts.Point
	for i := 0; i < 3000; i++ {
		c := math.Exp(rng.NormFloat64() * 1.2)
		cloud = append(cloud, charts.Point{Label: "m" + strconv.Itoa(i), X: c, Y: math.Min(1, 0.5+0.1*math.Log(c)+rng.NormFloat64()*0.08)})
	}
	var long []charts.XY
	for r := 0; r < 200; r++ {
		long = append(long, charts.XY{X: float64(r), XLabel: "2024-01-" + strconv.Itoa(r+1), Y: 0.6 + 0.2*math.Sin(float64(r)/20) + rng.NormFloat64()*0.02})
	}
	wide := charts.Grid{Rows: models[:3]}
	for j := 0; j < 24; j++ {
		wide.Cols = append(wide.Cols, "category-"+strconv.Itoa(j))
	}
	for range wide.Rows {
		var row []float64
		for range wide.Cols {
			row = append(row, rng.Float64())
		}
		wide.Values = append(wide.Values, row)
	}
	hostile := `</text><script>alert(1)</script> & "quotes" 'apos'`
	return []template.HTML{
		charts.BarsCI("Score by model (95% CI)", bars, charts.Options{Refs: []charts.RefLine{{Value: 0.75, Label: "target"}}}),
		charts.BarsCI("Score delta vs baseline", []charts.Bar{
			{Label: "a", Value: -12.5, Lo: -15, Hi: -9}, {Label: "b", Value: 4, Lo: 1, Hi: 7}, {Label: "c", Value: 22, Lo: math.NaN(), Hi: math.NaN()},
			{Label: "d (failed)", Value: math.NaN()}, {Label: hostile, Value: 3},
		}, charts.Options{Unit: " pp"}),
		charts.Distribution("Score distribution per model", series, charts.Options{}),
		charts.ScatterPareto("Score vs cost", "cost per 1M tokens (USD)", "score", pts, charts.Options{
			LogX: true, XFormat: func(v float64) string { return "$" + strconv.FormatFloat(v, 'g', 3, 64) },
		}),
		charts.ScatterPareto("Score vs cost (linear)", "cost", "score", pts, charts.Options{Bands: []charts.Band{{Lo: 0.7, Hi: 0.8, Label: "acceptable"}}}),
		charts.Heatmap("Score by category", g, charts.Options{Unit: "%"}),
		charts.Heatmap("Latency (lower is better)", charts.Grid{Rows: models[:3], Cols: []string{"p50", "p95", "p99"},
			Values: [][]float64{{120, 480, 900}, {95, 300, 1200}, {200, 650, 2100}}}, charts.Options{Reverse: true, Unit: " ms"}),
		charts.Trend("Score across runs", lines, charts.Options{Min: new(0.0), Max: new(1.0), Refs: []charts.RefLine{{Value: 0.7, Label: "pass threshold"}}, Bands: []charts.Band{{Lo: 0.8, Hi: 1, Label: "good"}}}),
		charts.Trend("p95 latency", kpi, charts.Options{Unit: " ms"}),
		charts.Trend("single point", []charts.Line{{Label: "only run", Points: []charts.XY{{X: 5, XLabel: "2024-06-01", Y: 0.5}}}}, charts.Options{Height: 220}),
		charts.BarsCI("Empty", nil, charts.Options{}),
		charts.ScatterPareto("3000 points, log x", "cost", "score", cloud, charts.Options{LogX: true}),
		charts.Trend("200 runs", []charts.Line{{Label: "score", Points: long}}, charts.Options{Height: 260}),
		charts.Heatmap("24 categories", wide, charts.Options{}),
		charts.ScatterPareto(hostile, hostile, hostile, []charts.Point{{Label: hostile, X: 1, Y: 1}, {Label: "x", X: 1, Y: 1}}, charts.Options{}),
	}
}

// TestPreview writes every chart kind into one self-contained HTML file,
// on a light and a dark background, when CHARTS_PREVIEW names the file.
func TestPreview(t *testing.T) {
	path := os.Getenv("CHARTS_PREVIEW")
	if path == "" {
		t.Skip("set CHARTS_PREVIEW=/tmp/charts.html to write a preview page")
	}
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>charts preview</title><style>
body{margin:0;display:flex;font-family:system-ui,sans-serif}
.col{flex:1;padding:16px;min-width:0}
.light{background:#fff;color:#373c44}
.dark{background:rgb(19,22.5,30.5);color:#c2c7d0}
figure{margin:0 0 24px}
</style></head><body>`)
	all := sampleCharts()
	for _, cls := range []string{"light", "dark"} {
		fmt.Fprintf(&b, `<div class="col %s">`, cls)
		for _, svg := range all {
			b.WriteString("<figure>")
			b.WriteString(string(svg))
			b.WriteString("</figure>")
		}
		b.WriteString(`</div>`)
	}
	b.WriteString(`</body></html>`)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, b.Len())
}

// ExampleBarsCI shows the markup being embedded in a page.
func ExampleBarsCI() {
	svg := charts.BarsCI("Score by model", []charts.Bar{
		{Label: "model-a", Value: 0.82, Lo: 0.78, Hi: 0.86, N: 120},
		{Label: "model-b", Value: 0.74, Lo: 0.69, Hi: 0.79, N: 118},
	}, charts.Options{HideTitle: true})
	fmt.Println(strings.HasPrefix(string(svg), "<svg"), strings.Contains(string(svg), `role="img"`))
	// Output: true true
}

// ExampleParetoFront picks the "best value" models: nothing else is both
// cheaper and better.
func ExampleParetoFront() {
	pts := []charts.Point{
		{Label: "cheap", X: 0.1, Y: 0.60},
		{Label: "mid", X: 1.0, Y: 0.80},
		{Label: "worse-and-pricier", X: 2.0, Y: 0.70},
		{Label: "best", X: 3.0, Y: 0.90},
	}
	for _, i := range charts.ParetoFront(pts) {
		fmt.Println(pts[i].Label)
	}
	// Output:
	// cheap
	// mid
	// best
}
