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
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/charts"
	"tribunal/kpi"
	"tribunal/schedule"
	"tribunal/store"
	"tribunal/views"
	"tribunal/watch"
)

func (h *Handler) unread(ctx context.Context) int64 {
	n, err := h.store.UnreadNotifications(ctx)
	if err != nil {
		h.log.WarnContext(ctx, "count unread notifications", "err", err)
	}
	return n
}

func (h *Handler) unreadBadge(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, http.StatusOK, views.UnreadBadge(h.unread(c.Request().Context())))
}

// ---- schedules ----

var scheduleFields = []string{"name", "cron", "timezone", "max_consecutive_failures"}

// scheduleField places a schedule error on its field; the run template's
// problems go above the template.
func scheduleField(field, _ string) string {
	if slices.Contains(scheduleFields, field) {
		return field
	}
	if strings.HasPrefix(field, "template") {
		return "template"
	}
	return ""
}

// runChoices fills what the schedule's run template lets the user pick.
func (h *Handler) runChoices(ctx context.Context, f *views.NewRunForm) error {
	var err error
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return err
	}
	if f.Collections, err = h.store.Collections(ctx); err != nil {
		return err
	}
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return err
	}
	if len(f.Targets) == 0 {
		f.Targets = []views.ModelChoice{{}}
	}
	return nil
}

// templateForm shows a stored run template in the new-run form's shape.
func templateForm(in store.RunInput) views.NewRunForm {
	f := views.NewRunForm{Name: in.Name, Selected: map[int64]bool{}, Panel: map[int64]bool{}, Checks: map[string]bool{},
		SystemPrompt: in.SystemPrompt}
	if in.Repeats > 1 {
		f.Repeats = strconv.Itoa(in.Repeats)
	}
	if in.Judge != nil {
		f.Judge = views.ModelChoice{ProviderID: in.Judge.ProviderID, Model: in.Judge.Model}
	}
	for _, id := range in.JudgeIDs {
		f.Panel[id] = true
	}
	f.ChecksOnly = in.Judge == nil && len(in.JudgeIDs) == 0 && len(in.Metrics) > 0
	for _, m := range in.Metrics {
		f.Checks[m] = true
	}
	for _, t := range in.Targets {
		mc := views.ModelChoice{ProviderID: t.ProviderID, Model: t.Model, ReasoningEffort: t.Settings.ReasoningEffort,
			SystemPrompt: t.Settings.SystemPrompt}
		if t.Settings.Temperature != nil {
			mc.Temperature = strconv.FormatFloat(*t.Settings.Temperature, 'f', -1, 64)
		}
		if t.Settings.MaxTokens != nil {
			mc.MaxTokens = strconv.FormatInt(*t.Settings.MaxTokens, 10)
		}
		f.Targets = append(f.Targets, mc)
	}
	for _, id := range in.CollectionIDs {
		f.Selected[id] = true
	}
	return f
}

// scheduleForm reads the schedule form; the run template comes from the
// same fields as the new-run form. prev is the stored template, whose
// settings the form does not show (weights, the judge's settings) stay.
func scheduleForm(c echo.Context, prev *store.RunInput) (store.ScheduleInput, views.ScheduleForm, error) {
	f := views.ScheduleForm{Name: c.FormValue("schedule_name"), Cron: c.FormValue("cron"), Timezone: c.FormValue("timezone"),
		Enabled: c.FormValue("enabled") != "", AutoDisable: c.FormValue("auto_disable_on_failure") != "",
		MaxFailures: strings.TrimSpace(c.FormValue("max_consecutive_failures"))}
	tmpl, run, err := runFormInput(c)
	f.Run = run
	in := store.ScheduleInput{Name: f.Name, Cron: f.Cron, Timezone: f.Timezone, Enabled: f.Enabled, AutoDisableOnFailure: f.AutoDisable}
	if err != nil {
		if ve, ok := err.(*store.ValidationError); ok {
			err = &store.ValidationError{Field: "template." + ve.Field, Message: ve.Message}
		}
		return in, f, err
	}
	if prev != nil {
		tmpl.Weights = prev.Weights
		if prev.Judge != nil && tmpl.Judge != nil && prev.Judge.ProviderID == tmpl.Judge.ProviderID && prev.Judge.Model == tmpl.Judge.Model {
			tmpl.Judge.Settings = prev.Judge.Settings
		}
	}
	in.Template = tmpl
	if f.MaxFailures != "" {
		n, err := strconv.Atoi(f.MaxFailures)
		if err != nil {
			return in, f, &store.ValidationError{Field: "max_consecutive_failures", Message: fmt.Sprintf("must be a whole number, got %q", f.MaxFailures)}
		}
		in.MaxConsecutiveFailures = n
	}
	return in, f, nil
}

