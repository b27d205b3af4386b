package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

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
	a, _, _, err := h.runs.Analysis(ctx, run, prog, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.Report)
}
