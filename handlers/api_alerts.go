package handlers

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/store"
)

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
