package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/analysis"
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

func (h *Handler) analysisStamp(ctx context.Context, runID int64, prog store.Progress) (string, error) {
	grades, err := h.store.GradeStamp(ctx, runID)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(prog.ByStatus) + "|" + grades, nil
}

// peekAnalysis returns the cached statistics of a run without computing:
// fresh when they match the run's current items and grades.
func (h *Handler) peekAnalysis(ctx context.Context, run *store.Run, prog store.Progress) (a cachedAnalysis, fresh, ok bool) {
	stamp, err := h.analysisStamp(ctx, run.ID, prog)
	if err != nil {
		return a, false, false
	}
	return h.analyses.get(run.ID, stamp)
}

func (h *Handler) cachedAnalysis(ctx context.Context, run *store.Run, prog store.Progress) (cachedAnalysis, error) {
	stamp, err := h.analysisStamp(ctx, run.ID, prog)
	if err != nil {
		return cachedAnalysis{}, err
	}
	if c, fresh, _ := h.analyses.get(run.ID, stamp); fresh {
		return c, nil
	}
	rows, err := h.store.RunJudgeScores(ctx, run.ID)
	if err != nil {
		return cachedAnalysis{}, err
	}
	c := cachedAnalysis{agreement: analysis.Agreements(run.Judges, rows)}
	if c.report, err = h.runAnalysis(ctx, run, c.agreement); err != nil {
		return cachedAnalysis{}, err
	}
	h.analyses.put(run.ID, stamp, c)
	return c, nil
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
	prog, err := h.store.RunProgress(ctx, id)
	if err != nil {
		return err
	}
	a, err := h.cachedAnalysis(ctx, run, prog)
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
// pages that show a judge's scores mark it with this.
func (h *Handler) untrustedJudges(ctx context.Context, run *store.Run) (map[int64]string, error) {
	prog, err := h.store.RunProgress(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	a, err := h.cachedAnalysis(ctx, run, prog)
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