func (h *Handler) showSchedules(c echo.Context) error {
	f := views.ScheduleForm{Enabled: true, AutoDisable: true, Timezone: "UTC", Cron: "0 0 3 * * *", MaxFailures: "3"}
	return h.renderSchedules(c, http.StatusOK, f)
}

func (h *Handler) renderSchedules(c echo.Context, status int, f views.ScheduleForm) error {
	ctx := c.Request().Context()
	if err := h.runChoices(ctx, &f.Run); err != nil {
		return err
	}
	list, err := h.store.Schedules(ctx)
	if err != nil {
		return err
	}
	v := views.SchedulesView{Form: f, Unread: h.unread(ctx)}
	for _, s := range list {
		row := views.ScheduleRow{Schedule: s}
		if s.LastRunID != nil {
			if r, err := h.store.Run(ctx, *s.LastRunID); err == nil {
				row.LastRun = r
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, status, views.SchedulesPage(v))
}

func (h *Handler) createSchedulePage(c echo.Context) error {
	in, f, err := scheduleForm(c, nil)
	var s *store.Schedule
	if err == nil {
		s, err = h.store.CreateSchedule(withoutCancel(c), in, time.Now())
	}
	if err != nil {
		status, errs, ok := formErrors(err, scheduleField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderSchedules(c, status, f)
	}
	return redirectFlash(c, "Schedule created.", fmt.Sprintf("/schedules/%d", s.ID))
}

func (h *Handler) showSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	f := views.ScheduleForm{ID: s.ID, Name: s.Name, Cron: s.Cron, Timezone: s.Timezone, Enabled: s.Enabled,
		AutoDisable: s.AutoDisableOnFailure, MaxFailures: strconv.Itoa(s.MaxConsecutiveFailures), Run: templateForm(s.Template)}
	return h.renderSchedule(c, http.StatusOK, s, f)
}

func (h *Handler) renderSchedule(c echo.Context, status int, s *store.Schedule, f views.ScheduleForm) error {
	ctx := c.Request().Context()
	if err := h.runChoices(ctx, &f.Run); err != nil {
		return err
	}
	v := views.ScheduleView{Schedule: *s, Form: f, Upcoming: upcoming(s, 5), Unread: h.unread(ctx)}
	var err error
	if v.Firings, err = h.store.ScheduleFirings(ctx, s.ID, 100); err != nil {
		return err
	}
	kpis, err := h.store.KPIs(ctx)
	if err != nil {
		return err
	}
	for _, k := range kpis {
		if k.ScheduleID != nil && *k.ScheduleID == s.ID {
			v.KPIs = append(v.KPIs, k)
		}
	}
	return render(c, status, views.SchedulePage(v))
}

func (h *Handler) updateSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	cur, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in, f, err := scheduleForm(c, &cur.Template)
	f.ID = id
	if err == nil {
		_, err = h.store.UpdateSchedule(withoutCancel(c), id, in, time.Now())
	}
	if err != nil {
		status, errs, ok := formErrors(err, scheduleField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderSchedule(c, status, cur, f)
	}
	return redirectFlash(c, "Schedule saved.", fmt.Sprintf("/schedules/%d", id))
}

func (h *Handler) toggleSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in, err := scheduleBodyOf(s).input()
	if err != nil {
		return err
	}
	in.Enabled = !s.Enabled
	if _, err := h.store.UpdateSchedule(withoutCancel(c), id, in, time.Now()); err != nil {
		return err
	}
	back := c.Request().Header.Get("HX-Current-URL")
	if !strings.Contains(back, fmt.Sprintf("/schedules/%d", id)) {
		back = "/schedules"
	} else {
		back = fmt.Sprintf("/schedules/%d", id)
	}
	msg := "Schedule enabled."
	if s.Enabled {
		msg = "Schedule disabled."
	}
	return redirectFlash(c, msg, back)
}

func (h *Handler) runSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	run, err := watch.RunNow(withoutCancel(c), h.store, h.runs, id, "MANUAL", time.Now())
	if err != nil {
		return err
	}
	return redirectFlash(c, "Run started from the schedule.", fmt.Sprintf("/runs/%d", run.ID))
}

