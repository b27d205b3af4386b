package handlers

import (
	"bytes"
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/analysis"
	"tribunal/report"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// queryRunIDs reads run_ids (comma or space separated, or repeated), each once.
func queryRunIDs(c echo.Context) ([]int64, error) {
	var ids []int64
	for _, v := range c.QueryParams()["run_ids"] {
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			id, err := strconv.ParseInt(part, 10, 64)
			if err != nil || id <= 0 {
				return nil, badRequest("run_ids: %q is not a run id", part)
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// compareParams reads run_ids and the baseline.
func compareParams(c echo.Context) ([]int64, int64, error) {
	ids, err := queryRunIDs(c)
	if err != nil {
		return nil, 0, err
	}
	if len(ids) > runs.MaxCompareRuns {
		return nil, 0, badRequest("run_ids: compare at most %d runs", runs.MaxCompareRuns)
	}
	var baseline int64
	if v := c.QueryParam("baseline"); v != "" {
		b, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !slices.Contains(ids, b) {
			return nil, 0, badRequest("baseline: must be one of the compared run ids")
		}
		baseline = b
	}
	return ids, baseline, nil
}

func compareFilter(c echo.Context) analysis.TaskFilter {
	only := c.QueryParam("only")
	return analysis.TaskFilter{Category: c.QueryParam("category"), Disagreement: only == "disagreements", Regression: only == "regressions"}
}

func (h *Handler) apiCompare(c echo.Context) error {
	ids, baseline, err := compareParams(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return badRequest("run_ids: name the runs to compare, e.g. ?run_ids=1,2")
	}
	page, err := queryInt(c, "page")
	if err != nil {
		return err
	}
	perPage, err := queryInt(c, "per_page")
	if err != nil {
		return err
	}
	if only := c.QueryParam("only"); only != "" && only != "disagreements" && only != "regressions" {
		return badRequest("only: use disagreements or regressions")
	}
	out, err := h.runs.Compare(c.Request().Context(), ids, baseline, compareFilter(c), page, cmp.Or(perPage, 50))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// apiCompareReport downloads a comparison (GET /api/compare/report): a
// self-contained HTML report, CSV (a row per task and model) or JSON.
func (h *Handler) apiCompareReport(c echo.Context) error {
	ids, baseline, err := compareParams(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return badRequest("run_ids: name the runs to compare, e.g. ?run_ids=1,2&format=html")
	}
	f, err := report.ParseFormat(c.QueryParam("format"), report.HTML, report.CSV, report.JSON)
	if err != nil {
		return badRequest("%v", err)
	}
	cmpr, err := report.LoadComparison(c.Request().Context(), h.runs, ids, baseline)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	now := time.Now()
	switch f {
	case report.CSV:
		err = report.WriteComparisonCSV(&buf, cmpr)
	case report.JSON:
		err = report.WriteComparisonJSON(&buf, cmpr, now)
	default:
		err = report.WriteComparisonHTML(&buf, cmpr, now)
	}
	if err != nil {
		return err
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, f.Attachment("tribunal-comparison-"+strings.Join(parts, "-")))
	return c.Blob(http.StatusOK, f.ContentType(), buf.Bytes())
}

func (h *Handler) apiDiff(c echo.Context) error {
	a, err := queryInt(c, "a")
	if err != nil {
		return err
	}
	b, err := queryInt(c, "b")
	if err != nil {
		return err
	}
	if a <= 0 || b <= 0 {
		return badRequest("a and b: name two item ids, e.g. ?a=1&b=2")
	}
	d, err := h.runs.Diff(c.Request().Context(), int64(a), int64(b))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (h *Handler) showCompare(c echo.Context) error {
	started := time.Now()
	// The picker's Compare button says so (compare=1): with nothing ticked,
	// the picker answers why instead of showing an empty page.
	if c.QueryParam("compare") != "" {
		ids, err := queryRunIDs(c)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return h.renderComparePicker(c, "Tick at least one run to compare (one run compares its models): none is ticked.")
		}
	}
	ids, baseline, err := compareParams(c)
	if err != nil {
		return err
	}
	page, err := queryInt(c, "page")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	recent, err := h.store.Runs(ctx, store.RunFilter{PerPage: 50})
	if err != nil {
		return err
	}
	p := views.ComparePage{Recent: recent.Items, Selected: map[int64]bool{}, Baseline: baseline,
		Category: c.QueryParam("category"), Only: c.QueryParam("only")}
	for _, id := range ids {
		p.Selected[id] = true
	}
	if len(ids) > 0 {
		cmpr, err := h.runs.Compare(ctx, ids, baseline, compareFilter(c), page, 50)
		if err != nil {
			return err
		}
		p.Runs, p.Entries, p.Baselines, p.PairTests = cmpr.Runs, cmpr.Entries, cmpr.Baselines, cmpr.PairTests
		p.Categories, p.Grid, p.Tasks = cmpr.Categories, cmpr.Grid, cmpr.Tasks.Items
		p.Pager = views.Pager{Page: cmpr.Tasks.Page, Pages: cmpr.Tasks.Pages(), Total: cmpr.Tasks.Total, Link: p.Link}
	}
	p.ServerTime = time.Since(started).Round(time.Millisecond).String()
	return render(c, http.StatusOK, views.CompareView(p))
}

// renderComparePicker shows the run picker alone, with why it is back.
func (h *Handler) renderComparePicker(c echo.Context, why string) error {
	recent, err := h.store.Runs(c.Request().Context(), store.RunFilter{PerPage: 50})
	if err != nil {
		return err
	}
	return render(c, http.StatusUnprocessableEntity, views.CompareView(views.ComparePage{Recent: recent.Items, Selected: map[int64]bool{}, PickError: why}))
}

func (h *Handler) showDiff(c echo.Context) error {
	a, err := queryInt(c, "a")
	if err != nil {
		return err
	}
	b, err := queryInt(c, "b")
	if err != nil {
		return err
	}
	d, err := h.runs.Diff(c.Request().Context(), int64(a), int64(b))
	if err != nil {
		return err
	}
	// Back to the comparison the diff came from, else to the two answers' runs.
	ids, baseline, err := compareParams(c)
	if err != nil || len(ids) == 0 {
		ids, baseline = []int64{d.Sides[0].RunID}, 0
		if r := d.Sides[1].RunID; r != ids[0] {
			ids = append(ids, r)
		}
	}
	return render(c, http.StatusOK, views.DiffPage(views.DiffView{Diff: d, Back: compareLink(ids, baseline)}))
}

// compareLink is the compare page of runs ids against baseline (0: none).
func compareLink(ids []int64, baseline int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	v := url.Values{"run_ids": {strings.Join(parts, ",")}}
	if baseline != 0 {
		v.Set("baseline", strconv.FormatInt(baseline, 10))
	}
	return "/compare?" + v.Encode()
}

func (h *Handler) collectionTrend(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	pts, err := h.store.CollectionTrend(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.CollectionTrend(pts))
}

func (h *Handler) apiCollectionTrend(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	if _, err := h.store.Collection(c.Request().Context(), id); err != nil {
		return err
	}
	pts, err := h.store.CollectionTrend(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pts)
}
