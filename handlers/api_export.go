package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/report"
)

// exportReport writes the JSON export or the self-contained HTML report of
// one run or several (a comparison), streaming the items.
func (h *Handler) exportReport(c echo.Context, ids []int64, format string) error {
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
	switch format {
	case "json":
		w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSONCharsetUTF8)
	default:
		w.Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	}
	w.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s.%s"`, base, format))
	w.WriteHeader(http.StatusOK)
	var err error
	if format == "json" {
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
	switch f := c.QueryParam("format"); f {
	case "", "json":
		return h.exportReport(c, ids, "json")
	case "html":
		return h.exportReport(c, ids, "html")
	default:
		return badRequest("format %q is not supported here; use json or html (CSV exports one run: /api/runs/{id}/export)", f)
	}
}
