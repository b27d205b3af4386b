package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/report"
	"tribunal/rubric"
	"tribunal/runs"
	"tribunal/store"
)

// RunJSON is a run as the API shows it: its setup, progress and results so far.
type RunJSON struct {
	*store.Run
	Judge    *store.RunJudge    `json:"judge"`
	Progress runs.Progress      `json:"progress"`
	Current  *store.CurrentWork `json:"current,omitempty"`
	// RunningGroups are the groups working now: each provider's group
	// answering or warming up, and the judges (GET /api/runs/{id}).
	RunningGroups []runs.RunningGroup `json:"running_groups,omitempty"`
	Summary       *runs.Summary       `json:"summary,omitempty"`
	// FailedItems counts the run's FAILED items: a FINISHED run may have some.
	FailedItems int64 `json:"failed_items"`
	// Failures groups them by phase and reason, most frequent first (GET /api/runs/{id}).
	Failures []store.FailureGroup `json:"failures,omitzero"`
	// KPIValues are the run's KPI values once it has finished (GET /api/runs/{id}).
	KPIValues []store.RunKPI `json:"kpi_values,omitzero"`
	// Budget is the run's spend against its max_cost_usd, when it has one.
	Budget *runs.Budget `json:"budget,omitempty"`
}

func (h *Handler) runJSON(ctx context.Context, run *store.Run, detail bool) (*RunJSON, error) {
	out := &RunJSON{Run: run}
	if len(run.Judges) > 0 {
		out.Judge = &run.Judges[0]
	}
	prog, err := h.runs.Progress(ctx, run)
	if err != nil {
		return nil, err
	}
	out.Progress = prog
	out.FailedItems = prog.Failed
	if !detail {
		return out, nil
	}
	out.Failures = []store.FailureGroup{}
	if out.FailedItems > 0 {
		if out.Failures, err = h.runs.Failures(ctx, run.ID); err != nil {
			return nil, err
		}
	}
	if out.Current, err = h.store.RunCurrent(ctx, run.ID); err != nil {
		return nil, err
	}
	if out.RunningGroups, err = h.runs.Running(ctx, run); err != nil {
		return nil, err
	}
	if out.Summary, err = h.runs.Summary(ctx, run, prog); err != nil {
		return nil, err
	}
	if out.KPIValues, err = h.runKPIValues(ctx, run.ID); err != nil {
		return nil, err
	}
	if run.Options.MaxCostUSD != nil {
		b, err := h.runs.Budget(ctx, run)
		if err != nil {
			return nil, err
		}
		out.Budget = &b
	}
	return out, nil
}

func (h *Handler) apiCreateRun(c echo.Context) error {
	var in store.RunInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	in.TriggeredBy = "API"
	run, err := h.runs.StartRun(withoutCancel(c), in)
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (h *Handler) runFilter(c echo.Context) (store.RunFilter, error) {
	page, err := queryInt(c, "page")
	if err != nil {
		return store.RunFilter{}, err
	}
	perPage, err := queryInt(c, "per_page")
	if err != nil {
		return store.RunFilter{}, err
	}
	st := store.RunStatus(c.QueryParam("status"))
	if st != "" && !slices.Contains(store.RunStatuses, st) {
		return store.RunFilter{}, badRequest("status must be one of %s", oneOf(store.RunStatuses))
	}
	f := store.RunFilter{Status: st, Tag: c.QueryParam("tag"), Page: page, PerPage: perPage}
	if v := c.QueryParam("collection_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return f, badRequest("collection_id must be a collection id, got %q", v)
		}
		f.CollectionID = id
	}
	if v := c.QueryParam("agent_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return f, badRequest("agent_id must be an agent id, got %q", v)
		}
		f.AgentID = id
	}
	if f.From, err = queryTime(c, "from", false); err != nil {
		return f, err
	}
	if f.To, err = queryTime(c, "to", true); err != nil {
		return f, err
	}
	return f, nil
}

// queryTime reads an optional RFC 3339 date (2006-01-02, UTC) or date-time
// (2006-01-02T15:04:05Z07:00). A date that ends a range (end) means the end
// of that day, so to=2026-03-01 includes the whole first of March.
func queryTime(c echo.Context, name string, end bool) (*time.Time, error) {
	v := c.QueryParam(name)
	if v == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return &t, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return nil, badRequest("%s must be an RFC 3339 date (2026-03-01) or date-time (2026-03-01T09:30:00Z), got %q", name, v)
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return &t, nil
}

