package mcpclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"tribunal/secret"
)

// defaultHTTPClient bounds connecting, not requests: an SSE stream lives as
// long as its session, and each tool call is bounded by ToolTimeout.
var defaultHTTPClient = &http.Client{
	Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		// Calls on one server run in parallel (Server.Concurrency); keep
		// their connections instead of redialling.
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	},
}

// implementation is how Tribunal introduces itself to servers.
var implementation = &mcp.Implementation{Name: "tribunal", Title: "Tribunal"}

// open connects to one server and lists the tools the agent may call on it.
func open(ctx context.Context, s Server, opts Options) (*session, error) {
	transport, err := transportFor(s, opts)
	if err != nil {
		return nil, err
	}
	connectCtx, cancelConnect := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancelConnect()
	// The session outlives ctx (an SSE stream is a request made with the
	// context given to Connect), but connecting must not outlive connectCtx.
	sessCtx, cancelSess := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(connectCtx, cancelSess)

	client := mcp.NewClient(implementation, &mcp.ClientOptions{
		// Tribunal offers servers nothing back (no roots, sampling or elicitation).
		Capabilities: &mcp.ClientCapabilities{},
	})
	cs, err := client.Connect(sessCtx, transport, nil)
	if err != nil {
		cancelSess()
		return nil, connectError("connect", err, connectCtx, opts.ConnectTimeout)
	}
	tools, err := listTools(connectCtx, cs, s)
	if err == nil && !stop() {
		err = connectCtx.Err()
	}
	if err != nil {
		cs.Close()
		cancelSess()
		return nil, connectError("list tools", err, connectCtx, opts.ConnectTimeout)
	}
	return &session{
		name:   s.Name,
		cs:     cs,
		cancel: cancelSess,
		slots:  make(chan struct{}, cmp.Or(max(s.Concurrency, 0), DefaultConcurrency)),
		tools:  tools,
	}, nil
}

// connectError says what went wrong in words a user can act on.
func connectError(step string, err error, connectCtx context.Context, timeout time.Duration) error {
	if errors.Is(connectCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s", step, timeout)
	}
	var notAllowed errNotOffered
	if errors.As(err, &notAllowed) {
		return err
	}
	// A network failure reads better without the SDK's layers around it
	// (calling "initialize": sending "initialize": rejected by transport: …).
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return fmt.Errorf("%s: %w", step, urlErr.Err)
	}
	return fmt.Errorf("%s: %w", step, err)
}

// errNotOffered names allowed tools the server does not have: a typo there
// would otherwise leave the agent silently without the tool.
type errNotOffered []string

func (e errNotOffered) Error() string {
	return fmt.Sprintf("allowed tools not offered by the server: %s", strings.Join(e, ", "))
}

// listTools lists a server's tools (all pages), keeps the allowed ones and
// sorts them by name.
func listTools(ctx context.Context, cs *mcp.ClientSession, s Server) ([]Tool, error) {
	var tools []Tool
	offered := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		offered[t.Name] = true
		if len(s.AllowedTools) > 0 && !slices.Contains(s.AllowedTools, t.Name) {
			continue
		}
		tool, err := toolOf(s.Name, t)
		if err != nil {
			return nil, err
		}
		tools = append(tools, tool)
	}
	var missing errNotOffered
	for _, name := range s.AllowedTools {
		if !offered[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, missing
	}
	slices.SortFunc(tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools, nil
}

// transportFor builds the transport a server's configuration asks for.
func transportFor(s Server, opts Options) (mcp.Transport, error) {
	switch cmp.Or(s.Transport, StreamableHTTP) {
	case StreamableHTTP:
		httpClient, err := serverHTTPClient(s, opts)
		if err != nil {
			return nil, err
		}
		return &mcp.StreamableClientTransport{
			Endpoint:   s.URL,
			HTTPClient: httpClient,
			// Tribunal only calls tools: it needs no messages the server
			// would send on its own, so it holds no stream open for them.
			DisableStandaloneSSE: true,
		}, nil
	case SSE:
		httpClient, err := serverHTTPClient(s, opts)
		if err != nil {
			return nil, err
		}
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: httpClient}, nil
	case Stdio:
		if !opts.AllowCommands {
			return nil, errors.New("stdio servers run a command on this machine and are refused unless Tribunal is started with --allow-mcp-commands")
		}
		argv, err := splitCommand(s.Command)
		if err != nil {
			return nil, err
		}
		// Not exec.CommandContext: the process lives as long as the session
		// and Close stops it.
		return &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil
	}
	return nil, fmt.Errorf("unknown transport %q: use %s, %s or %s", s.Transport, StreamableHTTP, SSE, Stdio)
}

// serverHTTPClient is opts.HTTPClient sending the server's headers.
func serverHTTPClient(s Server, opts Options) (*http.Client, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q is not an http(s) URL", s.URL)
	}
	if len(s.Headers) == 0 {
		return opts.HTTPClient, nil
	}
	c := *opts.HTTPClient
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &headerTransport{base: base, origin: s.URL, headers: slices.Clone(s.Headers)}
	return &c, nil
}

// headerTransport adds a server's headers to requests to its origin only,
// so a redirect or an SSE message endpoint elsewhere never gets its secrets.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	headers []Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if secret.SameOrigin(t.origin, req.URL.String()) {
		req = req.Clone(req.Context())
		for _, h := range t.headers {
			req.Header.Set(h.Key, h.Value)
		}
	}
	return t.base.RoundTrip(req)
}

// splitCommand splits a command line into argv as a POSIX shell would
// (blanks separate words; '…' is literal; "…" and a backslash escape), with
// no expansion of any kind: no shell ever runs.
func splitCommand(line string) ([]string, error) {
	var (
		argv    []string
		word    strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			// Inside "…" a backslash escapes only what the shell lets it.
			if quote == '"' && !strings.ContainsRune(`"\$`+"`", r) {
				word.WriteRune('\\')
			}
			word.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				argv = append(argv, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case quote != 0:
		return nil, fmt.Errorf("command %q has an unterminated %c quote", line, quote)
	case escaped:
		return nil, fmt.Errorf("command %q ends with a backslash", line)
	}
	if inWord {
		argv = append(argv, word.String())
	}
	if len(argv) == 0 {
		return nil, errors.New("stdio server has no command")
	}
	return argv, nil
}
