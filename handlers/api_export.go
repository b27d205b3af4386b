package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/report"
)

// exportReport writes the JSON export or the self-contained HTML report of
// one run or several (a comparison), streaming the items.
func (h *Handler) exportReport(c echo.Context, ids []int64, format report.Format) error {
	ctx := c.Request().Context()
	for _, id := range ids {
		if _, err := h.store.Run(ctx, id); err != nil {
			return err
		}
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	base := "tribunal-run-" + strings.Join(parts, "-")
	if len(ids) > 1 {
		base = "tribunal-runs-" + strings.Join(parts, "-")
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, format.ContentType())
	w.Header().Set(echo.HeaderContentDisposition, format.Attachment(base))
	w.WriteHeader(http.StatusOK)
	var err error
	if format == report.JSON {
		err = report.WriteJSON(ctx, w, h.runs, ids...)
	} else {
		err = report.WriteHTML(ctx, w, h.runs, report.Options{}, ids...)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "export runs", "run_ids", parts, "format", format, "err", err)
	}
	return nil
}

// apiExportRuns is GET /api/export?run_ids=3,4&format=json|html: one JSON
// document or one HTML comparison of several runs.
func (h *Handler) apiExportRuns(c echo.Context) error {
	ids, err := queryRunIDs(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return badRequest("run_ids is required, e.g. ?run_ids=3,4&format=html")
	}
	if len(ids) > 20 {
		return badRequest("at most 20 runs per export")
	}
	f, err := report.ParseFormat(c.QueryParam("format"), report.JSON, report.HTML)
	if err != nil {
		return badRequest("%v (CSV exports one run: /api/runs/{id}/export)", err)
	}
	return h.exportReport(c, ids, f)
}
