package handlers

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/analysis"
	"tribunal/store"
	"tribunal/views"
)

// Comparison is several runs side by side: per model and per category,
// paired tests between every two models, and the tasks with each answer.
type Comparison struct {
	Runs        []*store.Run                     `json:"runs"`
	BaselineRun int64                            `json:"baseline_run_id,omitempty"`
	Entries     []analysis.EntryStats            `json:"entries"`
	Baselines   []int                            `json:"baselines"` // per entry, the index of its baseline entry (-1: none)
	PairTests   []analysis.PairTest              `json:"pair_tests"`
	Categories  []string                         `json:"categories"`
	Grid        [][]*float64                     `json:"category_scores"` // per entry, per category
	Tasks       store.Page[analysis.TaskAnswers] `json:"tasks"`
}

// cachedComparison is the statistics of a comparison, cached by its runs,
// baseline and the runs' item counts: the bootstrap dominates its cost.
type cachedComparison struct {
	entries []analysis.EntryStats
	tests   []analysis.PairTest
}

// maxCompareRuns bounds a comparison; each run adds a query and its models.
const maxCompareRuns = 10

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
	if len(ids) > maxCompareRuns {
		return nil, 0, badRequest("run_ids: compare at most %d runs", maxCompareRuns)
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

// compare builds the comparison of runs, with one page of task rows.
func (h *Handler) compare(ctx context.Context, ids []int64, baseline int64, f analysis.TaskFilter, page, perPage int) (*Comparison, error) {
	out := &Comparison{BaselineRun: baseline, Runs: []*store.Run{}, Entries: []analysis.EntryStats{}, PairTests: []analysis.PairTest{}}
	var entries []analysis.Entry
	for _, id := range ids {
		run, err := h.store.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		results, err := h.store.TaskResults(ctx, id)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, run)
		entries = append(entries, analysis.Entries(run, store.PassThreshold(run.Judges), results)...)
	}
	out.Baselines = analysis.Baselines(entries, baseline)
	// The statistics move only when the runs' items do.
	var stamp strings.Builder
	for _, run := range out.Runs {
		prog, err := h.store.RunProgress(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		stamp.WriteString(fmt.Sprint(prog.ByStatus))
	}
	cacheKey := fmt.Sprint(ids, baseline)
	cached, fresh, _ := h.comparisons.get(cacheKey, stamp.String())
	if !fresh {
		cached = cachedComparison{entries: analysis.Summarise(entries, out.Baselines), tests: analysis.PairTests(entries)}
		h.comparisons.put(cacheKey, stamp.String(), cached)
	}
	out.Entries, out.PairTests = cached.entries, cached.tests
	if out.PairTests == nil {
		out.PairTests = []analysis.PairTest{}
	}
	cats, grid := analysis.CategoryGrid(entries)
	out.Categories = cats
	out.Grid = make([][]*float64, len(grid))
	for i, row := range grid {
		out.Grid[i] = make([]*float64, len(row))
		for j, v := range row {
			if v == v { // NaN: no score in that category
				out.Grid[i][j] = &v
			}
		}
	}
	rows := analysis.TaskRows(entries, out.Baselines, f)
	page, perPage = max(page, 1), min(max(perPage, 1), 200)
	out.Tasks = store.Page[analysis.TaskAnswers]{Page: page, PerPage: perPage, Total: int64(len(rows)), Items: []analysis.TaskAnswers{}}
	from := min((page-1)*perPage, len(rows))
	shown := rows[from:min(from+perPage, len(rows))]
	keys := make([]string, len(shown))
	for i, r := range shown {
		keys[i] = r.TaskID
	}
	// Answers of the page's tasks only, run by run.
	type key struct {
		run, target int64
		task        string
	}
	answers := map[key]store.Answer{}
	questions := map[string]string{}
	for _, run := range out.Runs {
		list, err := h.store.Answers(ctx, run.ID, keys)
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			answers[key{run.ID, a.RunTargetID, a.TaskKey}] = a
			questions[a.TaskKey] = a.Question
		}
	}
	for _, r := range shown {
		ct := analysis.TaskAnswers{TaskRow: r, Question: questions[r.TaskID], Answers: make([]*string, len(entries)), ItemIDs: make([]int64, len(entries))}
		for i, e := range entries {
			if a, ok := answers[key{e.RunID, e.TargetID, r.TaskID}]; ok {
				ct.Answers[i], ct.ItemIDs[i] = a.Response, a.ItemID
			}
		}
		out.Tasks.Items = append(out.Tasks.Items, ct)
	}
	return out, nil
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
	out, err := h.compare(c.Request().Context(), ids, baseline, compareFilter(c), page, cmp.Or(perPage, 50))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// DiffJSON is a word diff of two answers to one task.
type DiffJSON struct {
	TaskID    string            `json:"task_id"`
	A         int64             `json:"a_item_id"`
	B         int64             `json:"b_item_id"`
	Ops       []analysis.DiffOp `json:"ops"`
	Truncated bool              `json:"truncated"`
}

// itemsDiff diffs the answers of two items.
func (h *Handler) itemsDiff(ctx context.Context, a, b int64) (*DiffJSON, error) {
	ia, err := h.store.ItemAnswer(ctx, a)
	if err != nil {
		return nil, err
	}
	ib, err := h.store.ItemAnswer(ctx, b)
	if err != nil {
		return nil, err
	}
	ops, trunc := analysis.WordDiff(deref(ia.Response), deref(ib.Response))
	return &DiffJSON{TaskID: ia.TaskKey, A: a, B: b, Ops: ops, Truncated: trunc}, nil
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
	d, err := h.itemsDiff(c.Request().Context(), int64(a), int64(b))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

func (h *Handler) showCompare(c echo.Context) error {
	started := time.Now()
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
		cmpr, err := h.compare(ctx, ids, baseline, compareFilter(c), page, 50)
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

func (h *Handler) showDiff(c echo.Context) error {
	a, err := queryInt(c, "a")
	if err != nil {
		return err
	}
	b, err := queryInt(c, "b")
	if err != nil {
		return err
	}
	d, err := h.itemsDiff(c.Request().Context(), int64(a), int64(b))
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.DiffPage(d.TaskID, d.Ops, d.Truncated))
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