func (h *Handler) deleteSchedulePage(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	if err := h.store.DeleteSchedule(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Schedule deleted.", "/schedules")
}

// cronPreview shows the next occurrences of the expression being typed.
func (h *Handler) cronPreview(c echo.Context) error {
	expr := strings.TrimSpace(c.FormValue("cron"))
	if expr == "" {
		return render(c, http.StatusOK, views.CronPreview(nil, ""))
	}
	spec, err := schedule.Parse(expr, c.FormValue("timezone"))
	if err != nil {
		return render(c, http.StatusOK, views.CronPreview(nil, err.Error()))
	}
	var next []time.Time
	t := time.Now()
	for range 3 {
		if t = spec.Next(t); t.IsZero() {
			break
		}
		next = append(next, t.In(spec.Location()))
	}
	return render(c, http.StatusOK, views.CronPreview(next, ""))
}

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
	known, err := h.store.KnownMetrics(ctx)
	if err != nil {
		return err
	}
	f.Metrics = sortedMetrics(known)
	return nil
}

// sortedMetrics lists metric names: the run's own first, then judge metrics, then checks.
func sortedMetrics(known map[string]bool) []string {
	var out []string
	for _, m := range store.BuiltinMetrics {
		if known[m] {
			out = append(out, m)
		}
	}
	var judge, checks []string
	for m := range known {
		switch {
		case slices.Contains(store.BuiltinMetrics, m):
		case strings.HasPrefix(m, "check_"):
			checks = append(checks, m)
		default:
			judge = append(judge, m)
		}
	}
	slices.Sort(judge)
	slices.Sort(checks)
	return append(append(out, judge...), checks...)
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

// ---- alerts ----

func alertField(field, _ string) string {
	switch {
	case field == "kpi_id" || field == "metric":
		return "watch"
	case field == "collection_id" || field == "schedule_id":
		return "scope"
	case strings.HasPrefix(field, "channels"):
		return "channels"
	case slices.Contains([]string{"name", "model", "condition", "threshold", "baseline_runs", "watch", "scope"}, field):
		return field
	}
	return ""
}

func (h *Handler) alertChoices(ctx context.Context, f *views.AlertForm) error {
	var err error
	if f.KPIs, err = h.store.KPIs(ctx); err != nil {
		return err
	}
	if f.Collections, err = h.store.Collections(ctx); err != nil {
		return err
	}
	if f.Schedules, err = h.store.Schedules(ctx); err != nil {
		return err
	}
	known, err := h.store.KnownMetrics(ctx)
	if err != nil {
		return err
	}
	f.Metrics = sortedMetrics(known)
	return nil
}

// channelLines writes channels one per line, as the form takes them.
func channelLines(chs []store.Channel) string {
	var lines []string
	for _, c := range chs {
		lines = append(lines, strings.TrimSpace(c.Type+" "+c.URL+c.To))
	}
	return strings.Join(lines, "\n")
}

// parseChannels reads "type [url|addresses]" lines.
func parseChannels(text string) []store.Channel {
	var out []store.Channel
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		typ, rest, _ := strings.Cut(line, " ")
		ch := store.Channel{Type: strings.ToLower(typ)}
		if ch.Type == "email" {
			ch.To = strings.TrimSpace(rest)
		} else {
			ch.URL = strings.TrimSpace(rest)
		}
		out = append(out, ch)
	}
	return out
}

