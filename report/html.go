package report

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"tribunal/charts"
	"tribunal/format"
	"tribunal/runs"
	"tribunal/stats"
	"tribunal/store"
)

// Options tune the HTML report.
type Options struct {
	// Title heads the report; empty: the run's name, or "Run comparison".
	Title string
	// MaxItems is how many items each run lists (0: 2,000; negative: none).
	// The aggregates and charts always cover every item.
	MaxItems int
	// Gates are gate results to show (from a run file), in order.
	Gates []GateLine
	// Now stamps the report; zero: the current time.
	Now time.Time
}

// GateLine is one gate's outcome as the report shows it.
type GateLine struct {
	Scope, Gate, Value string
	Pass               bool
}

const defaultMaxItems = 2000

//go:embed *.tmpl
var pageFiles embed.FS

// pages holds the run report (report.html.tmpl) and the comparison report
// (compare.html.tmpl); both share head.tmpl.
var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"join": strings.Join,
}).ParseFS(pageFiles, "*.tmpl"))

// WriteHTML writes one self-contained HTML file: the report of one run, or
// for several a comparison followed by each run's report.
func WriteHTML(ctx context.Context, w io.Writer, svc *runs.Service, opt Options, runIDs ...int64) error {
	if len(runIDs) == 0 {
		return fmt.Errorf("report: no run to export")
	}
	if opt.MaxItems == 0 {
		opt.MaxItems = defaultMaxItems
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	v := pageView{Generated: opt.Now.UTC().Format("2006-01-02 15:04 UTC"), Gates: opt.Gates}
	for _, id := range runIDs {
		r, err := buildRun(ctx, svc, id, opt.MaxItems)
		if err != nil {
			return err
		}
		v.Runs = append(v.Runs, r)
	}
	v.Title = opt.Title
	if v.Title == "" {
		if len(v.Runs) == 1 {
			v.Title = v.Runs[0].Name
		} else {
			v.Title = "Run comparison"
		}
	}
	if len(v.Runs) > 1 {
		v.Compare = buildCompare(v.Runs)
	}
	for _, g := range v.Gates {
		if !g.Pass {
			v.GatesFailed++
		}
	}
	return pages.ExecuteTemplate(w, "report.html.tmpl", v)
}

type pageView struct {
	Title, Generated string
	Runs             []*runView
	Compare          *compareView
	Gates            []GateLine
	GatesFailed      int
}

type runView struct {
	ID                               int64
	Name, Status, Phase, Error       string
	Created, Started, Finished, Took string
	TriggeredBy                      string
	Tags                             []string
	Collections                      []string
	Targets                          []targetView
	Judges                           []judgeView
	Tasks                            int64
	Repeats                          int
	Metrics, SystemPrompt, Weights   string
	Cards                            []card
	Models                           []modelRow
	SpreadCols                       [][2]string
	Measures                         []measureRow
	Grades                           []gradeRow
	Tools                            []toolRow
	ToolCols                         [][2]string
	Violations                       *violationTable
	Charts                           []template.HTML
	MetricCols                       []string
	MetricRows                       []metricRow
	GroupRows                        []groupRow
	PerTask                          []taskRow
	PerTaskMore                      int64
	Items                            []itemRow
	ItemsTotal                       int64
	ItemsCut                         bool

	// for comparisons
	scores   map[int64][]float64 // per target
	labels   map[int64]string
	data     *Data
	catMeans map[string]map[int64]*float64
	// BestNote says why no model is picked yet, or that the pick is provisional.
	BestNote string
	// Failures groups the run's failed items by phase and reason.
	Failures []store.FailureGroup
}

// groupRow is a use case's totals (Total) or one of its categories, a cell
// per target: mean score · cost.
type groupRow struct {
	Label string
	Total bool
	Cells []string
}

// groupRows lays the summary's use-case totals out by the run's targets.
func groupRows(sum *runs.Summary, targets []store.RunTarget) []groupRow {
	ucs := sum.UseCases
	if len(ucs) < 2 && (len(ucs) == 0 || len(ucs[0].Categories) < 2) {
		return nil
	}
	cells := func(totals []runs.GroupTotal) []string {
		out := make([]string, len(targets))
		for i, t := range targets {
			out[i] = format.None
			for _, g := range totals {
				if g.TargetID == t.ID {
					out[i] = fnum(g.MeanScore, 2) + " · " + fusd(g.CostUSD)
					if g.JudgeCostUSD > 0 {
						out[i] += " + " + fusd(&g.JudgeCostUSD)
					}
				}
			}
		}
		return out
	}
	var rows []groupRow
	for _, u := range ucs {
		rows = append(rows, groupRow{Label: runs.UseCaseName(u.UseCase), Total: true, Cells: cells(u.Targets)})
		for _, c := range u.Categories {
			rows = append(rows, groupRow{Label: c.Category, Cells: cells(c.Targets)})
		}
	}
	return rows
}

type targetView struct{ Label, Version, Settings, Tags, Price, Warmup string }
type judgeView struct{ Name, Model, Style, Scale, Personality string }
type card struct{ Label, Value, Note string }

type modelRow struct {
	Label, Overall, Score, PassRate, Done, Failed, Time, TPS, Cost, PerDollar string
	BestOverall, BestValue                                                    bool
}

// measureRow is one model's spread of one measure (runs.Measure.Cells).
type measureRow struct {
	Label, Measure string
	First          bool // the model's first row, which names it
	Cells          []string
}

// gradeRow is one model's human grades.
type gradeRow struct {
	Label, Correct, Partial, Wrong, Ungraded, Accuracy, Weighted string
}

type metricRow struct {
	Source, Metric string
	Values         []string
}

type taskRow struct {
	TaskID, Category, Score, PassRate, Done string
}

type itemRow struct {
	ID                                   int64
	TaskID, Model, Status, Score, Grade  string
	Question, Response, Reasoning, Error string
	Scores                               []string
	Violations                           []string
	Time, Tokens, Cost                   string
	Failed                               bool
}

func fnum(p *float64, prec int) string { return format.Num(p, prec) }

func fpct(p *float64) string { return format.Pct(p) }

func fusd(p *float64) string { return format.USD(p) }

func fms(p *float64) string { return format.Ms(p) }

// overallCI is a model's overall with its interval, as the run page shows it.
func overallCI(m runs.ModelScore) string {
	if m.OverallCI == nil {
		return format.None
	}
	return format.CI(m.OverallCI.Mean, m.OverallCI.Lo, m.OverallCI.Hi, 1) + " n=" + strconv.FormatInt(m.Scored, 10)
}

func when(t *time.Time) string {
	if t == nil {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func settingsText(s store.TargetSettings) string {
	var parts []string
	if s.Temperature != nil {
		parts = append(parts, "temperature "+strconv.FormatFloat(*s.Temperature, 'f', -1, 64))
	}
	if s.MaxTokens != nil {
		parts = append(parts, "max_tokens "+strconv.FormatInt(*s.MaxTokens, 10))
	}
	if s.ReasoningEffort != "" {
		parts = append(parts, "reasoning "+s.ReasoningEffort)
	}
	if s.SystemPrompt != "" {
		parts = append(parts, "own system prompt")
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, ", ")
}

func priceText(p store.Price) string {
	if p.InputPerMTok == nil || p.OutputPerMTok == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%s / $%s per Mtok", strconv.FormatFloat(*p.InputPerMTok, 'f', -1, 64), strconv.FormatFloat(*p.OutputPerMTok, 'f', -1, 64))
}

func buildRun(ctx context.Context, svc *runs.Service, runID int64, maxItems int) (*runView, error) {
	d, err := Load(ctx, svc, runID)
	if err != nil {
		return nil, err
	}
	r, sum := d.Run, d.Summary
	v := &runView{ID: r.ID, Name: r.Name, Status: string(r.Status), Phase: string(r.Phase), Error: r.Error,
		Created: when(&r.CreatedAt), Started: when(r.StartedAt), Finished: when(r.FinishedAt), TriggeredBy: r.TriggeredBy,
		Tags: r.Tags, Tasks: sum.Tasks, Repeats: max(r.Repeats, 1), SystemPrompt: r.Options.SystemPrompt,
		Metrics: cmp.Or(strings.Join(r.Options.Metrics, ", "), "all"), ItemsTotal: d.Progress.Total,
		scores: map[int64][]float64{}, labels: map[int64]string{}, data: d}
	if r.Status == store.RunFinished && d.Progress.Failed > 0 {
		v.Status = fmt.Sprintf("finished with %d failures", d.Progress.Failed)
	}
	if d.Progress.Failed > 0 {
		if v.Failures, err = svc.Failures(ctx, r.ID); err != nil {
			return nil, err
		}
	}
	if r.StartedAt != nil {
		end := time.Now()
		if r.FinishedAt != nil {
			end = *r.FinishedAt
		}
		v.Took = end.Sub(*r.StartedAt).Round(time.Second).String()
	}
	if len(r.Options.Weights) > 0 {
		var ws []string
		for k, w := range r.Options.Weights {
			ws = append(ws, k+" ×"+strconv.FormatFloat(w, 'f', -1, 64))
		}
		slices.Sort(ws)
		v.Weights = strings.Join(ws, ", ")
	}
	for _, c := range r.Collections {
		v.Collections = append(v.Collections, c.CollectionName)
	}
	for _, t := range r.Targets {
		v.labels[t.ID] = t.Label()
		v.Targets = append(v.Targets, targetView{Label: t.Label(), Version: t.Version, Settings: settingsText(t.Settings), Tags: strings.Join(t.Tags, ", "),
			Price: priceText(t.Price), Warmup: t.WarmupStatus})
	}
	for _, j := range d.Judges {
		jv := judgeView{Name: j.Name, Model: j.ProviderName + " / " + j.Model, Style: fmt.Sprintf("%s v%d", j.StyleName, j.StyleVersion),
			Scale: fmt.Sprintf("%d–%d", j.ScaleMin, j.ScaleMax), Personality: j.PersonalityName}
		v.Judges = append(v.Judges, jv)
	}
	o := sum.Overall
	totalCost := o.TotalCostUSD()
	v.Cards = []card{
		{"Mean score", fnum(o.AvgScore, 2), fmt.Sprintf("pass at ≥ %s", strconv.FormatFloat(sum.PassThreshold, 'f', -1, 64))},
		{"Pass rate", fpct(o.PassRate), fmt.Sprintf("%d of %d scored", o.Passed, o.Scored)},
		{"Items", fmt.Sprintf("%d", o.Items), fmt.Sprintf("%d completed · %d failed", o.Completed, o.Failed)},
		{"Mean time", fms(o.AvgTimeMs), "per answer"},
		{"Tokens/s", fnum(o.AvgTPS, 1), "mean generation speed"},
		{"Cost", fusd(totalCost), "models " + fusd(o.CostUSD) + " · judges " + fusd(o.JudgeCostUSD)},
	}
	overall := map[int64]runs.ModelScore{}
	for _, m := range sum.Models {
		overall[m.TargetID] = m
	}
	for _, pm := range sum.PerModel {
		ms := overall[pm.TargetID]
		v.Models = append(v.Models, modelRow{Label: pm.Label, Overall: overallCI(ms), Score: fnum(pm.AvgScore, 2),
			PassRate: fpct(pm.PassRate), Done: strconv.FormatInt(pm.Completed, 10), Failed: strconv.FormatInt(pm.Failed, 10),
			Time: fms(pm.AvgTimeMs), TPS: fnum(pm.AvgTPS, 1), Cost: fusd(pm.CostUSD), PerDollar: fnum(ms.PerDollar, 0),
			BestOverall: pm.TargetID == sum.Best.OverallTargetID && sum.Best.OverallTargetID != 0,
			BestValue:   pm.TargetID == sum.Best.ValueTargetID && sum.Best.ValueTargetID != 0})
	}
	v.SpreadCols = runs.SpreadColumns
	for _, pm := range sum.PerModel {
		ms, label := overall[pm.TargetID], pm.Label
		for i, m := range ms.Measures() {
			v.Measures = append(v.Measures, measureRow{Label: label, Measure: m.Name, First: i == 0, Cells: m.Cells()})
		}
		g := ms.Grades
		v.Grades = append(v.Grades, gradeRow{Label: label, Correct: strconv.FormatInt(g.Correct, 10), Partial: strconv.FormatInt(g.Partial, 10),
			Wrong: strconv.FormatInt(g.Wrong, 10), Ungraded: strconv.FormatInt(g.Ungraded, 10), Accuracy: fpct(g.Accuracy), Weighted: fpct(g.Weighted)})
	}
	v.Tools, v.ToolCols = toolRows(sum), runs.ToolColumns
	v.Violations = violationTableOf(sum.Violations, v.labels)
	v.BestNote = sum.Best.Note
	v.metricTable(d)
	v.GroupRows = groupRows(sum, d.Run.Targets)
	for _, t := range sum.PerTask {
		if len(v.PerTask) == 200 {
			v.PerTaskMore = sum.Tasks - 200
			break
		}
		v.PerTask = append(v.PerTask, taskRow{TaskID: t.TaskID, Category: t.Category, Score: fnum(t.AvgScore, 2), PassRate: fpct(t.PassRate),
			Done: fmt.Sprintf("%d/%d", t.Completed, t.Items)})
	}
	// One pass over the items: every score for the charts, the first rows for the list.
	err = EachItem(ctx, svc.Store(), runID, func(it *Item) error {
		tid := it.RunTargetID
		if it.Score != nil {
			v.scores[tid] = append(v.scores[tid], *it.Score)
		}
		if maxItems < 0 {
			return nil
		}
		if len(v.Items) >= maxItems {
			v.ItemsCut = true
			return nil
		}
		v.Items = append(v.Items, itemRowOf(it, v.labels[tid]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.catMeans = map[string]map[int64]*float64{}
	if sum.Breakdown != nil {
		type acc struct{ sum, n float64 }
		sums := map[string]map[int64]*acc{}
		for _, g := range sum.Breakdown.Groups {
			if g.AvgScore == nil || g.Scored == 0 {
				continue
			}
			if sums[g.Category] == nil {
				sums[g.Category] = map[int64]*acc{}
			}
			a := sums[g.Category][g.RunTargetID]
			if a == nil {
				a = &acc{}
				sums[g.Category][g.RunTargetID] = a
			}
			a.sum += *g.AvgScore * float64(g.Scored)
			a.n += float64(g.Scored)
		}
		for cat, m := range sums {
			v.catMeans[cat] = map[int64]*float64{}
			for tid, a := range m {
				mean := a.sum / a.n
				v.catMeans[cat][tid] = &mean
			}
		}
	}
	v.Charts = v.charts()
	return v, nil
}

// itemRowOf is an item's row in the list; label names its target.
func itemRowOf(it *Item, label string) itemRow {
	row := itemRow{ID: it.ID, TaskID: it.TaskID, Model: label, Status: string(it.Status),
		Score: fnum(it.Score, 2), Question: it.Question, Reasoning: it.Reasoning, Error: it.Error,
		Time: "–", Tokens: "–", Cost: fusd(it.CostUSD), Failed: it.Status == store.ItemFailed}
	if it.RepeatIndex > 1 {
		row.TaskID += fmt.Sprintf(" (repeat %d)", it.RepeatIndex)
	}
	if it.Grade != nil {
		row.Grade = *it.Grade
		if it.GradeNotes != "" {
			row.Grade += ": " + it.GradeNotes
		}
	}
	if it.Response != nil {
		row.Response = *it.Response
	}
	if it.TimeMs != nil {
		t := float64(*it.TimeMs)
		row.Time = fms(&t)
	}
	if it.CompletionTokens != nil {
		row.Tokens = strconv.FormatInt(*it.CompletionTokens, 10)
	}
	for _, s := range it.Scores {
		line := fmt.Sprintf("%s · %s: %s", s.Judge, s.Metric, strconv.FormatFloat(s.Score, 'f', -1, 64))
		if s.Reasoning != "" && !(s.Metric == "score" && s.Reasoning == it.Reasoning) {
			line += " — " + s.Reasoning
		}
		row.Scores = append(row.Scores, line)
	}
	for _, x := range it.Violations {
		row.Violations = append(row.Violations, fmt.Sprintf("%s · %s: %s", x.Judge, x.Category, x.Detail))
	}
	return row
}

// metricTable lays the per-metric means out with one column per target.
func (v *runView) metricTable(d *Data) {
	for _, t := range d.Run.Targets {
		v.MetricCols = append(v.MetricCols, t.Label())
	}
	for _, r := range d.Summary.PerMetric {
		row := metricRow{Source: cmp.Or(r.Name, r.Source), Metric: r.Metric}
		for _, c := range r.Cells {
			row.Values = append(row.Values, fnum(c.Mean, 2)+fmt.Sprintf(" (n=%d)", c.N))
		}
		v.MetricRows = append(v.MetricRows, row)
	}
}

// charts draws the run's charts from its aggregates and item scores.
func (v *runView) charts() []template.HTML {
	d := v.data
	var out []template.HTML
	scale := scaleOf(d)
	var bars []charts.Bar
	var series []charts.Series
	for _, t := range d.Run.Targets {
		xs := v.scores[t.ID]
		if len(xs) == 0 {
			continue
		}
		e := stats.MeanCI(xs, uint64(t.ID))
		bars = append(bars, charts.Bar{Label: t.Label(), Value: e.Mean, Lo: e.Lo, Hi: e.Hi, N: e.N})
		series = append(series, charts.Series{Label: t.Label(), Values: xs})
	}
	pass := []charts.RefLine{{Value: d.Summary.PassThreshold, Label: "pass"}}
	if len(bars) > 0 {
		out = append(out, charts.BarsCI("Mean score per model (95% CI)", bars, charts.Options{Min: scale[0], Max: scale[1], Refs: pass}))
		out = append(out, charts.Distribution("Score distribution per model", series, charts.Options{Min: scale[0], Max: scale[1], Refs: pass}))
	}
	var pts []charts.Point
	overall := map[int64]*float64{}
	for _, m := range d.Summary.Models {
		overall[m.TargetID] = m.Overall
	}
	for _, pm := range d.Summary.PerModel {
		if pm.CostUSD == nil || overall[pm.TargetID] == nil || pm.Items == 0 {
			continue
		}
		pts = append(pts, charts.Point{Label: pm.Provider + " / " + pm.Model, X: *pm.CostUSD, Y: *overall[pm.TargetID]})
	}
	if len(pts) > 0 {
		out = append(out, charts.ScatterPareto("Overall score vs cost (best value on the front)", "cost (USD)", "overall (0–100)", pts,
			charts.Options{XFormat: func(x float64) string { return fusd(&x) }}))
	}
	if len(v.catMeans) > 0 && len(d.Run.Targets) > 0 {
		cats := make([]string, 0, len(v.catMeans))
		for c := range v.catMeans {
			cats = append(cats, c)
		}
		slices.Sort(cats)
		if len(cats) > 40 {
			cats = cats[:40]
		}
		g := charts.Grid{Cols: cats}
		for _, t := range d.Run.Targets {
			g.Rows = append(g.Rows, t.Label())
			row := make([]float64, len(cats))
			for i, c := range cats {
				row[i] = math.NaN()
				if m := v.catMeans[c][t.ID]; m != nil {
					row[i] = math.Round(*m*100) / 100
				}
			}
			g.Values = append(g.Values, row)
		}
		out = append(out, charts.Heatmap("Mean score by category", g, charts.Options{Min: scale[0], Max: scale[1]}))
	}
	return out
}

// scaleOf is the judges' score scale, or 0–1 for checks-only runs.
func scaleOf(d *Data) [2]*float64 {
	lo, hi := 0.0, 1.0
	if len(d.Judges) > 0 {
		lo, hi = float64(d.Judges[0].ScaleMin), float64(d.Judges[0].ScaleMax)
	}
	return [2]*float64{&lo, &hi}
}
