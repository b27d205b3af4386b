package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/views"
)

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
