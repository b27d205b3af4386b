// Package agentsrc reads an agent config out of OpenAI Agents SDK Python
// source, as text: it never runs the code. It understands the literals a
// config is written with (strings in every quoting, implicit
// concatenation, f-strings without placeholders, numbers, True/False/None,
// lists, tuples and dicts), keyword arguments in any order, nested calls,
// comments, and simple names assigned earlier in the file
// (instructions=INSTRUCTIONS). Anything else is skipped, or named in the
// error when the config needs it.
package agentsrc

import (
	"fmt"
	"strings"

	"tribunal/secret"
	"tribunal/store"
)

// Result is the config found and what was left out of it.
type Result struct {
	// Config is shaped like the body of POST /api/agents, unsaved; its
	// provider is not chosen.
	Config store.AgentInput
	// Notes say what the code holds that the config does not (tools that
	// are not MCP servers, other agents).
	Notes []string
}

// Problem says what could not be read; it is worded for the user.
type Problem struct{ Message string }

func (e *Problem) Error() string { return e.Message }

func problem(format string, args ...any) error {
	return &Problem{Message: fmt.Sprintf(format, args...)}
}

// Extract reads the first Agent(...) call in src.
func Extract(src string) (*Result, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, problem("%v", err)
	}
	p := &parser{toks: toks}
	vars := map[string]value{}
	var agent value
	calls := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokName {
			continue
		}
		lineStart := i == 0 || toks[i-1].kind == tokNewline
		switch {
		case lineStart && isOpTok(toks[i+1], "="):
			p.pos = i + 2
			vars[t.text] = p.expr(0, false)
		case lineStart && isOpTok(toks[i+1], ":"):
			// An annotated assignment: NAME: type = value.
			p.pos = i + 2
			p.expr(0, false)
			if p.isOp("=") {
				p.next()
				vars[t.text] = p.expr(0, false)
			}
		case t.text == "Agent" && (isOpTok(toks[i+1], "(") || isOpTok(toks[i+1], "[")) && (i == 0 || !isKeyword(toks[i-1])):
			// The first call is read; later ones (handoffs, other agents)
			// are only counted, which keeps nested calls linear.
			if calls == 0 {
				p.pos = i
				if agent = p.primary(0); agent.kind != valCall {
					continue
				}
			}
			calls++
		}
	}
	if calls == 0 {
		return nil, problem("no Agent(...) call found")
	}
	r := &Result{}
	if calls > 1 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d Agent(...) calls found; this is the first", calls))
	}
	x := &reader{vars: vars, res: r}
	if err := x.agent(agent); err != nil {
		return nil, err
	}
	return r, nil
}

func isOpTok(t token, s string) bool { return t.kind == tokOp && t.text == s }

func isKeyword(t token) bool { return t.kind == tokName && (t.text == "def" || t.text == "class") }

// reader turns parsed values into the config.
type reader struct {
	vars map[string]value
	res  *Result
}

// resolve follows a name to the value assigned to it, a few steps at most
// (a = b; b = "x"), so a cycle ends.
func (x *reader) resolve(v value) value {
	for range 10 {
		if v.kind != valName {
			return v
		}
		w, ok := x.vars[v.str]
		if !ok {
			return v
		}
		v = w
	}
	return value{kind: valOpaque, line: v.line}
}

// str reads a string field; absent is "".
func (x *reader) str(field string, v value, present bool) (string, error) {
	if !present {
		return "", nil
	}
	v = x.resolve(v)
	switch {
	case v.kind == valString:
		return v.str, nil
	case v.fstring:
		return "", problem("%s: not a string literal (an f-string with placeholders, line %d)", field, v.line)
	case v.kind == valName:
		return "", problem("%s: not a string literal (%s is not assigned a string in this code, line %d)", field, v.str, v.line)
	}
	return "", problem("%s: not a string literal (line %d)", field, v.line)
}

// callName is the last part of a dotted callee: agents.Agent → Agent.
func callName(v value) string {
	return v.str[strings.LastIndex(v.str, ".")+1:]
}

