package handlers

import (
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/importer"
	"tribunal/report"
	"tribunal/store"
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
	w, end := startExport(c, format.ContentType(), format.Attachment(base))
	var err error
	if format == report.JSON {
		err = report.WriteJSON(ctx, w, h.runs, ids...)
	} else {
		err = report.WriteHTML(ctx, w, h.runs, report.Options{}, ids...)
	}
	if err == nil {
		err = end()
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

// apiExportTasks is GET /api/tasks/export?format=yaml|jsonl|csv with
// optional collection_id, category and usecase: the tasks as a file that
// imports back to the same tasks, streamed as they are read.
func (h *Handler) apiExportTasks(c echo.Context) error {
	f, err := importer.ParseExportFormat(c.QueryParam("format"))
	if err != nil {
		return badRequest("%v", err)
	}
	var sel store.TaskExport
	if v := c.QueryParam("collection_id"); v != "" {
		if sel.CollectionID, err = strconv.ParseInt(v, 10, 64); err != nil || sel.CollectionID <= 0 {
			return badRequest("collection_id must be a collection's id, got %q", v)
		}
	}
	sel.Category, sel.UseCase = c.QueryParam("category"), c.QueryParam("usecase")
	name := "tribunal-tasks"
	if sel.CollectionID != 0 {
		name += "-collection-" + strconv.FormatInt(sel.CollectionID, 10)
	}
	ctype, ext := importer.ExportMedia(f)
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, ctype)
	w.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+ext+`"`)
	ctx := c.Request().Context()
	// An unknown collection fails before anything is written, so it is
	// still a 404 through the error mapper; later, the reply has begun.
	if err := importer.ExportTasks(ctx, h.store, w, f, sel); err != nil {
		if !w.Committed {
			w.Header().Del(echo.HeaderContentDisposition)
			return err
		}
		h.log.ErrorContext(ctx, "export tasks", "format", f, "err", err)
	}
	return nil
}
