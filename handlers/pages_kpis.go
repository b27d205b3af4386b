package handlers

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/charts"
	"tribunal/kpi"
	"tribunal/store"
	"tribunal/views"
)

// ---- KPIs ----

func scopeOf(collectionID, scheduleID *int64) string {
	switch {
	case collectionID != nil:
		return "c:" + strconv.FormatInt(*collectionID, 10)
	case scheduleID != nil:
		return "s:" + strconv.FormatInt(*scheduleID, 10)
	}
	return ""
}

// parseScope reads a scope choice ("", "c:<id>", "s:<id>").
func parseScope(v string) (collectionID, scheduleID *int64, err error) {
	if v == "" {
		return nil, nil, nil
	}
	kind, idText, _ := strings.Cut(v, ":")
	id, perr := strconv.ParseInt(idText, 10, 64)
	if perr != nil || (kind != "c" && kind != "s") {
		return nil, nil, &store.ValidationError{Field: "scope", Message: fmt.Sprintf("is not a valid choice: %q", v)}
	}
	if kind == "c" {
		return &id, nil, nil
	}
	return nil, &id, nil
}

// scopeLabel names the runs a KPI or alert applies to.
func scopeLabel(collectionID, scheduleID *int64, cols []store.Collection, scheds []store.Schedule) string {
	switch {
	case collectionID != nil:
		for _, c := range cols {
			if c.ID == *collectionID {
				return "collection " + c.Name
			}
		}
		return fmt.Sprintf("collection %d", *collectionID)
	case scheduleID != nil:
		for _, s := range scheds {
			if s.ID == *scheduleID {
				return "schedule " + s.Name
			}
		}
		return fmt.Sprintf("schedule %d", *scheduleID)
	}
	return "every run"
}

func kpiField(field, _ string) string {
	switch field {
	case "name", "formula", "description":
		return field
	case "collection_id", "schedule_id", "scope":
		return "scope"
	}
	return ""
}

// kpiChoices fills the scopes and metric names a KPI form offers.
func (h *Handler) kpiChoices(ctx context.Context, f *views.KPIForm) error {
	var err error
	if f.Collections, err = h.store.Collections(ctx); err != nil {
		return err
	}
	if f.Schedules, err = h.store.Schedules(ctx); err != nil {
		return err
	}
	f.Metrics, err = h.store.MetricList(ctx)
	return err
}

// metricNames are the names of a metric list, in its order.
func metricNames(list []kpi.MetricInfo) []string {
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = m.Name
	}
	return out
}

func kpiForm(c echo.Context) (store.KPIInput, views.KPIForm, error) {
	f := views.KPIForm{Name: c.FormValue("name"), Formula: c.FormValue("formula"), Description: c.FormValue("description"), Scope: c.FormValue("scope")}
	in := store.KPIInput{Name: f.Name, Formula: f.Formula, Description: f.Description}
	var err error
	in.CollectionID, in.ScheduleID, err = parseScope(f.Scope)
	return in, f, err
}

func (h *Handler) showKPIs(c echo.Context) error {
	return h.renderKPIs(c, http.StatusOK, views.KPIForm{Scope: c.QueryParam("scope")})
}

