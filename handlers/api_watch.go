package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/kpi"
	"tribunal/schedule"
	"tribunal/store"
	"tribunal/watch"
)

// runKPIValues lists a finished run's KPI values for GET /api/runs/{id}.
func (h *Handler) runKPIValues(ctx context.Context, runID int64) ([]store.RunKPI, error) {
	return h.store.RunKPIValues(ctx, runID)
}

// bindMerge decodes a JSON body over cur: the fields the body names replace
// those of cur, the others keep their values (so PUT and PATCH may send
// only what changes). Unknown fields and wrong types are refused like bindJSON.
// It reports which fields the body named.
func bindMerge(c echo.Context, cur, dst any) (map[string]bool, error) {
	var body map[string]json.RawMessage
	if err := bindJSON(c, &body); err != nil {
		return nil, err
	}
	if body == nil {
		return nil, badRequest("the body must be a JSON object")
	}
	base, err := json.Marshal(cur)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(base, &merged); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	named := map[string]bool{}
	for k, v := range body {
		merged[k] = v
		named[k] = true
	}
	raw, _ := json.Marshal(merged)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return nil, badRequest("field %q: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return nil, badRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		case errors.Is(err, io.EOF):
			return nil, badRequest("the body is empty; send a JSON object")
		}
		return nil, badRequest("malformed JSON: %v", err)
	}
	return named, nil
}

// exclusive keeps one of two either-or fields: naming one in a PUT or
// PATCH (and not the other) drops the other.
func exclusive[A, B any](named map[string]bool, a string, pa *A, isSetA bool, b string, pb *B, isSetB bool) {
	var zeroA A
	var zeroB B
	switch {
	case named[a] && !named[b] && isSetA:
		*pb = zeroB
	case named[b] && !named[a] && isSetB:
		*pa = zeroA
	}
}

// ---- schedules ----

// scheduleBody is a schedule as the API reads it.
type scheduleBody struct {
	Name string `json:"name"`
	// Trigger is CRON (the default), WEBHOOK or EVENT.
	Trigger string `json:"trigger"`
	// Cron is required for CRON only.
	Cron string `json:"cron"`
	// Event (import.finished or run.finished) and EventSourceID (import.finished only) are EVENT's.
	Event                  string          `json:"event"`
	EventSourceID          *int64          `json:"event_source_id"`
	Timezone               string          `json:"timezone"`
	Enabled                bool            `json:"enabled"`
	MaxConsecutiveFailures int             `json:"max_consecutive_failures"`
	AutoDisableOnFailure   bool            `json:"auto_disable_on_failure"`
	Template               *store.RunInput `json:"template"`
}

func (b scheduleBody) input() (store.ScheduleInput, error) {
	if b.Template == nil {
		return store.ScheduleInput{}, &store.ValidationError{Field: "template", Message: "is required: the body of POST /api/runs (judge, targets, collection_ids, …)"}
	}
	return store.ScheduleInput{Name: b.Name, Trigger: b.Trigger, Cron: b.Cron, Event: b.Event, EventSourceID: b.EventSourceID,
		Timezone: b.Timezone, Enabled: b.Enabled,
		MaxConsecutiveFailures: b.MaxConsecutiveFailures, AutoDisableOnFailure: b.AutoDisableOnFailure, Template: *b.Template}, nil
}

func scheduleBodyOf(s *store.Schedule) scheduleBody {
	t := s.Template
	return scheduleBody{Name: s.Name, Trigger: s.Trigger, Cron: s.Cron, Event: s.Event, EventSourceID: s.EventSourceID,
		Timezone: s.Timezone, Enabled: s.Enabled,
		MaxConsecutiveFailures: s.MaxConsecutiveFailures, AutoDisableOnFailure: s.AutoDisableOnFailure, Template: &t}
}

// ScheduleJSON is a schedule as the API shows it, with its next occurrences.
type ScheduleJSON struct {
	*store.Schedule
	Upcoming []time.Time `json:"upcoming"`
}

func scheduleJSON(s *store.Schedule) ScheduleJSON {
	return ScheduleJSON{Schedule: s, Upcoming: upcoming(s, 3)}
}

