package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/agentsrc"
	"tribunal/mcpclient"
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

// AgentTestJSON is what POST /api/agents/{id}/test answers: each MCP
// server of the agent, whether it answered, and the tools it offers the
// agent (after allowed_tools).
type AgentTestJSON struct {
	Servers []mcpclient.ServerStatus `json:"servers"`
}

// testAgent connects to every MCP server of an agent, as a run would: with
// its secrets, through the egress-checked client, within its tool timeout.
func (h *Handler) testAgent(c echo.Context) (AgentTestJSON, error) {
	id, err := pathID(c, "agent")
	if err != nil {
		return AgentTestJSON{}, err
	}
	ctx := c.Request().Context()
	a, err := h.store.AgentWithSecrets(ctx, id)
	if err != nil {
		return AgentTestJSON{}, err
	}
	servers := make([]mcpclient.Server, len(a.MCPServers))
	for i, m := range a.MCPServers {
		servers[i] = m.ClientServer()
	}
	opts := mcpclient.Options{HTTPClient: h.engine.HTTPClient(), ToolTimeout: time.Duration(a.ToolTimeoutSeconds) * time.Second,
		AllowCommands: h.store.AllowsMCPCommands()}
	return AgentTestJSON{Servers: mcpclient.Test(ctx, servers, opts)}, nil
}

func (h *Handler) apiTestAgent(c echo.Context) error {
	res, err := h.testAgent(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
