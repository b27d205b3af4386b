package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"tribunal/mcpclient"

	"gorm.io/gorm"

	"tribunal/egress"
	"tribunal/secret"
)

// AgentExecutor says who runs an agent's loop.
type AgentExecutor string

// The executors: Tribunal's own tool loop on a provider's model, or the
// user's own deployed agent behind an HTTP endpoint.
const (
	ExecutorTools AgentExecutor = "tools"
	ExecutorHTTP  AgentExecutor = "http"
)

// AgentExecutors lists the executors, the default first.
var AgentExecutors = []AgentExecutor{ExecutorTools, ExecutorHTTP}

// MCPTransport is how Tribunal talks to an MCP server.
type MCPTransport string

// The MCP transports; stdio starts a local command, so it needs
// --allow-mcp-commands.
const (
	TransportStreamableHTTP MCPTransport = mcpclient.StreamableHTTP
	TransportSSE            MCPTransport = mcpclient.SSE
	TransportStdio          MCPTransport = mcpclient.Stdio
)

// MCPTransports lists the transports, the default first.
var MCPTransports = []MCPTransport{TransportStreamableHTTP, TransportSSE, TransportStdio}

// Limits and defaults of an agent config.
const (
	DefaultMaxTurns          = 10
	DefaultToolTimeout       = int(mcpclient.DefaultToolTimeout / time.Second)
	DefaultMCPConcurrency    = mcpclient.DefaultConcurrency
	maxAgentTurns            = 50
	maxToolTimeoutSeconds    = 600
	maxMCPConcurrency        = 64
	maxAgentSystemPromptSize = 100_000
)

// AgentSettings are the generation settings of an agent's model calls.
type AgentSettings struct {
	Temperature       *float64 `json:"temperature,omitempty"`
	MaxTokens         *int64   `json:"max_tokens,omitempty"`
	ReasoningEffort   string   `json:"reasoning_effort,omitempty"`
	ParallelToolCalls *bool    `json:"parallel_tool_calls,omitempty"`
}

// MCPServer is one MCP server an agent's tools come from.
type MCPServer struct {
	Name      string       `json:"name"`
	URL       string       `json:"url,omitempty"`
	Transport MCPTransport `json:"transport"`
	// Command starts a stdio server (only with --allow-mcp-commands).
	Command string   `json:"command,omitempty"`
	Headers []Header `json:"headers"`
	// AllowedTools limits the tools the model sees; empty allows all.
	AllowedTools []string `json:"allowed_tools"`
	// Concurrency is how many calls the server takes at once, across processes.
	Concurrency int `json:"concurrency"`
}

// AgentHTTP is the endpoint of the http executor: Tribunal POSTs each
// question to URL with Headers.
type AgentHTTP struct {
	URL     string   `json:"url"`
	Headers []Header `json:"headers"`
}

// AgentInput is an agent config as a user sends it (POST and PUT
// /api/agents, and what POST /api/agents/extract answers). A secret header
// sent back masked (or empty) keeps its stored value while its server keeps
// its name and origin.
type AgentInput struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Executor    AgentExecutor `json:"executor"`
	// ProviderID and Model are the tools executor's model.
	ProviderID         *int64        `json:"provider_id"`
	Model              string        `json:"model"`
	SystemPrompt       string        `json:"system_prompt"`
	Settings           AgentSettings `json:"settings" gorm:"serializer:json"`
	MaxTurns           int           `json:"max_turns"`
	ToolTimeoutSeconds int           `json:"tool_timeout_seconds"`
	MCPServers         []MCPServer   `json:"mcp_servers" gorm:"column:mcp_servers;serializer:json"`
	// HTTP is the http executor's endpoint; absent for the tools executor.
	HTTP *AgentHTTP `json:"http,omitempty" gorm:"column:http;serializer:json"`
	Tags TagList    `json:"tags"`
}

