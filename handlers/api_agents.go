package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"tribunal/agentsrc"
	"tribunal/store"
)

// ExtractJSON is the body of POST /api/agents/extract: OpenAI Agents SDK
// Python source, read as text, never run.
type ExtractJSON struct {
	Code string `json:"code"`
}

func (h *Handler) apiListAgents(c echo.Context) error {
	as, err := h.store.Agents(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, as)
}

func (h *Handler) apiGetAgent(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	a, err := h.store.Agent(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (h *Handler) apiCreateAgent(c echo.Context) error {
	var in store.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	a, err := h.store.CreateAgent(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, a)
}

func (h *Handler) apiUpdateAgent(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	var in store.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	a, err := h.store.UpdateAgent(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (h *Handler) apiDeleteAgent(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	if err := h.store.DeleteAgent(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *Handler) apiAgentVersions(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	vs, err := h.store.AgentVersions(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, vs)
}

// apiExtractAgent answers the config the code holds, unsaved, or 422
// naming what could not be read.
func (h *Handler) apiExtractAgent(c echo.Context) error {
	var in ExtractJSON
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	r, err := agentsrc.Extract(in.Code)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r.Config)
}
