package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/store"
)

// RunJSON is a run as the API shows it: its setup, progress and results so far.
type RunJSON struct {
	*store.Run
	Judge    *store.RunJudge    `json:"judge"`
	Progress ProgressJSON       `json:"progress"`
	Current  *store.CurrentWork `json:"current,omitempty"`
	Summary  *RunSummaryJSON    `json:"summary,omitempty"`
	// FailedItems counts the run's FAILED items: a FINISHED run may have some.
	FailedItems int64 `json:"failed_items"`
	// Failures groups them by phase and reason, most frequent first (GET /api/runs/{id}).
	Failures []store.FailureGroup `json:"failures,omitzero"`
	// KPIValues are the run's KPI values once it has finished (GET /api/runs/{id}).
	KPIValues []store.RunKPI `json:"kpi_values,omitzero"`
}

// ProgressJSON counts a run's items.
type ProgressJSON struct {
	Total     int64                      `json:"total"`
	Done      int64                      `json:"done"`
	Completed int64                      `json:"completed"`
	Failed    int64                      `json:"failed"`
	Percent   int                        `json:"percent"`
	ByStatus  map[store.ItemStatus]int64 `json:"by_status"`
}

// RunSummaryJSON holds a run's aggregates.
type RunSummaryJSON struct {
	Overall       store.Stats        `json:"overall"`
	PerModel      []store.ModelStats `json:"per_model"`
	PassThreshold float64            `json:"pass_threshold"`
	Breakdown     *store.Breakdown   `json:"breakdown"`
	Models        []store.ModelScore `json:"models"`
	BestOverall   int64              `json:"best_overall_target_id,omitempty"`
	BestValue     int64              `json:"best_value_target_id,omitempty"`
}

func progressJSON(p store.Progress) ProgressJSON {
	return ProgressJSON{Total: p.Total, Done: p.Done(), Completed: p.Count(store.ItemCompleted),
		Failed: p.Count(store.ItemFailed), Percent: p.Percent(), ByStatus: p.ByStatus}
}

