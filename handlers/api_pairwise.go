package handlers

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

// apiRunPairwise answers a pairwise run's leaderboard (Bradley–Terry with
// bootstrap CIs), its judges' position-flip rates and its comparison counts.
func (h *Handler) apiRunPairwise(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if err != nil {
		return err
	}
	if !run.Options.Pairwise {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("run %d does not judge in pairs: it has no pairwise results", id))
	}
	rep, err := h.runs.Pairwise(ctx, run)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// pairwiseView fills views.PairwiseSection for a run whose Options.Pairwise is set.
func (h *Handler) pairwiseView(ctx context.Context, run *store.Run) (views.PairwiseView, error) {
	rep, err := h.runs.Pairwise(ctx, run)
	if err != nil {
		return views.PairwiseView{}, err
	}
	return views.PairwiseView{RunID: run.ID, Report: *rep}, nil
}
