package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/agentsrc"
	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showAgents(c echo.Context) error {
	return h.renderAgents(c, http.StatusOK, views.AgentForm{})
}

func (h *Handler) renderAgents(c echo.Context, status int, form views.AgentForm) error {
	ctx := c.Request().Context()
	as, err := h.store.Agents(ctx)
	if err != nil {
		return err
	}
	if form.Providers, err = h.store.Providers(ctx); err != nil {
		return err
	}
	counts, err := h.store.AgentRunCounts(ctx)
	if err != nil {
		return err
	}
	return render(c, status, views.AgentsPage(as, counts, form))
}

// agentForm reads the agent form (views.AgentFormView) into an input.
func agentForm(c echo.Context) (store.AgentInput, error) {
	form, err := c.FormParams()
	if err != nil {
		return store.AgentInput{}, badRequest("unreadable form: %v", err)
	}
	in := store.AgentInput{Name: form.Get("name"), Description: form.Get("description"),
		Executor: store.AgentExecutor(form.Get("executor")), Model: form.Get("model"), SystemPrompt: form.Get("system_prompt"),
		Tags: store.ParseTags(form.Get("tags")), MCPServers: []store.MCPServer{}}
	if v := strings.TrimSpace(form.Get("provider_id")); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return in, &store.ValidationError{Field: "provider_id", Message: "choose a provider"}
		}
		in.ProviderID = &id
	}
	st := &in.Settings
	if st.Temperature, err = formFloat(form, "temperature"); err != nil {
		return in, err
	}
	if v := strings.TrimSpace(form.Get("max_tokens")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return in, &store.ValidationError{Field: "max_tokens", Message: fmt.Sprintf("must be a whole number, got %q", v)}
		}
		st.MaxTokens = &n
	}
	st.ReasoningEffort = form.Get("reasoning_effort")
	if v := form.Get("parallel_tool_calls"); v != "" {
		b := v == "true"
		st.ParallelToolCalls = &b
	}
	if in.MaxTurns, err = formInt(c, "max_turns"); err != nil {
		return in, err
	}
	if in.ToolTimeoutSeconds, err = formInt(c, "tool_timeout_seconds"); err != nil {
		return in, err
	}
	if u, hs := strings.TrimSpace(form.Get("http_url")), formHeaders(form, "http_"); u != "" || len(hs) > 0 {
		in.HTTP = &store.AgentHTTP{URL: u, Headers: hs}
	}
	for _, idx := range form["server_index"] {
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 {
			return in, badRequest("server_index %q is not a row number", idx)
		}
		field := func(name string) string { return form.Get(views.ServerField(i, name)) }
		s := store.MCPServer{Name: field("name"), URL: field("url"), Transport: store.MCPTransport(field("transport")),
			Command: field("command"), Headers: formHeaders(form, views.ServerField(i, "")),
			AllowedTools: strings.FieldsFunc(field("allowed_tools"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })}
		if v := strings.TrimSpace(field("concurrency")); v != "" {
			if s.Concurrency, err = strconv.Atoi(v); err != nil {
				return in, &store.ValidationError{Field: views.ServerField(i, "concurrency"), Message: fmt.Sprintf("must be a whole number, got %q", v)}
			}
		}
		if s.Name == "" && s.URL == "" && s.Command == "" && len(s.Headers) == 0 {
			continue // a row the user added and left
		}
		in.MCPServers = append(in.MCPServers, s)
	}
	return in, nil
}

func formFloat(form url.Values, field string) (*float64, error) {
	v := strings.TrimSpace(form.Get(field))
	if v == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, &store.ValidationError{Field: field, Message: fmt.Sprintf("must be a number, got %q", v)}
	}
	return &f, nil
}

func (h *Handler) createAgentPage(c echo.Context) error {
	in, err := agentForm(c)
	if err == nil {
		_, err = h.store.CreateAgent(withoutCancel(c), in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderAgents(c, status, views.AgentForm{Input: in, Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Agent created.", "/agents")
}

// extractAgentPage fills the manual form from pasted code ("Read code");
// what it cannot read shows under the code, and the form stays as it was.
func (h *Handler) extractAgentPage(c echo.Context) error {
	r, err := agentsrc.Extract(c.FormValue("code"))
	if err != nil {
		status, msg := statusOf(err)
		if status >= 500 {
			return err
		}
		c.Response().Header().Set("HX-Retarget", "#extract-error")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		return render(c, status, views.FormError(msg))
	}
	ps, err := h.store.Providers(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.AgentFormView(views.AgentForm{Input: r.Config, Notes: r.Notes, Providers: ps}))
}

// agentServerRow is an empty MCP server row, numbered after the rows the
// form has (their server_index values).
func (h *Handler) agentServerRow(c echo.Context) error {
	next := 0
	for _, v := range c.QueryParams()["server_index"] {
		if i, err := strconv.Atoi(v); err == nil && i >= next {
			next = i + 1
		}
	}
	return render(c, http.StatusOK, views.AgentServerRow(next, store.MCPServer{Transport: store.TransportStreamableHTTP}))
}

// headerPrefix is the header lists of the agent form: the endpoint's and each server's.
var headerPrefix = regexp.MustCompile(`^(http_|server_[0-9]{1,4}_)$`)

func (h *Handler) agentHeaderRow(c echo.Context) error {
	prefix := c.QueryParam("prefix")
	if !headerPrefix.MatchString(prefix) {
		return badRequest("prefix %q names no header list", prefix)
	}
	return render(c, http.StatusOK, views.PrefixedHeaderRow(prefix, store.Header{}))
}

func (h *Handler) editAgentPage(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	return h.renderAgentEdit(c, http.StatusOK, id, nil, "")
}

// renderAgentEdit shows the edit page with the agent as saved, or with in
// (the form as sent) and what was wrong with it.
func (h *Handler) renderAgentEdit(c echo.Context, status int, id int64, in *store.AgentInput, msg string) error {
	ctx := c.Request().Context()
	a, err := h.store.Agent(ctx, id)
	if err != nil {
		return err
	}
	form := views.AgentForm{ID: id, Input: a.AgentInput, Error: msg}
	if in != nil {
		form.Input = *in
	}
	if form.Providers, err = h.store.Providers(ctx); err != nil {
		return err
	}
	if form.Versions, err = h.store.AgentVersions(ctx, id); err != nil {
		return err
	}
	return render(c, status, views.AgentEditPage(form))
}

func (h *Handler) updateAgentPage(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	in, err := agentForm(c)
	if err == nil {
		_, err = h.store.UpdateAgent(withoutCancel(c), id, in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderAgentEdit(c, status, id, &in, msg)
		}
		return err
	}
	return redirectFlash(c, "Agent saved.", "/agents")
}

func (h *Handler) cloneAgentPage(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	a, err := h.store.CloneAgent(withoutCancel(c), id)
	if err != nil {
		return err
	}
	return redirectFlash(c, "Agent cloned as "+a.Name+".", fmt.Sprintf("/agents/%d/edit", a.ID))
}

func (h *Handler) deleteAgentPage(c echo.Context) error {
	id, err := pathID(c, "agent")
	if err != nil {
		return err
	}
	if err := h.store.DeleteAgent(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Agent deleted.", "/agents")
}

// testAgentPage is the Test servers button: each server's answer and tools.
func (h *Handler) testAgentPage(c echo.Context) error {
	res, err := h.testAgent(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.AgentTestResult(res.Servers))
}