// Agent is a saved agent config at its latest version, secrets masked.
type Agent struct {
	ID int64 `json:"id"`
	AgentInput
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AgentVersion is one frozen version of an agent config, secrets masked.
type AgentVersion struct {
	AgentID   int64      `json:"agent_id"`
	Version   int        `json:"version"`
	Config    AgentInput `json:"config" gorm:"serializer:json"`
	CreatedAt time.Time  `json:"created_at"`
}

// TableName maps AgentVersion to agent_versions.
func (AgentVersion) TableName() string { return "agent_versions" }

// Normalize fills defaults and checks every field but the provider's
// existence; allowCommands says whether stdio servers may be saved.
func (in *AgentInput) Normalize(allowCommands bool) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Model = strings.TrimSpace(in.Model)
	in.Executor = cmp.Or(AgentExecutor(strings.TrimSpace(string(in.Executor))), ExecutorTools)
	if in.MaxTurns == 0 {
		in.MaxTurns = DefaultMaxTurns
	}
	if in.ToolTimeoutSeconds == 0 {
		in.ToolTimeoutSeconds = DefaultToolTimeout
	}
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case len(in.Description) > 10_000:
		return invalid("description", "is longer than 10,000 characters")
	case !slices.Contains(AgentExecutors, in.Executor):
		return invalid("executor", "must be tools or http")
	case len(in.SystemPrompt) > maxAgentSystemPromptSize:
		return invalid("system_prompt", "is longer than 100,000 characters")
	case in.MaxTurns < 1 || in.MaxTurns > maxAgentTurns:
		return invalid("max_turns", "must be between 1 and %d", maxAgentTurns)
	case in.ToolTimeoutSeconds < 1 || in.ToolTimeoutSeconds > maxToolTimeoutSeconds:
		return invalid("tool_timeout_seconds", "must be between 1 and %d", maxToolTimeoutSeconds)
	}
	st := in.Settings
	if err := (TargetSettings{Temperature: st.Temperature, MaxTokens: st.MaxTokens, ReasoningEffort: st.ReasoningEffort}).Validate("settings"); err != nil {
		return err
	}
	switch in.Executor {
	case ExecutorTools:
		switch {
		case in.ProviderID == nil || *in.ProviderID <= 0:
			return invalid("provider_id", "is required for the tools executor (the model that runs the tool loop)")
		case in.Model == "":
			return invalid("model", "is required for the tools executor")
		case in.HTTP != nil && in.HTTP.URL != "":
			return invalid("http", "is for the http executor; set executor to http or leave http out")
		}
		in.HTTP = nil
	case ExecutorHTTP:
		if in.HTTP == nil || strings.TrimSpace(in.HTTP.URL) == "" {
			return invalid("http.url", "is required for the http executor")
		}
		if len(in.MCPServers) > 0 {
			return invalid("mcp_servers", "are for the tools executor: the http executor calls your agent, which brings its own tools")
		}
		in.HTTP.URL = strings.TrimSpace(in.HTTP.URL)
		if err := checkCallURL("http.url", in.HTTP.URL); err != nil {
			return err
		}
		in.HTTP.Headers = nonNil(in.HTTP.Headers)
		if err := normalizeHeaders("http.headers", in.HTTP.Headers); err != nil {
			return err
		}
	}
	in.MCPServers = nonNil(in.MCPServers)
	names := map[string]bool{}
	for i := range in.MCPServers {
		if err := in.MCPServers[i].normalize(fmt.Sprintf("mcp_servers[%d]", i), allowCommands); err != nil {
			return err
		}
		if names[in.MCPServers[i].Name] {
			return invalid(fmt.Sprintf("mcp_servers[%d].name", i), "%q appears twice", in.MCPServers[i].Name)
		}
		names[in.MCPServers[i].Name] = true
	}
	tags, err := NormTags("tags", in.Tags)
	if err != nil {
		return err
	}
	in.Tags = tags
	return nil
}