func (x *reader) agent(a value) error {
	cfg := &x.res.Config
	cfg.Executor = store.ExecutorTools
	cfg.MaxTurns, cfg.ToolTimeoutSeconds = store.DefaultMaxTurns, store.DefaultToolTimeout
	cfg.MCPServers = []store.MCPServer{}
	cfg.Tags = store.TagList{}
	kw := func(name string) (value, bool) { v, ok := a.kwargs[name]; return v, ok }
	var err error
	if v, ok := kw("name"); ok {
		if cfg.Name, err = x.str("name", v, ok); err != nil {
			return err
		}
	} else if len(a.items) > 0 { // Agent("name", …)
		if cfg.Name, err = x.str("name", a.items[0], true); err != nil {
			return err
		}
	}
	v, ok := kw("instructions")
	if cfg.SystemPrompt, err = x.str("instructions", v, ok); err != nil {
		return err
	}
	v, ok = kw("handoff_description")
	if cfg.Description, err = x.str("handoff_description", v, ok); err != nil {
		return err
	}
	if v, ok := kw("model"); ok {
		if err := x.model(v); err != nil {
			return err
		}
	}
	if v, ok := kw("model_settings"); ok {
		if err := x.settings(v); err != nil {
			return err
		}
	}
	if v, ok := kw("tools"); ok {
		if err := x.tools(v); err != nil {
			return err
		}
	}
	if v, ok := kw("mcp_servers"); ok {
		if err := x.mcpServers(v); err != nil {
			return err
		}
	}
	if _, ok := kw("handoffs"); ok {
		x.note("handoffs are not part of an agent config; benchmark each agent on its own")
	}
	return nil
}

func (x *reader) note(format string, args ...any) {
	x.res.Notes = append(x.res.Notes, fmt.Sprintf(format, args...))
}

// model reads model="…" or a model object such as
// OpenAIChatCompletionsModel(model="…", openai_client=…).
func (x *reader) model(v value) error {
	v = x.resolve(v)
	if v.kind == valCall {
		m, ok := v.kwargs["model"]
		if !ok && len(v.items) > 0 {
			m, ok = v.items[0], true
		}
		if !ok {
			return problem("model: not a string literal (%s(...) gives one only when the code runs, line %d)", v.str, v.line)
		}
		v = m
	}
	s, err := x.str("model", v, true)
	x.res.Config.Model = s
	return err
}

// settings reads ModelSettings(temperature=…, max_tokens=…,
// parallel_tool_calls=…, reasoning=Reasoning(effort=…)).
func (x *reader) settings(v value) error {
	v = x.resolve(v)
	if v.kind == valNone {
		return nil
	}
	if v.kind != valCall || callName(v) != "ModelSettings" {
		return problem("model_settings: not a ModelSettings(...) call (line %d)", v.line)
	}
	st := &x.res.Config.Settings
	if t, ok := v.kwargs["temperature"]; ok {
		t = x.resolve(t)
		if t.kind != valNumber {
			return problem("model_settings.temperature: not a number (line %d)", t.line)
		}
		st.Temperature = &t.num
	}
	if t, ok := v.kwargs["max_tokens"]; ok {
		t = x.resolve(t)
		if t.kind != valNumber || !t.isInt {
			return problem("model_settings.max_tokens: not a whole number (line %d)", t.line)
		}
		n := int64(t.num)
		st.MaxTokens = &n
	}
	if t, ok := v.kwargs["parallel_tool_calls"]; ok {
		t = x.resolve(t)
		if t.kind != valBool {
			return problem("model_settings.parallel_tool_calls: not True or False (line %d)", t.line)
		}
		st.ParallelToolCalls = &t.boolean
	}
	if r, ok := v.kwargs["reasoning"]; ok {
		r = x.resolve(r)
		var effort value
		switch {
		case r.kind == valCall:
			effort, ok = r.kwargs["effort"]
		case r.kind == valDict:
			effort, ok = dictGet(r, "effort")
		default:
			ok = false
		}
		if ok {
			e, err := x.str("model_settings.reasoning.effort", effort, true)
			if err != nil {
				return err
			}
			st.ReasoningEffort = e
		}
	}
	return nil
}