func (h *Handler) renderKPIs(c echo.Context, status int, f views.KPIForm) error {
	ctx := c.Request().Context()
	if err := h.kpiChoices(ctx, &f); err != nil {
		return err
	}
	list, err := h.store.KPIs(ctx)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(ctx)
	if err != nil {
		return err
	}
	v := views.KPIsView{Form: f, Unread: h.unread(ctx)}
	for _, k := range list {
		row := views.KPIRow{KPI: k, Scope: scopeLabel(k.CollectionID, k.ScheduleID, f.Collections, f.Schedules)}
		if p, ok := latest[k.ID]; ok {
			row.Latest = &p
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, status, views.KPIsPage(v))
}

func (h *Handler) createKPIPage(c echo.Context) error {
	in, f, err := kpiForm(c)
	var k *store.KPI
	if err == nil {
		k, err = h.saveKPI(withoutCancel(c), 0, in)
	}
	if err != nil {
		status, errs, ok := formErrors(err, kpiField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderKPIs(c, status, f)
	}
	return redirectFlash(c, "KPI created.", fmt.Sprintf("/kpis/%d", k.ID))
}

// checkFormulaPage validates the formula being typed (as POST /api/kpis/validate does).
func (h *Handler) checkFormulaPage(c echo.Context) error {
	formula := c.FormValue("formula")
	v, err := h.store.ValidateFormula(c.Request().Context(), formula)
	if err != nil {
		return err
	}
	var metrics []string
	if v.OK {
		if f, errs := kpi.Compile(formula, nil); errs == nil {
			metrics = f.Metrics()
		}
	}
	return render(c, http.StatusOK, views.FormulaCheck(formula, v, metrics))
}

func (h *Handler) showKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	k, err := h.store.KPI(c.Request().Context(), id)
	if err != nil {
		return err
	}
	f := views.KPIForm{ID: k.ID, Name: k.Name, Formula: k.Formula, Description: k.Description, Scope: scopeOf(k.CollectionID, k.ScheduleID)}
	return h.renderKPI(c, http.StatusOK, k, f)
}

func (h *Handler) renderKPI(c echo.Context, status int, k *store.KPI, f views.KPIForm) error {
	ctx := c.Request().Context()
	if err := h.kpiChoices(ctx, &f); err != nil {
		return err
	}
	points, err := h.store.KPITrend(ctx, k.ID, 200)
	if err != nil {
		return err
	}
	alerts, err := h.store.Alerts(ctx)
	if err != nil {
		return err
	}
	v := views.KPIView{KPI: *k, Form: f, Scope: scopeLabel(k.CollectionID, k.ScheduleID, f.Collections, f.Schedules), Unread: h.unread(ctx)}
	for _, a := range alerts {
		if a.KPIID != nil && *a.KPIID == k.ID {
			v.Alerts = append(v.Alerts, a)
		}
	}
	v.Runs, v.Chart = kpiRuns(k.Name, points)
	return render(c, status, views.KPIPage(v))
}

// kpiRuns groups a KPI's values by run (newest first for the table) and
// draws them: one line for the whole run, one per model.
func kpiRuns(name string, points []store.KPIPoint) ([]views.KPIRunRow, template.HTML) {
	var rows []views.KPIRunRow
	index := map[int64]int{}
	lines := map[string]*charts.Line{}
	var order []string
	for _, p := range points {
		i, ok := index[p.RunID]
		if !ok {
			i = len(rows)
			index[p.RunID] = i
			rows = append(rows, views.KPIRunRow{RunID: p.RunID, RunName: p.RunName, Finished: p.FinishedAt})
		}
		label := "whole run"
		if p.Model == "" {
			rows[i].Value, rows[i].Error = p.Value, p.Error
		} else {
			rows[i].PerModel = append(rows[i].PerModel, p)
			label = p.Model
		}
		l := lines[label]
		if l == nil {
			l = &charts.Line{Label: label}
			lines[label] = l
			order = append(order, label)
		}
		y := math.NaN()
		if p.Value != nil {
			y = *p.Value
		}
		l.Points = append(l.Points, charts.XY{X: float64(i + 1), XLabel: fmt.Sprintf("#%d", p.RunID), Y: y})
	}
	var ls []charts.Line
	for _, label := range order {
		ls = append(ls, *lines[label])
	}
	chart := charts.Trend(name+" per run", ls, charts.Options{HideTitle: true, Height: 320})
	slices.Reverse(rows)
	return rows, chart
}

func (h *Handler) updateKPIPage(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	cur, err := h.store.KPI(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in, f, err := kpiForm(c)
	f.ID = id
	if err == nil {
		_, err = h.saveKPI(withoutCancel(c), id, in)
	}
	if err != nil {
		status, errs, ok := formErrors(err, kpiField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderKPI(c, status, cur, f)
	}
	return redirectFlash(c, "KPI saved.", fmt.Sprintf("/kpis/%d", id))
}

func (h *Handler) deleteKPIPage(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	if err := h.store.DeleteKPI(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "KPI deleted.", "/kpis")
}
