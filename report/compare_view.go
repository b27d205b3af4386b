package report

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"tribunal/charts"
	"tribunal/stats"
)

// compareView is the HTML report of several runs side by side: a row per
// run and model, the charts, and the tasks the runs share.
type compareView struct {
	Rows   []compareRow
	Charts []template.HTML
	// TaskCols are "#run · model" labels; TaskRows the tasks the runs share.
	TaskCols []string
	TaskRows []compareTask
	TaskMore int
}

type compareRow struct {
	ID                                      int64
	Name, Status, Created, Tasks, Models    string
	Score, PassRate, Cost, Time, Best, Tags string
}

type compareTask struct {
	TaskID string
	Values []string
}

func buildCompare(runs []*runView) *compareView {
	c := &compareView{}
	var bars []charts.Bar
	lines := map[string]*charts.Line{}
	var lineOrder []string
	for i, r := range runs {
		d := r.data
		o := d.Summary.Overall
		var models []string
		for _, t := range d.Run.Targets {
			models = append(models, t.Model)
		}
		best := "–"
		for _, t := range d.Run.Targets {
			if t.ID == d.Summary.Best.OverallTargetID {
				best = t.Label()
			}
		}
		c.Rows = append(c.Rows, compareRow{ID: r.ID, Name: r.Name, Status: r.Status, Created: r.Created,
			Tasks: strconv.FormatInt(d.Summary.Tasks, 10), Models: strings.Join(models, ", "), Score: fnum(o.AvgScore, 2),
			PassRate: fpct(o.PassRate), Cost: fusd(o.CostUSD), Time: fms(o.AvgTimeMs), Best: best, Tags: strings.Join(r.Tags, ", ")})
		for _, t := range d.Run.Targets {
			xs := r.scores[t.ID]
			if len(xs) == 0 {
				continue
			}
			e := stats.MeanCI(xs, uint64(t.ID))
			bars = append(bars, charts.Bar{Label: fmt.Sprintf("#%d · %s", r.ID, t.Label()), Value: e.Mean, Lo: e.Lo, Hi: e.Hi, N: e.N})
			l := lines[t.Label()]
			if l == nil {
				l = &charts.Line{Label: t.Label()}
				lines[t.Label()] = l
				lineOrder = append(lineOrder, t.Label())
			}
			l.Points = append(l.Points, charts.XY{X: float64(i), XLabel: fmt.Sprintf("#%d", r.ID), Y: e.Mean})
		}
	}
	scale := scaleOf(runs[0].data)
	if len(bars) > 0 {
		c.Charts = append(c.Charts, charts.BarsCI("Mean score per run and model (95% CI)", bars, charts.Options{Min: scale[0], Max: scale[1]}))
	}
	var ls []charts.Line
	for _, k := range lineOrder {
		if len(lines[k].Points) > 1 {
			ls = append(ls, *lines[k])
		}
	}
	if len(ls) > 0 {
		c.Charts = append(c.Charts, charts.Trend("Mean score across runs", ls, charts.Options{Min: scale[0], Max: scale[1]}))
	}
	// Per task: each (run, target)'s mean score on the tasks the runs share.
	type col struct {
		run *runView
		tid int64
	}
	var cols []col
	for _, r := range runs {
		for _, t := range r.data.Run.Targets {
			cols = append(cols, col{r, t.ID})
			c.TaskCols = append(c.TaskCols, fmt.Sprintf("#%d · %s", r.ID, t.Model))
		}
	}
	perTask := map[string]map[int]string{}
	var order []string
	for ci, cl := range cols {
		for _, it := range cl.run.Items {
			if it.Model != cl.run.labels[cl.tid] {
				continue
			}
			key := it.TaskID
			if perTask[key] == nil {
				perTask[key] = map[int]string{}
				order = append(order, key)
			}
			if perTask[key][ci] == "" {
				perTask[key][ci] = it.Score
			}
		}
	}
	slices.Sort(order)
	for _, k := range order {
		if len(c.TaskRows) == 300 {
			c.TaskMore = len(order) - 300
			break
		}
		row := compareTask{TaskID: k, Values: make([]string, len(cols))}
		for i := range cols {
			row.Values[i] = cmp.Or(perTask[k][i], "")
		}
		c.TaskRows = append(c.TaskRows, row)
	}
	return c
}
