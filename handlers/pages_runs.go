package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showRuns(c echo.Context) error {
	f, err := h.runFilter(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	l := views.RunsList{Status: string(f.Status), Tag: f.Tag, CollectionID: f.CollectionID, AgentID: f.AgentID,
		From: c.QueryParam("from"), To: c.QueryParam("to")}
	if f.AgentID != 0 {
		a, err := h.store.Agent(ctx, f.AgentID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if a != nil {
			l.AgentName = a.Name
		}
	}
	// The list's Compare button sends the ticked runs here, so that too few
	// are answered on the list itself.
	if c.QueryParam("compare") != "" {
		ids, err := queryRunIDs(c)
		if err != nil {
			return err
		}
		switch {
		case len(ids) == 0:
			l.CompareError = "Tick two or more runs to compare: none is ticked."
		case len(ids) == 1:
			l.CompareError = "Tick two or more runs to compare: only one is ticked."
		case len(ids) > runs.MaxCompareRuns:
			l.CompareError = fmt.Sprintf("Compare at most %d runs at a time (%d ticked).", runs.MaxCompareRuns, len(ids))
		default:
			// Oldest first: the first run is the comparison's baseline,
			// and a newer run is measured against an older one.
			slices.Sort(ids)
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = strconv.FormatInt(id, 10)
			}
			return c.Redirect(http.StatusSeeOther, "/compare?run_ids="+strings.Join(parts, ","))
		}
		l.Ticked = map[int64]bool{}
		for _, id := range ids {
			l.Ticked[id] = true
		}
	}
	page, err := h.store.Runs(ctx, f)
	if err != nil {
		return err
	}
	l.Page, l.Pages, l.Total = page.Page, page.Pages(), page.Total
	if l.Tags, err = h.store.AllTags(ctx); err != nil {
		return err
	}
	if l.Collections, err = h.store.Collections(ctx); err != nil {
		return err
	}
	now := time.Now()
	for _, r := range page.Items {
		row, err := h.runRow(ctx, r, now)
		if err != nil {
			return err
		}
		l.Rows = append(l.Rows, row)
	}
	return render(c, http.StatusOK, views.RunsPage(l))
}

// runRow is a run's row in the runs list: its progress and figures.
func (h *Handler) runRow(ctx context.Context, r store.Run, now time.Time) (views.RunRow, error) {
	prog, err := h.runs.Progress(ctx, &r)
	if err != nil {
		return views.RunRow{}, err
	}
	g, err := h.runs.Glance(ctx, &r, prog, now)
	if err != nil {
		return views.RunRow{}, err
	}
	return views.RunRow{Run: r, Progress: prog, Glance: g}, nil
}

// htmxStopPolling is the status that makes HTMX stop an element's polling.
const htmxStopPolling = 286

// showRunRow is one run's row of the runs list, which an active run's row
// polls to move live; run_ids carries its compare tick.
func (h *Handler) showRunRow(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if nf := (*store.NotFoundError)(nil); errors.As(err, &nf) && isHTMX(c) {
		// Deleted meanwhile: 286 is HTMX's "stop polling", and the row
		// is swapped for nothing.
		return c.HTML(htmxStopPolling, "<!-- run deleted -->")
	}
	if err != nil {
		return err
	}
	row, err := h.runRow(ctx, *run, time.Now())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunListRow(row, c.QueryParam("run_ids") == strconv.FormatInt(id, 10)))
}

func progressView(run *store.Run, p runs.Progress, cur *store.CurrentWork, running []runs.RunningGroup, b runs.Budget) views.ProgressView {
	return views.ProgressView{RunID: run.ID, Status: string(run.Status), Phase: string(run.Phase), Progress: p,
		Current: cur, Running: running, Elapsed: run.Elapsed(time.Now()).Round(time.Second).String(), Error: run.Error,
		Imported: run.Kind == store.RunImported, HasJudges: len(run.Judges) > 0, Budget: b}
}

