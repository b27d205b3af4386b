package report

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"tribunal/analysis"
	"tribunal/charts"
	"tribunal/format"
	"tribunal/runs"
	"tribunal/spreadsheet"
	"tribunal/stats"
)

// FormatComparison names the JSON export of a comparison.
const FormatComparison = "tribunal.comparison/v1"

// MaxComparisonTasks bounds the task rows a comparison export carries; the
// statistics always cover every task.
const MaxComparisonTasks = 2000

// comparePage is how many task rows one runs.Compare call returns at most.
const comparePage = 200

// LoadComparison is the comparison of runs ids against the baseline run
// (0: none) with its first MaxComparisonTasks task rows, from runs.Compare.
func LoadComparison(ctx context.Context, svc *runs.Service, ids []int64, baseline int64) (*runs.Comparison, error) {
	var out *runs.Comparison
	for page := 1; ; page++ {
		c, err := svc.Compare(ctx, ids, baseline, analysis.TaskFilter{}, page, comparePage)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = c
		} else {
			out.Tasks.Items = append(out.Tasks.Items, c.Tasks.Items...)
		}
		if page >= c.Tasks.Pages() || len(out.Tasks.Items) >= MaxComparisonTasks {
			break
		}
	}
	out.Tasks.Items = out.Tasks.Items[:min(len(out.Tasks.Items), MaxComparisonTasks)]
	out.Tasks.Page, out.Tasks.PerPage = 1, max(len(out.Tasks.Items), 1)
	return out, nil
}

// WriteComparisonJSON writes the comparison as one JSON document.
func WriteComparisonJSON(w io.Writer, c *runs.Comparison, now time.Time) error {
	doc := struct {
		Format     string    `json:"format"`
		ExportedAt time.Time `json:"exported_at"`
		*runs.Comparison
	}{FormatComparison, now.UTC().Truncate(time.Second), c}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(doc)
}

