package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

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
	list, err := h.store.MetricList(ctx)
	f.Metrics = metricNames(list)
	return err
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