func (h *Handler) progressOf(c echo.Context, run *store.Run) (views.ProgressView, runs.Progress, error) {
	ctx := c.Request().Context()
	prog, err := h.runs.Progress(ctx, run)
	if err != nil {
		return views.ProgressView{}, prog, err
	}
	cur, err := h.store.RunCurrent(ctx, run.ID)
	if err != nil {
		return views.ProgressView{}, prog, err
	}
	running, err := h.runs.Running(ctx, run)
	if err != nil {
		return views.ProgressView{}, prog, err
	}
	b, err := h.budgetOf(ctx, run)
	if err != nil {
		return views.ProgressView{}, prog, err
	}
	return progressView(run, prog, cur, running, b), prog, nil
}

// budgetOf is a run's spend against its budget for the progress panel;
// a run without a budget skips the sum, which every live frame would pay.
func (h *Handler) budgetOf(ctx context.Context, run *store.Run) (runs.Budget, error) {
	if run.Options.MaxCostUSD == nil {
		return runs.Budget{}, nil
	}
	return h.runs.Budget(ctx, run)
}

const perTaskLimit = 200

func (h *Handler) showRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if err != nil {
		return err
	}
	d := views.RunPageData{Run: run, Failures: views.FailuresView{RunID: id, Status: string(run.Status)}}
	var prog runs.Progress
	if d.Progress, prog, err = h.progressOf(c, run); err != nil {
		return err
	}
	if prog.Failed > 0 {
		if d.Failures.Groups, err = h.runs.Failures(ctx, id); err != nil {
			return err
		}
	}
	if d.Logs, err = h.store.LastRunLogs(ctx, id, 200); err != nil {
		return err
	}
	sum, err := h.runs.Summary(ctx, run, prog)
	if err != nil {
		return err
	}
	if d.Results, err = h.resultsView(ctx, run, prog, sum, false); err != nil {
		return err
	}
	if d.Items, err = h.itemsTable(c, run); err != nil {
		return err
	}
	if d.Sources, err = h.runSources(ctx, run); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunPage(d))
}

// runSources names the trace sources an imported run came from, those
// not deleted since.
func (h *Handler) runSources(ctx context.Context, run *store.Run) (map[int64]string, error) {
	out := map[int64]string{}
	for _, t := range run.Targets {
		if t.Source == nil {
			continue
		}
		src, err := h.store.Source(ctx, t.Source.SourceID)
		if nf := (*store.NotFoundError)(nil); errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[src.ID] = src.Name
	}
	return out, nil
}

func (h *Handler) itemsTable(c echo.Context, run *store.Run) (views.ItemsTable, error) {
	f, err := h.itemFilter(c)
	if err != nil {
		return views.ItemsTable{}, err
	}
	page, err := h.runs.Items(c.Request().Context(), run, f)
	if err != nil {
		return views.ItemsTable{}, err
	}
	t := views.ItemsTable{RunID: run.ID, ItemFilter: viewFilter(f), Page: page, After: f.AfterID, Before: f.BeforeID}
	if (f.AfterID > 0 || f.BeforeID > 0) && f.Page == 0 {
		t.Page.Page = 0 // reached by cursor alone: its number is unknown
	}
	seen := map[string]bool{}
	for _, j := range run.Judges {
		t.Violations = t.Violations || j.AsksViolations
	}
	for _, tg := range run.Targets {
		t.Agents = t.Agents || tg.IsAgent()
		if !seen[tg.Model] {
			seen[tg.Model] = true
			t.Models = append(t.Models, tg.Model)
		}
	}
	return t, nil
}

func (h *Handler) runItemsPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	t, err := h.itemsTable(c, run)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ItemsTableView(t))
}

func (h *Handler) runResultsPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	prog, err := h.runs.Progress(c.Request().Context(), run)
	if err != nil {
		return err
	}
	sum, err := h.runs.Summary(c.Request().Context(), run, prog)
	if err != nil {
		return err
	}
	v, err := h.resultsView(c.Request().Context(), run, prog, sum, c.QueryParam("analysis") != "")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunResults(v))
}

// runFailuresPartial is the table of a run's failures, reloaded when a watched run ends.
func (h *Handler) runFailuresPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	groups, err := h.runs.Failures(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunFailures(views.FailuresView{RunID: id, Status: string(run.Status), Groups: groups}))
}