func (h *Handler) runJSON(ctx context.Context, run *store.Run, detail bool) (*RunJSON, error) {
	out := &RunJSON{Run: run}
	if len(run.Judges) > 0 {
		out.Judge = &run.Judges[0]
	}
	prog, err := h.store.RunProgress(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	out.Progress = progressJSON(prog)
	out.FailedItems = prog.Count(store.ItemFailed)
	if !detail {
		return out, nil
	}
	out.Failures = []store.FailureGroup{}
	if out.FailedItems > 0 {
		if out.Failures, err = h.store.RunFailures(ctx, run.ID); err != nil {
			return nil, err
		}
	}
	if out.Current, err = h.store.RunCurrent(ctx, run.ID); err != nil {
		return nil, err
	}
	sum, err := h.runSummary(ctx, run, prog)
	if err != nil {
		return nil, err
	}
	out.Summary = &RunSummaryJSON{Overall: sum.Overall, PerModel: sum.PerModel, PassThreshold: sum.PassThreshold,
		Breakdown: sum.Breakdown, Models: sum.Models, BestOverall: sum.BestOverall, BestValue: sum.BestValue}
	if out.KPIValues, err = h.runKPIValues(ctx, run.ID); err != nil {
		return nil, err
	}
	return out, nil
}

func (h *Handler) apiCreateRun(c echo.Context) error {
	var in store.RunInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	in.TriggeredBy = "API"
	run, err := h.engine.StartRun(withoutCancel(c), in)
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
	if st != "" && !slices.Contains([]store.RunStatus{store.RunPending, store.RunRunning, store.RunPaused,
		store.RunFinished, store.RunFailed, store.RunCancelled}, st) {
		return store.RunFilter{}, badRequest("status must be one of PENDING, RUNNING, PAUSED, FINISHED, FAILED, CANCELLED")
	}
	return store.RunFilter{Status: st, Tag: c.QueryParam("tag"), Page: page, PerPage: perPage}, nil
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
	f.AfterID = int64(after)
	f.Status = store.ItemStatus(c.QueryParam("status"))
	if f.Status != "" && !slices.Contains(store.ItemStatuses, f.Status) {
		return f, badRequest("status must be one of NEW, IN_PROGRESS, WAITING_FOR_JUDGE, JUDGING, COMPLETED, FAILED")
	}
	f.Model = c.QueryParam("model")
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
	if _, err := h.store.Run(c.Request().Context(), id); err != nil {
		return err
	}
	page, err := h.store.RunItems(c.Request().Context(), id, f)
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
	if err := h.store.DeleteRun(withoutCancel(c), id); err != nil {
		return err
	}
	h.engine.Broker().Publish(id)
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

func (h *Handler) apiRetryJudging(c echo.Context) error {
	return h.apiRequeue(c, h.engine.RetryJudging)
}

// apiRetryFailed re-queues an ended run's failed items, each to the phase it failed in.
func (h *Handler) apiRetryFailed(c echo.Context) error { return h.apiRequeue(c, h.engine.RetryFailed) }

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
	return c.JSON(http.StatusOK, struct {
		Requeued int64 `json:"requeued"`
		*RunJSON
	}{n, out})
}

func (h *Handler) runAction(c echo.Context, id int64, action string) (*store.Run, error) {
	ctx := withoutCancel(c)
	switch action {
	case "pause":
		return h.engine.Pause(ctx, id)
	case "resume":
		return h.engine.Resume(ctx, id)
	case "cancel":
		return h.engine.Cancel(ctx, id)
	}
	return nil, echo.NewHTTPError(http.StatusNotFound, "unknown run action "+strconv.Quote(action))
}

// csvHeader is the export's columns, one row per item.
// best_overall and best_value mark the rows of the run's best model overall
// and best value (overall score per dollar).
var csvHeader = []string{"task_id", "category", "subcategory", "provider", "model", "status", "score", "reasoning",
	"response", "error", "time_ms", "tokens", "tps", "repeat", "cost_usd", "grade", "best_overall", "best_value",
	"answer_attempts", "judge_attempts"}

func (h *Handler) apiExportRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	switch f := c.QueryParam("format"); f {
	case "", "csv":
	case "json", "html": // everything about the run, or its self-contained report (api_export.go)
		return h.exportReport(c, []int64{id}, f)
	default:
		return badRequest("format %q is not supported; use format=csv, json or html", f)
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	prog, err := h.store.RunProgress(c.Request().Context(), id)
	if err != nil {
		return err
	}
	sum, err := h.runSummary(c.Request().Context(), run, prog)
	if err != nil {
		return err
	}
	best := map[string][2]bool{}
	for _, t := range run.Targets {
		best[t.Label()] = [2]bool{t.ID == sum.BestOverall, t.ID == sum.BestValue}
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	w.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="tribunal-run-%d.csv"`, run.ID))
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	rows := 0
	err = h.store.EachRunItem(c.Request().Context(), id, func(v *store.ItemView) error {
		if err := cw.Write(csvRow(v, best[v.Provider+" / "+v.Model])); err != nil {
			return err
		}
		if rows++; rows%1000 == 0 {
			cw.Flush()
		}
		return cw.Error()
	})
	cw.Flush()
	if err != nil {
		h.log.ErrorContext(c.Request().Context(), "export run", "run_id", id, "rows", rows, "err", err)
	}
	return nil
}

func csvRow(v *store.ItemView, best [2]bool) []string {
	f := func(p *float64, prec int) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', prec, 64)
	}
	n := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	resp := ""
	if v.Response != nil {
		resp = *v.Response
	}
	return []string{csvSafe(v.TaskID), csvSafe(v.Category), csvSafe(v.Subcategory), csvSafe(v.Provider), csvSafe(v.Model),
		string(v.Status), f(v.Score, 2), csvSafe(v.Reasoning), csvSafe(resp), csvSafe(v.Error),
		n(v.TimeMs), n(v.CompletionTokens), f(v.TokensPerS, 2), strconv.Itoa(v.RepeatIndex), f(v.CostUSD, 6),
		deref(v.Grade), strconv.FormatBool(best[0]), strconv.FormatBool(best[1]),
		strconv.Itoa(v.AnswerAttempts), strconv.Itoa(v.JudgeAttempts)}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// csvSafe defuses spreadsheet formulas: text a model or user wrote that
// starts with = + @ (or -x, but not a "- " list item) would otherwise run as
// a formula when the file is opened in a spreadsheet.
func csvSafe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '@', '\t', '\r':
		return "'" + s
	case '-':
		if len(s) > 1 && s[1] != ' ' && s[1] != '-' {
			return "'" + s
		}
	}
	return s
}

// elapsed is how long a run has been going (or went).
func elapsed(r *store.Run) time.Duration {
	if r.StartedAt == nil {
		return 0
	}
	end := time.Now()
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	return end.Sub(*r.StartedAt).Round(time.Second)
}