func alertForm(c echo.Context) (store.AlertInput, views.AlertForm, error) {
	f := views.AlertForm{Name: c.FormValue("name"), Enabled: c.FormValue("enabled") != "", Watch: c.FormValue("watch"),
		Model: c.FormValue("model"), Condition: c.FormValue("condition"), Threshold: strings.TrimSpace(c.FormValue("threshold")),
		BaselineRuns: strings.TrimSpace(c.FormValue("baseline_runs")), Severity: c.FormValue("severity"),
		Channels: c.FormValue("channels"), Scope: c.FormValue("scope")}
	enabled := f.Enabled
	in := store.AlertInput{Name: f.Name, Enabled: &enabled, Model: f.Model, Condition: f.Condition, Severity: f.Severity,
		Channels: parseChannels(f.Channels)}
	kind, what, _ := strings.Cut(f.Watch, ":")
	switch kind {
	case "kpi":
		id, err := strconv.ParseInt(what, 10, 64)
		if err != nil {
			return in, f, &store.ValidationError{Field: "watch", Message: "pick a KPI or a metric"}
		}
		in.KPIID = &id
	case "metric":
		in.Metric = what
	default:
		return in, f, &store.ValidationError{Field: "watch", Message: "pick a KPI or a metric"}
	}
	if f.Threshold != "" {
		v, err := strconv.ParseFloat(f.Threshold, 64)
		if err != nil {
			return in, f, &store.ValidationError{Field: "threshold", Message: fmt.Sprintf("must be a number, got %q", f.Threshold)}
		}
		in.Threshold = &v
	}
	if f.BaselineRuns != "" {
		n, err := strconv.Atoi(f.BaselineRuns)
		if err != nil {
			return in, f, &store.ValidationError{Field: "baseline_runs", Message: fmt.Sprintf("must be a whole number, got %q", f.BaselineRuns)}
		}
		in.BaselineRuns = n
	}
	var err error
	in.CollectionID, in.ScheduleID, err = parseScope(f.Scope)
	return in, f, err
}

func alertFormOf(a *store.Alert) views.AlertForm {
	f := views.AlertForm{ID: a.ID, Name: a.Name, Enabled: a.Enabled, Model: a.Model, Condition: a.Condition,
		Threshold: strconv.FormatFloat(a.Threshold, 'f', -1, 64), BaselineRuns: strconv.Itoa(a.BaselineRuns), Severity: a.Severity,
		Channels: channelLines(a.Channels), Scope: scopeOf(a.CollectionID, a.ScheduleID), Watch: "metric:" + a.Metric}
	if a.KPIID != nil {
		f.Watch = fmt.Sprintf("kpi:%d", *a.KPIID)
	}
	return f
}

// watchesLabel names what an alert watches.
func watchesLabel(a store.Alert, kpis []store.KPI) string {
	if a.KPIID == nil {
		return a.Metric
	}
	for _, k := range kpis {
		if k.ID == *a.KPIID {
			return "KPI " + k.Name
		}
	}
	return fmt.Sprintf("KPI %d", *a.KPIID)
}

func (h *Handler) showAlerts(c echo.Context) error {
	return h.renderAlerts(c, http.StatusOK, views.AlertForm{Enabled: true, Condition: "LESS_THAN", Severity: "WARNING",
		BaselineRuns: "5", Channels: "in_app", Watch: c.QueryParam("watch")})
}

