package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/analysis"
	"tribunal/runs"
	"tribunal/store"
)

func (h *Handler) runAnalysis(ctx context.Context, run *store.Run, human analysis.Report) (*analysis.RunReport, error) {
	results, err := h.store.TaskResults(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	entries := analysis.Entries(run, store.PassThreshold(run.Judges), results)
	out := &analysis.RunReport{Entries: analysis.Summarise(entries, nil), PairTests: analysis.PairTests(entries),
		Distributions: map[int64][]float64{}}
	if out.PairTests == nil {
		out.PairTests = []analysis.PairTest{}
	}
	for _, r := range results {
		if r.Score != nil {
			out.Distributions[r.RunTargetID] = append(out.Distributions[r.RunTargetID], *r.Score)
		}
	}
	if run.Repeats > 1 {
		out.Consistency = analysis.Consistency(run, results)
	}
	probe, err := h.store.JudgeProbes(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	flips, err := h.judgeFlips(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	out.Judges = analysis.Reliabilities(run.Judges, probe, human, flips)
	return out, nil
}

// cachedAnalysis is a run's statistics, cached by its item counts and
// grades (analysisStamp): while neither moves, neither do the statistics.
type cachedAnalysis struct {
	agreement analysis.Report
	report    *analysis.RunReport
}

func (h *Handler) analysisStamp(ctx context.Context, runID int64, prog runs.Progress) (string, error) {
	grades, err := h.store.GradeStamp(ctx, runID)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(prog.ByStatus) + "|" + grades, nil
}

// loadAnalysis returns the run's statistics: the cached ones, fresh when
// they match the run's current items and grades; stale or missing ones are
// computed again only when compute is set.
func (h *Handler) loadAnalysis(ctx context.Context, run *store.Run, prog runs.Progress, compute bool) (a cachedAnalysis, fresh, ok bool, err error) {
	stamp, err := h.analysisStamp(ctx, run.ID, prog)
	if err != nil {
		return a, false, false, err
	}
	if a, fresh, ok = h.analyses.get(run.ID, stamp); fresh || !compute {
		return a, fresh, ok, nil
	}
	rows, err := h.store.RunJudgeScores(ctx, run.ID)
	if err != nil {
		return a, false, false, err
	}
	a = cachedAnalysis{agreement: analysis.Agreements(run.Judges, rows)}
	if a.report, err = h.runAnalysis(ctx, run, a.agreement); err != nil {
		return cachedAnalysis{}, false, false, err
	}
	h.analyses.put(run.ID, stamp, a)
	return a, true, true, nil
}

func (h *Handler) apiRunAnalysis(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if err != nil {
		return err
	}
	prog, err := h.runs.Progress(ctx, run)
	if err != nil {
		return err
	}
	a, _, _, err := h.loadAnalysis(ctx, run, prog, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.report)
}

// judgeFlips is each judge's pairwise record: comparisons done and how many flipped.
func (h *Handler) judgeFlips(ctx context.Context, runID int64) (map[int64]analysis.Flips, error) {
	list, err := h.store.RunJudgeFlips(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]analysis.Flips, len(list))
	for _, f := range list {
		out[f.RunJudgeID] = analysis.Flips{Comparisons: f.Comparisons, Flipped: f.Flipped}
	}
	return out, nil
}

// untrustedJudges says, per run judge id, why its reliability card fails;
// pages that show a judge's scores mark it with this. Cached statistics do,
// even a few grades or items behind: every grade moves the stamp, and the
// grading page must not redo the whole analysis per keystroke.
func (h *Handler) untrustedJudges(ctx context.Context, run *store.Run) (map[int64]string, error) {
	prog, err := h.runs.Progress(ctx, run)
	if err != nil {
		return nil, err
	}
	a, _, ok, err := h.loadAnalysis(ctx, run, prog, false)
	if err == nil && !ok {
		a, _, _, err = h.loadAnalysis(ctx, run, prog, true)
	}
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	for _, j := range a.report.Judges {
		if len(j.Untrusted) > 0 {
			out[j.RunJudgeID] = strings.Join(j.Untrusted, "; ")
		}
	}
	return out, nil
}
