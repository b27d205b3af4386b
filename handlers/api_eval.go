package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/store"
)

// ---- judgement styles ----

func (h *Handler) apiListStyles(c echo.Context) error {
	styles, err := h.store.Styles(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, styles)
}

func (h *Handler) apiGetStyle(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	st, err := h.store.Style(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

func (h *Handler) apiStyleVersions(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	vs, err := h.store.StyleVersions(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, vs)
}

func (h *Handler) apiCreateStyle(c echo.Context) error {
	var in store.StyleInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	st, err := h.store.CreateStyle(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, st)
}

func (h *Handler) apiUpdateStyle(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	var in store.StyleInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	st, err := h.store.UpdateStyle(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

func (h *Handler) apiDeleteStyle(c echo.Context) error {
	id, err := pathID(c, "style")
	if err != nil {
		return err
	}
	if err := h.store.DeleteStyle(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ---- judges ----

func (h *Handler) apiListJudges(c echo.Context) error {
	js, err := h.store.Judges(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, js)
}

func (h *Handler) apiGetJudge(c echo.Context) error {
	id, err := pathID(c, "judge")
	if err != nil {
		return err
	}
	j, err := h.store.Judge(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

func (h *Handler) apiCreateJudge(c echo.Context) error {
	var in store.JudgeInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	j, err := h.store.CreateJudge(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, j)
}

func (h *Handler) apiUpdateJudge(c echo.Context) error {
	id, err := pathID(c, "judge")
	if err != nil {
		return err
	}
	var in store.JudgeInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	j, err := h.store.UpdateJudge(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

func (h *Handler) apiDeleteJudge(c echo.Context) error {
	id, err := pathID(c, "judge")
	if err != nil {
		return err
	}
	if err := h.store.DeleteJudge(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ---- scores, grades, re-runs ----

func (h *Handler) apiRunScores(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if _, err := h.store.Run(c.Request().Context(), id); err != nil {
		return err
	}
	f := store.ScoreFilter{Model: c.QueryParam("model"), Judge: c.QueryParam("judge"), Metric: c.QueryParam("metric")}
	if f.Page, err = queryInt(c, "page"); err != nil {
		return err
	}
	if f.PerPage, err = queryInt(c, "per_page"); err != nil {
		return err
	}
	page, err := h.store.RunScores(c.Request().Context(), id, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, page)
}

func (h *Handler) apiGradeItem(c echo.Context) error {
	id, err := pathID(c, "item")
	if err != nil {
		return err
	}
	var in store.GradeInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	g, err := h.store.SetGrade(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, g)
}

func (h *Handler) apiRerun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.engine.Rerun(withoutCancel(c), id, "API")
	if err != nil {
		return err
	}
	out, err := h.runJSON(c.Request().Context(), run, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (h *Handler) apiRunAgreement(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	rep, err := h.runs.Agreement(c.Request().Context(), run)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}