func (h *Handler) renderAlerts(c echo.Context, status int, f views.AlertForm) error {
	ctx := c.Request().Context()
	if err := h.alertChoices(ctx, &f); err != nil {
		return err
	}
	list, err := h.store.Alerts(ctx)
	if err != nil {
		return err
	}
	v := views.AlertsView{Form: f, Unread: h.unread(ctx)}
	for _, a := range list {
		row := views.AlertRow{Alert: a, Watches: watchesLabel(a, f.KPIs)}
		if ns, err := h.store.Notifications(ctx, store.NotificationFilter{AlertID: a.ID, PerPage: 1}); err == nil && len(ns.Items) > 0 {
			row.LastFired = &ns.Items[0].CreatedAt
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, status, views.AlertsPage(v))
}

func (h *Handler) createAlertPage(c echo.Context) error {
	in, f, err := alertForm(c)
	var a *store.Alert
	if err == nil {
		a, err = h.store.CreateAlert(withoutCancel(c), in)
	}
	if err != nil {
		status, errs, ok := formErrors(err, alertField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderAlerts(c, status, f)
	}
	return redirectFlash(c, "Alert created.", fmt.Sprintf("/alerts/%d", a.ID))
}

func (h *Handler) showAlert(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	a, err := h.store.Alert(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return h.renderAlert(c, http.StatusOK, a, alertFormOf(a))
}

func (h *Handler) renderAlert(c echo.Context, status int, a *store.Alert, f views.AlertForm) error {
	ctx := c.Request().Context()
	if err := h.alertChoices(ctx, &f); err != nil {
		return err
	}
	ns, err := h.store.Notifications(ctx, store.NotificationFilter{AlertID: a.ID, PerPage: 20})
	if err != nil {
		return err
	}
	v := views.AlertView{Alert: *a, Watches: watchesLabel(*a, f.KPIs), Recent: ns.Items, Form: f, Unread: h.unread(ctx)}
	return render(c, status, views.AlertPage(v))
}

func (h *Handler) updateAlertPage(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	cur, err := h.store.Alert(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in, f, err := alertForm(c)
	f.ID = id
	if err == nil {
		_, err = h.store.UpdateAlert(withoutCancel(c), id, in)
	}
	if err != nil {
		status, errs, ok := formErrors(err, alertField)
		if !ok {
			return err
		}
		f.Errors = errs
		return h.renderAlert(c, status, cur, f)
	}
	return redirectFlash(c, "Alert saved.", fmt.Sprintf("/alerts/%d", id))
}

func (h *Handler) toggleAlertPage(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	a, err := h.store.Alert(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in := alertInputOf(a)
	enabled := !a.Enabled
	in.Enabled = &enabled
	if _, err := h.store.UpdateAlert(withoutCancel(c), id, in); err != nil {
		return err
	}
	msg := "Alert disabled."
	if enabled {
		msg = "Alert enabled."
	}
	return redirectFlash(c, msg, "/alerts")
}

func (h *Handler) testAlertPage(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	if _, err := h.sendTestAlert(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Test notification sent.", fmt.Sprintf("/alerts/%d", id))
}

func (h *Handler) deleteAlertPage(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	if err := h.store.DeleteAlert(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Alert deleted.", "/alerts")
}

// ---- notifications ----

func (h *Handler) showNotifications(c echo.Context) error {
	f, err := h.notificationFilter(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	page, err := h.store.Notifications(ctx, f)
	if err != nil {
		return err
	}
	v := views.NotificationsView{Items: page.Items, Page: page.Page, Pages: page.Pages(), Total: page.Total,
		Unread: h.unread(ctx), UnreadOnly: f.UnreadOnly}
	return render(c, http.StatusOK, views.NotificationsPage(v))
}

func (h *Handler) readNotificationsPage(c echo.Context) error {
	var ids []int64
	if c.Param("notification") != "" {
		id, err := pathID(c, "notification")
		if err != nil {
			return err
		}
		ids = []int64{id}
	}
	if _, err := h.store.MarkNotificationsRead(withoutCancel(c), ids); err != nil {
		return err
	}
	return redirectFlash(c, "Notifications marked read.", "/notifications")
}