func (m *MCPServer) normalize(field string, allowCommands bool) error {
	m.Name = strings.TrimSpace(m.Name)
	m.URL = strings.TrimSpace(m.URL)
	m.Command = strings.TrimSpace(m.Command)
	m.Transport = cmp.Or(MCPTransport(strings.TrimSpace(string(m.Transport))), TransportStreamableHTTP)
	if m.Concurrency == 0 {
		m.Concurrency = DefaultMCPConcurrency
	}
	switch {
	case m.Name == "":
		return invalid(field+".name", "is required")
	case len(m.Name) > 255:
		return invalid(field+".name", "is longer than 255 characters")
	case !slices.Contains(MCPTransports, m.Transport):
		return invalid(field+".transport", "must be streamable_http, sse or stdio")
	case m.Concurrency < 1 || m.Concurrency > maxMCPConcurrency:
		return invalid(field+".concurrency", "must be between 1 and %d", maxMCPConcurrency)
	}
	if m.Transport == TransportStdio {
		switch {
		case !allowCommands:
			return invalid(field+".transport", "stdio MCP servers need --allow-mcp-commands")
		case m.Command == "":
			return invalid(field+".command", "is required for a stdio server")
		case m.URL != "":
			return invalid(field+".url", "is for streamable_http and sse servers; a stdio server runs its command")
		case len(m.Headers) > 0:
			return invalid(field+".headers", "are for streamable_http and sse servers; a stdio server runs its command")
		}
	} else {
		if m.Command != "" {
			return invalid(field+".command", "is for stdio servers; this one is reached at its url")
		}
		if m.URL == "" {
			return invalid(field+".url", "is required, e.g. https://mcp.example.com/mcp")
		}
		if err := checkCallURL(field+".url", m.URL); err != nil {
			return err
		}
	}
	m.Headers = nonNil(m.Headers)
	if err := normalizeHeaders(field+".headers", m.Headers); err != nil {
		return err
	}
	tools := []string{}
	for _, t := range m.AllowedTools {
		t = strings.TrimSpace(t)
		if t != "" && !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	m.AllowedTools = tools
	return nil
}

// detach copies the lists in shares with its caller, so sealing the copy's
// secrets leaves the caller's values as they were.
func (in *AgentInput) detach() {
	in.MCPServers = slices.Clone(in.MCPServers)
	for i := range in.MCPServers {
		in.MCPServers[i].Headers = slices.Clone(in.MCPServers[i].Headers)
		in.MCPServers[i].AllowedTools = slices.Clone(in.MCPServers[i].AllowedTools)
	}
	if in.HTTP != nil {
		h := *in.HTTP
		h.Headers = slices.Clone(h.Headers)
		in.HTTP = &h
	}
	in.Tags = slices.Clone(in.Tags)
}

// checkCallURL checks a URL Tribunal will call and bind secrets to.
func checkCallURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(field, "must be an http:// or https:// URL")
	}
	if u.User != nil {
		return invalid(field, "must not hold credentials (user:password@): send them in a header marked secret, e.g. Authorization")
	}
	return nil
}

// agentRow is the agents table.
type agentRow Agent

func (agentRow) TableName() string { return "agents" }

// prepareAgent checks in against the store: its provider exists, its URLs
// may be reached, and its secrets are sealed (old holds the sealed config
// being edited, nil for a new agent).
func (s *Store) prepareAgent(ctx context.Context, in *AgentInput, old *AgentInput) error {
	in.detach()
	if err := in.Normalize(s.allowMCPCommands); err != nil {
		return err
	}
	if in.ProviderID != nil {
		var n int64
		if err := s.conn(ctx).Model(&Provider{}).Where("id = ?", *in.ProviderID).Count(&n).Error; err != nil {
			return fmt.Errorf("store: agent provider: %w", err)
		}
		if n == 0 {
			return invalid("provider_id", "no provider with id %d", *in.ProviderID)
		}
	}
	if in.HTTP != nil {
		if err := s.checkEgress(ctx, egress.Providers, "http.url", in.HTTP.URL); err != nil {
			return err
		}
		var oldHS []Header
		b := secret.Binding{Name: "agent's URL", New: in.HTTP.URL}
		if old != nil && old.HTTP != nil {
			oldHS, b.Old = old.HTTP.Headers, old.HTTP.URL
		}
		hs, err := s.sealHeaders("http.headers", in.HTTP.Headers, oldHS, b)
		if err != nil {
			return err
		}
		in.HTTP.Headers = hs
	}
	for i := range in.MCPServers {
		m := &in.MCPServers[i]
		field := fmt.Sprintf("mcp_servers[%d]", i)
		if m.URL != "" {
			if err := s.checkEgress(ctx, egress.Providers, field+".url", m.URL); err != nil {
				return err
			}
		}
		// A secret stays with the server of the same name, at the same origin.
		var oldHS []Header
		b := secret.Binding{Name: "URL of MCP server " + strconv.Quote(m.Name), New: m.URL}
		if old != nil {
			if j := slices.IndexFunc(old.MCPServers, func(o MCPServer) bool { return o.Name == m.Name }); j >= 0 {
				oldHS, b.Old = old.MCPServers[j].Headers, old.MCPServers[j].URL
			}
		}
		hs, err := s.sealHeaders(field+".headers", m.Headers, oldHS, b)
		if err != nil {
			return err
		}
		m.Headers = hs
	}
	return nil
}