func (h *Handler) apiListRuns(c echo.Context) error {
	f, err := h.runFilter(c)
	if err != nil {
		return err
	}
	page, err := h.store.Runs(c.Request().Context(), f)
	if err != nil {
		return err
	}
	out := store.Page[*RunJSON]{Total: page.Total, Page: page.Page, PerPage: page.PerPage, Items: []*RunJSON{}}
	for i := range page.Items {
		r, err := h.runJSON(c.Request().Context(), &page.Items[i], false)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, r)
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) apiGetRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) itemFilter(c echo.Context) (store.ItemFilter, error) {
	var f store.ItemFilter
	var err error
	if f.Page, err = queryInt(c, "page"); err != nil {
		return f, err
	}
	if f.PerPage, err = queryInt(c, "per_page"); err != nil {
		return f, err
	}
	after, err := queryInt(c, "after")
	if err != nil {
		return f, err
	}
	before, err := queryInt(c, "before")
	if err != nil {
		return f, err
	}
	f.AfterID, f.BeforeID = int64(after), int64(before)
	f.Status = store.ItemStatus(c.QueryParam("status"))
	if f.Status != "" && !slices.Contains(store.ItemStatuses, f.Status) {
		return f, badRequest("status must be one of %s", oneOf(store.ItemStatuses))
	}
	f.Model = c.QueryParam("model")
	// phase and reason narrow to one failure group ("Finished with N failures").
	f.Phase = store.Phase(c.QueryParam("phase"))
	if f.Phase != "" && f.Phase != store.PhaseBenchmarking && f.Phase != store.PhaseJudging {
		return f, badRequest("phase must be one of %s", oneOf([]store.Phase{store.PhaseBenchmarking, store.PhaseJudging}))
	}
	f.Reason = c.QueryParam("reason")
	f.Violation = c.QueryParam("violation")
	if f.Violation != "" && !rubric.IsViolationCategory(f.Violation) {
		return f, badRequest("violation must be one of %s", oneOf(rubric.ViolationCategories))
	}
	return f, nil
}

func (h *Handler) apiRunItems(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	f, err := h.itemFilter(c)
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	page, err := h.runs.Items(c.Request().Context(), run, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (h *Handler) apiDeleteRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if err := h.runs.Delete(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *Handler) apiRunAction(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.runAction(c, id, c.Param("action"))
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// RequeuedJSON is a run with the number of its items sent back to work.
type RequeuedJSON struct {
	Requeued int64 `json:"requeued"`
	*RunJSON
}

func (h *Handler) apiRetryJudging(c echo.Context) error {
	return h.apiRequeue(c, h.runs.RetryJudging)
}

// apiRetryFailed re-queues an ended run's failed items, each to the phase it failed in.
func (h *Handler) apiRetryFailed(c echo.Context) error { return h.apiRequeue(c, h.runs.RetryFailed) }

// apiRequeue sends items of a run back with requeue and answers how many, with the run.
func (h *Handler) apiRequeue(c echo.Context, requeue func(context.Context, int64) (int64, error)) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	n, err := requeue(withoutCancel(c), id)
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, RequeuedJSON{Requeued: n, RunJSON: out})
}

func (h *Handler) runAction(c echo.Context, id int64, action string) (*store.Run, error) {
	ctx := withoutCancel(c)
	switch action {
	case "pause":
		return h.runs.Pause(ctx, id)
	case "resume":
		return h.runs.Resume(ctx, id)
	case "cancel":
		return h.runs.Cancel(ctx, id)
	}
	return nil, echo.NewHTTPError(http.StatusNotFound, "unknown run action "+strconv.Quote(action))
}

func (h *Handler) apiExportRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	f, err := report.ParseFormat(c.QueryParam("format"), report.CSV, report.JSON, report.HTML)
	if err != nil {
		return badRequest("%v", err)
	}
	if f != report.CSV { // everything about the run, or its self-contained report (api_export.go)
		return h.exportReport(c, []int64{id}, f)
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if err != nil {
		return err
	}
	if _, _, err := h.runs.Results(ctx, run); err != nil {
		return err // before the header: a failure here can still be a clean error
	}
	w, end := startExport(c, report.CSV.ContentType(), report.CSV.Attachment(fmt.Sprintf("tribunal-run-%d", run.ID)))
	rows, err := h.runs.WriteCSV(ctx, w, run)
	if err == nil {
		err = end()
	}
	if err != nil {
		h.log.ErrorContext(ctx, "export run", "run_id", id, "rows", rows, "err", err)
	}
	return nil
}

// RejudgedJSON is how many answers a rejudge sent back to the judges.
type RejudgedJSON struct {
	Items int64 `json:"items"`
}

// apiRejudgeRun judges every answer of an ended run again, as the run
// page's Judge again does.
func (h *Handler) apiRejudgeRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	n, err := h.runs.Rejudge(withoutCancel(c), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, RejudgedJSON{Items: n})
}