// WriteComparisonCSV writes one row per task and compared model: its score
// (mean over repeats), repeats scored and passed, time, cost, whether it
// regressed against the baseline, and its answer (the first repeat's).
func WriteComparisonCSV(w io.Writer, c *runs.Comparison) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"task_id", "category", "run_id", "run", "provider", "model", "baseline", "score", "scored", "passed", "time_ms", "cost_usd", "regressed", "answer"})
	num := func(p *float64) string {
		if p == nil || math.IsNaN(*p) {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	for _, t := range c.Tasks.Items {
		for i, e := range c.Entries {
			r := t.Results[i]
			if r == nil {
				continue
			}
			answer := ""
			if t.Answers[i] != nil {
				answer = *t.Answers[i]
			}
			regressed := slices.Contains(t.RegressedIn, i)
			// Text a model or a user wrote never runs as a formula in a spreadsheet.
			cw.Write([]string{spreadsheet.Defuse(t.TaskID), spreadsheet.Defuse(t.Category), strconv.FormatInt(e.RunID, 10),
				spreadsheet.Defuse(e.RunName), spreadsheet.Defuse(e.Provider), spreadsheet.Defuse(e.Model),
				strconv.FormatBool(e.RunID == c.BaselineRun), num(r.Score), strconv.FormatInt(r.Scored, 10), strconv.FormatInt(r.Passed, 10), num(r.TimeMs), num(r.CostUSD),
				strconv.FormatBool(regressed), spreadsheet.Defuse(answer)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteComparisonHTML writes the comparison as one self-contained HTML file:
// per model with intervals and deltas, the verdicts, charts, and every task's
// scores and answers.
func WriteComparisonHTML(w io.Writer, c *runs.Comparison, now time.Time) error {
	v := comparisonView{Title: "Run comparison", Generated: now.UTC().Format("2006-01-02 15:04 UTC"),
		TasksTotal: c.Tasks.Total, TasksMore: c.Tasks.Total - int64(len(c.Tasks.Items))}
	for _, r := range c.Runs {
		v.Runs = append(v.Runs, comparisonRun{ID: r.ID, Name: r.Name, Status: string(r.Status), Created: when(&r.CreatedAt),
			Baseline: r.ID == c.BaselineRun})
		if r.ID == c.BaselineRun {
			v.Baseline = r.Name
		}
	}
	for _, e := range c.Entries {
		row := comparisonEntry{Label: e.Label(), Model: e.Model, Provider: e.Provider, Version: e.Version, Run: e.RunName,
			Baseline: e.RunID == c.BaselineRun, Score: estimate(e.Score, 2), N: e.Score.N, PassRate: estimatePct(e.PassRate),
			Time: fms(e.TimeMs), TPS: fnum(e.TPS, 1), Cost: fusd(e.CostUSD), Delta: format.None}
		if d := e.Delta; d != nil {
			row.Delta = fmt.Sprintf("%+.2f [%+.2f, %+.2f]", d.Mean, d.Lo, d.Hi)
			switch {
			case d.Lo > 0:
				row.DeltaClass = "ok"
			case d.Hi < 0:
				row.DeltaClass = "bad"
			}
		}
		v.Entries = append(v.Entries, row)
	}
	for _, t := range c.PairTests {
		title := analysis.PairingTitle(t.Pairing)
		if len(v.Verdicts) == 0 || v.Verdicts[len(v.Verdicts)-1].Title != title {
			v.Verdicts = append(v.Verdicts, verdictGroup{Title: title})
		}
		line := verdictLine{Verdict: t.Verdict}
		if t.EnoughData {
			line.Detail = fmt.Sprintf("mean difference %s · Wilcoxon p %s · McNemar p %s · Holm-adjusted p %s",
				estimate(t.Diff, 2), format.P(t.PScore), format.P(t.PPass), format.P(t.PHolm))
		}
		g := &v.Verdicts[len(v.Verdicts)-1]
		g.Lines = append(g.Lines, line)
	}
	v.Charts = comparisonCharts(c)
	for _, t := range c.Tasks.Items {
		row := comparisonTask{TaskID: t.TaskID, Category: t.Category, Cells: make([]comparisonCell, len(c.Entries))}
		for _, i := range t.RegressedIn {
			row.Regressed = append(row.Regressed, c.Entries[i].Model)
			row.Cells[i].Regressed = true
		}
		for i := range c.Entries {
			cell := &row.Cells[i]
			cell.Score = format.None
			if r := t.Results[i]; r != nil {
				cell.Score = format.Score(r.Score)
			}
			if t.Answers[i] != nil {
				cell.Answer = *t.Answers[i]
			}
		}
		v.Tasks = append(v.Tasks, row)
	}
	return pages.ExecuteTemplate(w, "compare.html.tmpl", v)
}

func estimate(e stats.Estimate, prec int) string {
	if e.N == 0 {
		return format.None
	}
	return format.CI(e.Mean, e.Lo, e.Hi, prec)
}

func estimatePct(e stats.Estimate) string {
	if e.N == 0 {
		return format.None
	}
	return format.CI(e.Mean*100, e.Lo*100, e.Hi*100, 0) + " %"
}

// comparisonCharts are the compare page's charts: mean scores with their
// intervals, score against cost, and the category heatmap.
func comparisonCharts(c *runs.Comparison) []template.HTML {
	var out []template.HTML
	bars := make([]charts.Bar, len(c.Entries))
	var pts []charts.Point
	for i, e := range c.Entries {
		bars[i] = charts.Bar{Label: e.Label(), Value: e.Score.Mean, Lo: e.Score.Lo, Hi: e.Score.Hi, N: e.Score.N}
		if e.Score.N == 0 {
			bars[i].Value = math.NaN()
		}
		if e.CostUSD != nil && e.Score.N > 0 {
			pts = append(pts, charts.Point{Label: e.Label(), X: *e.CostUSD, Y: e.Score.Mean})
		}
	}
	if len(bars) > 0 {
		out = append(out, charts.BarsCI("Mean score with 95% CI (bootstrap over tasks)", bars, charts.Options{}))
	}
	if len(pts) > 0 {
		out = append(out, charts.ScatterPareto("Score vs cost (the Pareto front is the best value)", "cost (USD)", "mean score", pts, charts.Options{}))
	}
	if len(c.Categories) > 1 {
		g := charts.Grid{Cols: c.Categories, Values: make([][]float64, len(c.Entries))}
		for i, e := range c.Entries {
			g.Rows = append(g.Rows, e.Label())
			g.Values[i] = make([]float64, len(c.Categories))
			for j := range c.Categories {
				g.Values[i][j] = math.NaN()
				if p := c.Grid[i][j]; p != nil {
					g.Values[i][j] = *p
				}
			}
		}
		out = append(out, charts.Heatmap("Mean score per category", g, charts.Options{}))
	}
	return out
}

type comparisonView struct {
	Title, Generated, Baseline string
	Runs                       []comparisonRun
	Entries                    []comparisonEntry
	Verdicts                   []verdictGroup
	Charts                     []template.HTML
	Tasks                      []comparisonTask
	TasksTotal, TasksMore      int64
}

type comparisonRun struct {
	ID                    int64
	Name, Status, Created string
	Baseline              bool
}

type comparisonEntry struct {
	Label, Model, Provider, Version, Run    string
	Baseline                                bool
	Score, PassRate, Time, TPS, Cost, Delta string
	DeltaClass                              string
	N                                       int
}

type verdictGroup struct {
	Title string
	Lines []verdictLine
}

type verdictLine struct{ Verdict, Detail string }

type comparisonTask struct {
	TaskID, Category string
	Regressed        []string // the models that score lower than the baseline
	Cells            []comparisonCell
}

type comparisonCell struct {
	Score, Answer string
	Regressed     bool
}