// upcoming lists an enabled schedule's next n occurrences in its time zone.
func upcoming(s *store.Schedule, n int) []time.Time {
	out := []time.Time{}
	spec, err := schedule.Parse(s.Cron, s.Timezone)
	if err != nil || !s.Enabled || s.NextRunAt == nil {
		return out
	}
	t := s.NextRunAt.Add(-time.Nanosecond)
	if s.WaitingSince != nil {
		t = time.Now()
	}
	for range n {
		if t = spec.Next(t); t.IsZero() {
			break
		}
		out = append(out, t.In(spec.Location()))
	}
	return out
}

func (h *Handler) apiListSchedules(c echo.Context) error {
	list, err := h.store.Schedules(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]ScheduleJSON, len(list))
	for i := range list {
		out[i] = scheduleJSON(&list[i])
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiGetSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, scheduleJSON(s))
}

func (h *Handler) apiCreateSchedule(c echo.Context) error {
	var b scheduleBody
	if _, err := bindMerge(c, scheduleBody{Enabled: true, Timezone: "UTC", MaxConsecutiveFailures: 3, AutoDisableOnFailure: true}, &b); err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	s, err := h.store.CreateSchedule(withoutCancel(c), in, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, scheduleJSON(s))
}

func (h *Handler) apiUpdateSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	cur, err := h.store.Schedule(c.Request().Context(), id)
	if err != nil {
		return err
	}
	var b scheduleBody
	if _, err := bindMerge(c, scheduleBodyOf(cur), &b); err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	s, err := h.store.UpdateSchedule(withoutCancel(c), id, in, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, scheduleJSON(s))
}

func (h *Handler) apiDeleteSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	if err := h.store.DeleteSchedule(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *Handler) apiRunSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	run, err := watch.RunNow(withoutCancel(c), h.store, h.runs, id, "API", time.Now())
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

// scheduleTokenHeader carries a WEBHOOK schedule's token.
const scheduleTokenHeader = "X-Tribunal-Token"

// apiTriggerSchedule is a WEBHOOK schedule's webhook. Its token is its own
// credential: requireAuth lets this one route through without the server's.
func (h *Handler) apiTriggerSchedule(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	run, err := watch.Trigger(withoutCancel(c), h.store, h.runs, id, c.Request().Header.Get(scheduleTokenHeader), time.Now())
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (h *Handler) apiRotateScheduleToken(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	s, err := h.store.RotateScheduleToken(withoutCancel(c), id, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, scheduleJSON(s))
}

func (h *Handler) apiScheduleHistory(c echo.Context) error {
	id, err := pathID(c, "schedule")
	if err != nil {
		return err
	}
	if _, err := h.store.Schedule(c.Request().Context(), id); err != nil {
		return err
	}
	limit, err := queryInt(c, "limit")
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = 100
	}
	fs, err := h.store.ScheduleFirings(c.Request().Context(), id, min(limit, 1000))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, fs)
}

// ---- KPIs ----

// KPIJSON is a KPI as the API shows it.
type KPIJSON struct {
	*store.KPI
	// Metrics are the metric names the formula reads.
	Metrics []string `json:"metrics"`
	// Latest is the whole-run value of the latest evaluated run.
	Latest *store.KPIPoint `json:"latest"`
	// Values are the latest runs' values, oldest first (GET /api/kpis/{id} only).
	Values []store.KPIPoint `json:"values,omitempty"`
}

func kpiJSON(k *store.KPI, latest map[int64]store.KPIPoint) KPIJSON {
	out := KPIJSON{KPI: k, Metrics: []string{}}
	if f, errs := kpi.Compile(k.Formula, nil); errs == nil {
		out.Metrics = f.Metrics()
	}
	if p, ok := latest[k.ID]; ok {
		out.Latest = &p
	}
	return out
}

func kpiInputOf(k *store.KPI) store.KPIInput {
	return store.KPIInput{Name: k.Name, Formula: k.Formula, Description: k.Description, CollectionID: k.CollectionID, ScheduleID: k.ScheduleID}
}

func (h *Handler) apiListKPIs(c echo.Context) error {
	ctx := c.Request().Context()
	list, err := h.store.KPIs(ctx)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(ctx)
	if err != nil {
		return err
	}
	out := make([]KPIJSON, len(list))
	for i := range list {
		out[i] = kpiJSON(&list[i], latest)
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiGetKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	k, err := h.store.KPI(ctx, id)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(ctx)
	if err != nil {
		return err
	}
	out := kpiJSON(k, latest)
	if out.Values, err = h.store.KPITrend(ctx, id, 100); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiKPIValues(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit")
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = 100
	}
	if _, err := h.store.KPI(c.Request().Context(), id); err != nil {
		return err
	}
	vals, err := h.store.KPITrend(c.Request().Context(), id, min(limit, 5000))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, vals)
}

