package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/store"
)

// RunPatch is what PATCH /api/runs/{id} changes: the budget, for now.
type RunPatch struct {
	// MaxCostUSD raises (or lowers) the run's budget; a run paused at its
	// budget continues when resumed under a higher one.
	MaxCostUSD *float64 `json:"max_cost_usd"`
}

func (h *Handler) apiEstimateRun(c echo.Context) error {
	var in store.RunInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	est, err := h.runs.Estimate(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, est)
}

func (h *Handler) apiPatchRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	var p RunPatch
	if err := bindJSON(c, &p); err != nil {
		return err
	}
	run, err := h.runs.SetBudget(c.Request().Context(), id, p.MaxCostUSD)
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