// maskAgentSecrets masks every secret header value of a config.
func (s *Store) maskAgentSecrets(in *AgentInput) error {
	owner := "agent " + strconv.Quote(in.Name)
	if in.HTTP != nil {
		if err := s.maskHeaders(owner, in.HTTP.Headers); err != nil {
			return err
		}
	}
	for i := range in.MCPServers {
		if err := s.maskHeaders(owner+" server "+strconv.Quote(in.MCPServers[i].Name), in.MCPServers[i].Headers); err != nil {
			return err
		}
	}
	return nil
}

// Agents lists every agent by name, secrets masked.
func (s *Store) Agents(ctx context.Context) ([]Agent, error) {
	var rows []agentRow
	if err := s.conn(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	out := make([]Agent, len(rows))
	for i := range rows {
		out[i] = Agent(rows[i])
		if err := s.maskAgentSecrets(&out[i].AgentInput); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Agent returns one agent at its latest version, secrets masked.
func (s *Store) Agent(ctx context.Context, id int64) (*Agent, error) {
	a, err := s.agent(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if err := s.maskAgentSecrets(&a.AgentInput); err != nil {
		return nil, err
	}
	return a, nil
}

// agent reads the row with its sealed secrets; lock orders concurrent edits.
func (s *Store) agent(ctx context.Context, id int64, lock bool) (*Agent, error) {
	q := s.conn(ctx)
	if lock {
		q = q.Clauses(lockForUpdate(s.dialect)...)
	}
	var r agentRow
	if err := q.Take(&r, id).Error; err != nil {
		return nil, fmt.Errorf("store: agent: %w", notFound(err, "agent", id))
	}
	a := Agent(r)
	return &a, nil
}

// AgentWithSecrets returns one agent with its secret header values in
// clear, for calling its servers. Never send the result to a user.
func (s *Store) AgentWithSecrets(ctx context.Context, id int64) (*Agent, error) {
	a, err := s.agent(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if err := s.OpenAgentSecrets(&a.AgentInput); err != nil {
		return nil, err
	}
	return a, nil
}

// OpenAgentSecrets opens the sealed secret header values of a config (an
// agent's, or the one a run froze) in place, for calling its servers.
func (s *Store) OpenAgentSecrets(in *AgentInput) error {
	in.detach()
	owner := "agent " + strconv.Quote(in.Name)
	if in.HTTP != nil {
		if err := s.openHeaders(owner, in.HTTP.Headers); err != nil {
			return err
		}
	}
	for i := range in.MCPServers {
		if err := s.openHeaders(owner+" server "+strconv.Quote(in.MCPServers[i].Name), in.MCPServers[i].Headers); err != nil {
			return err
		}
	}
	return nil
}

// ClientServer is the server as package mcpclient dials it (its secrets as
// they are: open them first, AgentWithSecrets).
func (m MCPServer) ClientServer() mcpclient.Server {
	hs := make([]mcpclient.Header, len(m.Headers))
	for i, h := range m.Headers {
		hs[i] = mcpclient.Header{Key: h.Key, Value: h.Value}
	}
	return mcpclient.Server{Name: m.Name, URL: m.URL, Transport: string(m.Transport), Command: m.Command,
		Headers: hs, AllowedTools: m.AllowedTools, Concurrency: m.Concurrency}
}

// AgentVersions lists an agent's versions, newest first, secrets masked.
func (s *Store) AgentVersions(ctx context.Context, id int64) ([]AgentVersion, error) {
	if _, err := s.agent(ctx, id, false); err != nil {
		return nil, err
	}
	var vs []AgentVersion
	if err := s.conn(ctx).Where("agent_id = ?", id).Order("version DESC").Find(&vs).Error; err != nil {
		return nil, fmt.Errorf("store: agent versions: %w", err)
	}
	for i := range vs {
		if err := s.maskAgentSecrets(&vs[i].Config); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

func agentConflict(err error, name string) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return conflict("an agent named %q already exists", name)
	}
	return err
}

// CreateAgent saves a new agent as its version 1, secrets sealed.
func (s *Store) CreateAgent(ctx context.Context, in AgentInput) (*Agent, error) {
	if err := s.prepareAgent(ctx, &in, nil); err != nil {
		return nil, err
	}
	id, err := s.insertAgent(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.Agent(ctx, id)
}

// insertAgent writes a prepared (sealed) config as a new agent.
func (s *Store) insertAgent(ctx context.Context, in AgentInput) (int64, error) {
	now := s.now()
	row := agentRow{AgentInput: in, Version: 1, CreatedAt: now, UpdatedAt: now}
	err := s.Transact(ctx, func(tx *Store) error {
		if err := tx.conn(ctx).Create(&row).Error; err != nil {
			return agentConflict(err, in.Name)
		}
		return tx.conn(ctx).Create(&AgentVersion{AgentID: row.ID, Version: 1, Config: in, CreatedAt: now}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("store: create agent: %w", err)
	}
	return row.ID, nil
}

// UpdateAgent saves the input as the agent's next version (runs keep the
// version they used); an input equal to the latest version changes nothing.
func (s *Store) UpdateAgent(ctx context.Context, id int64, in AgentInput) (*Agent, error) {
	err := s.Transact(ctx, func(tx *Store) error {
		old, err := tx.agent(ctx, id, true)
		if err != nil {
			return err
		}
		if err := tx.prepareAgent(ctx, &in, &old.AgentInput); err != nil {
			return err
		}
		// Secrets kept are the same sealed text, so an unchanged form compares equal.
		if mustJSON(in) == mustJSON(old.AgentInput) {
			return nil
		}
		now := s.now()
		row := agentRow{ID: id, AgentInput: in, Version: old.Version + 1, CreatedAt: old.CreatedAt, UpdatedAt: now}
		if err := tx.conn(ctx).Select("*").Save(&row).Error; err != nil {
			return agentConflict(err, in.Name)
		}
		return tx.conn(ctx).Create(&AgentVersion{AgentID: id, Version: row.Version, Config: in, CreatedAt: now}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("store: update agent: %w", err)
	}
	return s.Agent(ctx, id)
}

// CloneAgent copies an agent, secrets included (they stay sealed and go to
// the same servers), as a new agent named after it: "name (copy)".
func (s *Store) CloneAgent(ctx context.Context, id int64) (*Agent, error) {
	a, err := s.agent(ctx, id, false)
	if err != nil {
		return nil, err
	}
	in := a.AgentInput
	for n := 1; ; n++ {
		in.Name = a.Name + " (copy)"
		if n > 1 {
			in.Name = fmt.Sprintf("%s (copy %d)", a.Name, n)
		}
		var taken int64
		if err := s.conn(ctx).Model(&agentRow{}).Where("name = ?", in.Name).Count(&taken).Error; err != nil {
			return nil, fmt.Errorf("store: clone agent: %w", err)
		}
		if taken == 0 {
			break
		}
	}
	newID, err := s.insertAgent(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.Agent(ctx, newID)
}

// DeleteAgent removes an agent and its versions.
func (s *Store) DeleteAgent(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&agentRow{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete agent: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return &NotFoundError{What: "agent", ID: id}
	}
	return nil
}