// dictGet returns the value under a string key of a dict.
func dictGet(d value, key string) (value, bool) {
	for i, k := range d.keys {
		if k.kind == valString && k.str == key {
			return d.items[i], true
		}
	}
	return value{}, false
}

// list reads a list (or tuple), resolving a name.
func (x *reader) list(field string, v value) ([]value, error) {
	v = x.resolve(v)
	if v.kind != valList {
		return nil, problem("%s: not a list (line %d)", field, v.line)
	}
	return v.items, nil
}

// tools reads tools=[…]: each HostedMCPTool becomes an MCP server; other
// tools (functions, web search…) are noted.
func (x *reader) tools(v value) error {
	items, err := x.list("tools", v)
	if err != nil {
		return err
	}
	var other []string
	for i, t := range items {
		t = x.resolve(t)
		if t.kind != valCall || callName(t) != "HostedMCPTool" {
			other = append(other, describe(t))
			continue
		}
		field := fmt.Sprintf("tools[%d]", i)
		cfgVal, ok := t.kwargs["tool_config"]
		if !ok && len(t.items) > 0 {
			cfgVal, ok = t.items[0], true
		}
		if !ok {
			return problem("%s: HostedMCPTool(...) has no tool_config (line %d)", field, t.line)
		}
		srv, err := x.hostedMCP(field+".tool_config", x.resolve(cfgVal))
		if err != nil {
			return err
		}
		x.res.Config.MCPServers = append(x.res.Config.MCPServers, srv)
	}
	if len(other) > 0 {
		x.note("tools that are not MCP servers are left out: %s", strings.Join(other, ", "))
	}
	return nil
}

// describe names a tool for a note: its call or its name.
func describe(v value) string {
	switch v.kind {
	case valCall, valName:
		if v.str != "" {
			return v.str
		}
	}
	return fmt.Sprintf("the tool on line %d", v.line)
}

// hostedMCP reads a HostedMCPTool's tool_config dict.
func (x *reader) hostedMCP(field string, d value) (store.MCPServer, error) {
	srv := store.MCPServer{Transport: store.TransportStreamableHTTP, Concurrency: store.DefaultMCPConcurrency,
		Headers: []store.Header{}, AllowedTools: []string{}}
	if d.kind != valDict {
		return srv, problem("%s: not a dict literal (line %d)", field, d.line)
	}
	if t, ok := dictGet(d, "type"); ok {
		if s, err := x.str(field+`["type"]`, t, true); err != nil || s != "mcp" {
			return srv, problem(`%s["type"]: must be "mcp" (line %d)`, field, t.line)
		}
	}
	get := func(key string) (string, error) {
		v, ok := dictGet(d, key)
		return x.str(fmt.Sprintf("%s[%q]", field, key), v, ok)
	}
	var err error
	if srv.Name, err = get("server_label"); err != nil {
		return srv, err
	}
	if srv.URL, err = get("server_url"); err != nil {
		return srv, err
	}
	if srv.URL == "" {
		if _, ok := dictGet(d, "connector_id"); ok {
			return srv, problem("%s: a connector (connector_id) has no server_url Tribunal could call (line %d)", field, d.line)
		}
		return srv, problem(`%s["server_url"]: missing (line %d)`, field, d.line)
	}
	if h, ok := dictGet(d, "headers"); ok {
		if srv.Headers, err = x.headers(field+`["headers"]`, h); err != nil {
			return srv, err
		}
	}
	if a, ok := dictGet(d, "allowed_tools"); ok {
		if srv.AllowedTools, err = x.allowedTools(field+`["allowed_tools"]`, a); err != nil {
			return srv, err
		}
	}
	return srv, nil
}