// runTargetsPartial is the run page's targets, swapped in once the
// warm-up has listed an agent's tools.
func (h *Handler) runTargetsPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunTargets(run))
}

// runActionPage pauses, resumes or cancels, answering the new progress panel.
func (h *Handler) runActionPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.runAction(c, id, c.Param("action"))
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	if run == nil {
		return err
	}
	p, _, perr := h.progressOf(c, run)
	if perr != nil {
		return perr
	}
	if err != nil {
		p.Error = err.Error()
	}
	return render(c, http.StatusOK, views.RunProgress(p))
}

// raiseBudgetPage raises a run's budget and resumes it (runs.RaiseBudget),
// answering the new progress panel; a refused budget re-shows it with why.
func (h *Handler) raiseBudgetPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	status := http.StatusOK
	var problem string
	form, err := c.FormParams()
	if err != nil {
		return badRequest("bad form: %v", err)
	}
	usd, err := formFloat(form, "max_cost_usd")
	switch {
	case err != nil:
	case usd == nil:
		err = &store.ValidationError{Field: "max_cost_usd", Message: "is required: the new budget in USD"}
	default:
		_, err = h.runs.RaiseBudget(withoutCancel(c), id, *usd)
	}
	if err != nil {
		var ok bool
		if status, problem, ok = formProblem(err); !ok {
			return err
		}
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	p, _, err := h.progressOf(c, run)
	if err != nil {
		return err
	}
	p.BudgetProblem = problem
	return render(c, status, views.RunProgress(p))
}

// retryJudgingPage re-queues the items whose judging failed and reloads the run page.
func (h *Handler) retryJudgingPage(c echo.Context) error {
	return h.requeuePage(c, h.runs.RetryJudging, "no item of this run failed in judging")
}

// retryFailedPage re-queues an ended run's failed items and reloads the run page.
func (h *Handler) retryFailedPage(c echo.Context) error {
	return h.requeuePage(c, h.runs.RetryFailed, "no item of this run failed")
}

// requeuePage sends items of a run back with requeue and reloads the run
// page; none is the conflict shown when there was nothing to send back.
func (h *Handler) requeuePage(c echo.Context, requeue func(context.Context, int64) (int64, error), none string) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	n, err := requeue(withoutCancel(c), id)
	if err != nil {
		return err
	}
	if n == 0 {
		return echo.NewHTTPError(http.StatusConflict, none)
	}
	msg := fmt.Sprintf("%d items sent back for another try.", n)
	if n == 1 {
		msg = "1 item sent back for another try."
	}
	return redirectFlash(c, msg, fmt.Sprintf("/runs/%d", id))
}

// resultsView adds judge agreement and the run's statistics to the aggregates.
//
// The statistics cost a pass over every item, so a page never waits for
// them: it shows the cached ones (a live run's may lag a few items behind)
// or, with none cached, loads them in a second request (compute = true).
func (h *Handler) resultsView(ctx context.Context, run *store.Run, prog runs.Progress, sum *runs.Summary, compute bool) (views.RunResultsView, error) {
	v := views.RunResultsView{Run: run, Summary: sum}
	a, fresh, ok, err := h.runs.Analysis(ctx, run, prog, compute)
	if err != nil {
		return v, err
	}
	if !ok || (!fresh && !run.Active()) {
		v.AnalysisPending = true
		return v, nil
	}
	v.Agreement, v.Analysis = &a.Agreement, a.Report
	if run.Options.Pairwise {
		pv, err := h.pairwiseView(ctx, run)
		if err != nil {
			return v, err
		}
		v.Pairwise = &pv
	}
	return v, nil
}

func (h *Handler) rerunPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.runs.Rerun(withoutCancel(c), id, "MANUAL")
	if err != nil {
		return err
	}
	return redirectFlash(c, "New run started from this run's setup.", fmt.Sprintf("/runs/%d", run.ID))
}

func (h *Handler) deleteRunPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if err := h.runs.Delete(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Run deleted.", "/runs")
}