// saveKPI creates (id 0) or replaces a KPI and computes it for the runs it
// applies to that were evaluated before.
func (h *Handler) saveKPI(ctx context.Context, id int64, in store.KPIInput) (*store.KPI, error) {
	var k *store.KPI
	var err error
	recompute := true
	if id == 0 {
		k, err = h.store.CreateKPI(ctx, in)
	} else {
		k, recompute, err = h.store.UpdateKPI(ctx, id, in)
	}
	if err != nil {
		return nil, err
	}
	if recompute {
		if _, err := watch.BackfillKPI(ctx, h.store, k); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (h *Handler) apiCreateKPI(c echo.Context) error {
	var in store.KPIInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	k, err := h.saveKPI(withoutCancel(c), 0, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, kpiJSON(k, nil))
}

func (h *Handler) apiUpdateKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	cur, err := h.store.KPI(c.Request().Context(), id)
	if err != nil {
		return err
	}
	var in store.KPIInput
	named, err := bindMerge(c, kpiInputOf(cur), &in)
	if err != nil {
		return err
	}
	exclusive(named, "collection_id", &in.CollectionID, in.CollectionID != nil, "schedule_id", &in.ScheduleID, in.ScheduleID != nil)
	k, err := h.saveKPI(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	latest, err := h.store.LatestKPIValues(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, kpiJSON(k, latest))
}

func (h *Handler) apiDeleteKPI(c echo.Context) error {
	id, err := pathID(c, "kpi")
	if err != nil {
		return err
	}
	if err := h.store.DeleteKPI(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// FormulaJSON is a KPI formula to validate.
type FormulaJSON struct {
	Formula string `json:"formula"`
}

// apiValidateFormula answers {ok, errors: [{message, position}]} for {formula}.
func (h *Handler) apiValidateFormula(c echo.Context) error {
	var in FormulaJSON
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	v, err := h.store.ValidateFormula(c.Request().Context(), in.Formula)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// apiKPIMetrics lists every metric a formula may read, with the seed's names for it.
func (h *Handler) apiKPIMetrics(c echo.Context) error {
	list, err := h.store.MetricList(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

// ---- alerts ----

func alertInputOf(a *store.Alert) store.AlertInput {
	enabled, threshold := a.Enabled, a.Threshold
	return store.AlertInput{Name: a.Name, Enabled: &enabled, KPIID: a.KPIID, Metric: a.Metric, Model: a.Model, Condition: a.Condition,
		Threshold: &threshold, BaselineRuns: a.BaselineRuns, Severity: a.Severity, Channels: a.Channels,
		CollectionID: a.CollectionID, ScheduleID: a.ScheduleID}
}

func (h *Handler) apiListAlerts(c echo.Context) error {
	list, err := h.store.Alerts(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

func (h *Handler) apiGetAlert(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	a, err := h.store.Alert(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (h *Handler) apiCreateAlert(c echo.Context) error {
	var in store.AlertInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	a, err := h.store.CreateAlert(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, a)
}

func (h *Handler) apiUpdateAlert(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	cur, err := h.store.Alert(c.Request().Context(), id)
	if err != nil {
		return err
	}
	var in store.AlertInput
	named, err := bindMerge(c, alertInputOf(cur), &in)
	if err != nil {
		return err
	}
	// Naming a KPI drops the metric the alert watched, and the other way round.
	exclusive(named, "kpi_id", &in.KPIID, in.KPIID != nil, "metric", &in.Metric, in.Metric != "")
	exclusive(named, "collection_id", &in.CollectionID, in.CollectionID != nil, "schedule_id", &in.ScheduleID, in.ScheduleID != nil)
	a, err := h.store.UpdateAlert(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (h *Handler) apiDeleteAlert(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	if err := h.store.DeleteAlert(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// sendTestAlert records a test notification of an alert on all its channels.
func (h *Handler) sendTestAlert(ctx context.Context, id int64) (*store.Notification, error) {
	a, err := h.store.AlertWithSecrets(ctx, id)
	if err != nil {
		return nil, err
	}
	alertID := a.ID
	n := &store.Notification{Kind: "ALERT", AlertID: &alertID, KPIID: a.KPIID, Severity: a.Severity, Subject: a.Metric,
		Model: a.Model, Condition: a.Condition, Title: "Test of alert " + a.Name,
		Message: "A test notification sent from Tribunal: the alert's channels work if you can read this."}
	if err := h.store.CreateNotification(ctx, n, a.Channels, time.Now()); err != nil {
		return nil, err
	}
	return h.store.Notification(ctx, n.ID)
}

func (h *Handler) apiTestAlert(c echo.Context) error {
	id, err := pathID(c, "alert")
	if err != nil {
		return err
	}
	n, err := h.sendTestAlert(withoutCancel(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, notificationJSON(*n))
}

// ---- notifications ----

// NotificationJSON is a notification with the link to its run.
type NotificationJSON struct {
	store.Notification
	Read bool   `json:"read"`
	Link string `json:"link"`
}

func notificationJSON(n store.Notification) NotificationJSON {
	out := NotificationJSON{Notification: n, Read: n.ReadAt != nil, Link: "/notifications"}
	switch {
	case n.RunID != nil:
		out.Link = fmt.Sprintf("/runs/%d", *n.RunID)
	case n.ScheduleID != nil:
		out.Link = fmt.Sprintf("/schedules/%d", *n.ScheduleID)
	}
	if out.Deliveries == nil {
		out.Deliveries = []store.Delivery{}
	}
	return out
}

func (h *Handler) notificationFilter(c echo.Context) (store.NotificationFilter, error) {
	var f store.NotificationFilter
	var err error
	if f.Page, err = queryInt(c, "page"); err != nil {
		return f, err
	}
	if f.PerPage, err = queryInt(c, "per_page"); err != nil {
		return f, err
	}
	for name, dst := range map[string]*int64{"alert_id": &f.AlertID, "schedule_id": &f.ScheduleID, "run_id": &f.RunID} {
		n, err := queryInt(c, name)
		if err != nil {
			return f, err
		}
		*dst = int64(n)
	}
	switch c.QueryParam("unread") {
	case "", "0", "false":
	case "1", "true":
		f.UnreadOnly = true
	default:
		return f, badRequest("unread must be true or false")
	}
	return f, nil
}

// NotificationPage is a page of notifications with the count of unread ones.
type NotificationPage struct {
	store.Page[NotificationJSON]
	Unread int64 `json:"unread"`
}

func (h *Handler) apiListNotifications(c echo.Context) error {
	f, err := h.notificationFilter(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	page, err := h.store.Notifications(ctx, f)
	if err != nil {
		return err
	}
	unread, err := h.store.UnreadNotifications(ctx)
	if err != nil {
		return err
	}
	items := make([]NotificationJSON, len(page.Items))
	for i, n := range page.Items {
		items[i] = notificationJSON(n)
	}
	return c.JSON(http.StatusOK, NotificationPage{Page: store.Page[NotificationJSON]{Items: items, Total: page.Total,
		Page: page.Page, PerPage: page.PerPage}, Unread: unread})
}

// NotificationIDs names the notifications to mark read.
type NotificationIDs struct {
	IDs []int64 `json:"ids"`
}

// NotificationsRead answers how many notifications were marked read and how many are left unread.
type NotificationsRead struct {
	Marked int64 `json:"marked"`
	Unread int64 `json:"unread"`
}

// apiReadNotifications marks one notification read (/{id}/read), the ids
// in {"ids": […]}, or all of them.
func (h *Handler) apiReadNotifications(c echo.Context) error {
	var ids []int64
	if c.Param("notification") != "" {
		id, err := pathID(c, "notification")
		if err != nil {
			return err
		}
		if _, err := h.store.Notification(c.Request().Context(), id); err != nil {
			return err
		}
		ids = []int64{id}
	} else if c.Request().ContentLength != 0 {
		var in NotificationIDs
		if err := bindJSON(c, &in); err != nil {
			return err
		}
		if len(in.IDs) == 0 {
			return &store.ValidationError{Field: "ids", Message: "list the notifications to mark read, or send no body to mark all"}
		}
		ids = in.IDs
	}
	n, err := h.store.MarkNotificationsRead(withoutCancel(c), ids)
	if err != nil {
		return err
	}
	unread, err := h.store.UnreadNotifications(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, NotificationsRead{Marked: n, Unread: unread})
}