// headers reads a dict of header names to values; credentials are secret.
func (x *reader) headers(field string, v value) ([]store.Header, error) {
	v = x.resolve(v)
	if v.kind == valNone {
		return []store.Header{}, nil
	}
	if v.kind != valDict {
		return nil, problem("%s: not a dict literal (line %d)", field, v.line)
	}
	hs := []store.Header{}
	for i, k := range v.keys {
		key, err := x.str(field+" key", k, true)
		if err != nil {
			return nil, err
		}
		val, err := x.str(fmt.Sprintf("%s[%q]", field, key), v.items[i], true)
		if err != nil {
			return nil, err
		}
		hs = append(hs, store.Header{Key: key, Value: val, IsSecret: secret.CredentialHeader(key)})
	}
	return hs, nil
}

// allowedTools reads ["a", "b"] or {"tool_names": ["a", "b"]}.
func (x *reader) allowedTools(field string, v value) ([]string, error) {
	v = x.resolve(v)
	if v.kind == valDict {
		names, ok := dictGet(v, "tool_names")
		if !ok {
			return nil, problem(`%s: a dict without "tool_names" (line %d)`, field, v.line)
		}
		field, v = field+`["tool_names"]`, names
	}
	items, err := x.list(field, v)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for i, it := range items {
		s, err := x.str(fmt.Sprintf("%s[%d]", field, i), it, true)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// mcpServers reads mcp_servers=[MCPServerStreamableHttp(name=…,
// params={"url": …, "headers": {…}}), MCPServerSse(…), MCPServerStdio(…)].
func (x *reader) mcpServers(v value) error {
	items, err := x.list("mcp_servers", v)
	if err != nil {
		return err
	}
	for i, s := range items {
		field := fmt.Sprintf("mcp_servers[%d]", i)
		s = x.resolve(s)
		if s.kind != valCall {
			return problem("%s: not an MCPServer…(...) call, or a name assigned one in this code (line %d)", field, s.line)
		}
		srv := store.MCPServer{Concurrency: store.DefaultMCPConcurrency, Headers: []store.Header{}, AllowedTools: []string{}}
		switch callName(s) {
		case "MCPServerStreamableHttp":
			srv.Transport = store.TransportStreamableHTTP
		case "MCPServerSse":
			srv.Transport = store.TransportSSE
		case "MCPServerStdio":
			srv.Transport = store.TransportStdio
		default:
			return problem("%s: %s(...) is not an MCP server class Tribunal knows (MCPServerStreamableHttp, MCPServerSse, MCPServerStdio) (line %d)", field, s.str, s.line)
		}
		n, ok := s.kwargs["name"]
		if srv.Name, err = x.str(field+".name", n, ok); err != nil {
			return err
		}
		params, ok := s.kwargs["params"]
		if !ok {
			return problem("%s: no params (line %d)", field, s.line)
		}
		params = x.resolve(params)
		if params.kind != valDict {
			return problem("%s.params: not a dict literal (line %d)", field, params.line)
		}
		get := func(key string) (string, error) {
			v, ok := dictGet(params, key)
			return x.str(fmt.Sprintf("%s.params[%q]", field, key), v, ok)
		}
		if srv.Transport == store.TransportStdio {
			if srv.Command, err = get("command"); err != nil {
				return err
			}
			if a, ok := dictGet(params, "args"); ok {
				args, err := x.allowedTools(field+`.params["args"]`, a)
				if err != nil {
					return err
				}
				srv.Command = strings.TrimSpace(srv.Command + " " + strings.Join(args, " "))
			}
		} else {
			if srv.URL, err = get("url"); err != nil {
				return err
			}
			if h, ok := dictGet(params, "headers"); ok {
				if srv.Headers, err = x.headers(field+`.params["headers"]`, h); err != nil {
					return err
				}
			}
		}
		if srv.Name == "" {
			srv.Name = fmt.Sprintf("server %d", i+1)
		}
		x.res.Config.MCPServers = append(x.res.Config.MCPServers, srv)
	}
	return nil
}
