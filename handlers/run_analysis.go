package handlers

import (
	"context"
	"net/http"

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
	rows, err := h.store.RunJudgeScores(ctx, id)
	if err != nil {
		return err
	}
	out, err := h.runAnalysis(ctx, run, analysis.Agreements(run.Judges, rows))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// judgeFlips is each judge's pairwise record; runs without pairwise judging have none.
func (h *Handler) judgeFlips(ctx context.Context, runID int64) (map[int64]analysis.Flips, error) {
	return map[int64]analysis.Flips{}, nil
}
