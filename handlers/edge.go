package handlers

import (
	"context"
	"errors"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/importer"
)

// Edge is how the server meets the network: the names it answers to and
// the token that guards it. The zero value answers to loopback names only,
// on any port, without a token (tests, the CLI's exports).
type Edge struct {
	// ListenAddr is the address the server listens on (host:port). Its host,
	// and on 0.0.0.0 or :: the machine's interface addresses, are allowed with its port.
	ListenAddr string
	// AllowedHosts are more names the server answers to: "name" on any port, or "name:port".
	AllowedHosts []string
	// AuthToken, when set, is required of every request but health checks, assets and sign-in.
	AuthToken string
}

// hostGuard knows the names this server answers to. A page whose name
// resolves here but is not one of them (DNS rebinding) gets 421 before any
// handler runs, and an Origin must be one of them too (see sameOrigin).
type hostGuard struct {
	// ports maps a lower-case host (IPv6 without brackets) to the port it
	// must come with; "" means any port.
	ports map[string]string
}

func newHostGuard(edge Edge) hostGuard {
	g := hostGuard{ports: map[string]string{}}
	host, port, err := net.SplitHostPort(edge.ListenAddr)
	if err != nil || port == "0" {
		host, port = "", ""
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		g.ports[name] = port
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		// Listening everywhere: the machine's own addresses reach it as well.
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				g.ports[n.IP.String()] = port
			}
		}
	} else {
		g.ports[strings.ToLower(host)] = port
	}
	for _, name := range edge.AllowedHosts {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		h, p, err := net.SplitHostPort(name)
		if err != nil {
			h, p = strings.Trim(name, "[]"), ""
		}
		g.ports[strings.ToLower(h)] = p
	}
	return g
}

// allows reports whether hostport (a Host header or an Origin's host) names this server.
func (g hostGuard) allows(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), ""
	}
	want, ok := g.ports[strings.TrimSuffix(strings.ToLower(host), ".")]
	return ok && (port == "" || want == "" || port == want)
}

// checkHost answers 421 to a Host the server does not go by. Health checks
// are exempt: probes address pods and containers by whatever name they
// have, and the answers say nothing.
func (h *Handler) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || h.hosts.allows(r.Host) {
			return next(c)
		}
		return echo.NewHTTPError(http.StatusMisdirectedRequest, "Tribunal does not answer to the host name "+r.Host+
			"; add it to --allowed-hosts (TRIBUNAL_ALLOWED_HOSTS)")
	}
}

// ready is GET /readyz: 200 while the database answers, 503 while it does
// not, so a load balancer stops sending traffic here meanwhile.
func (h *Handler) ready(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		h.log.WarnContext(ctx, "not ready", "err", err)
		return c.String(http.StatusServiceUnavailable, "database unavailable")
	}
	return c.String(http.StatusOK, "ok")
}

// contentSecurityPolicy allows what the pages use and no more: scripts,
// styles, images and connections from this site only, no framing, no
// plugins, forms posting here. No inline script, handler or style
// attribute runs, and nothing is eval'd: the pages' behaviour is in
// assets/app.js, their looks in assets/app.css, so markup a model or a user
// managed to slip past the escaping still could not act.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders go on every response, errors included.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hd := c.Response().Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

const (
	// maxBodyBytes bounds JSON and form bodies.
	maxBodyBytes = 2 << 20
	// maxImportBytes bounds an import: one task file and its form fields.
	maxImportBytes = importer.MaxFileSize + 1<<20
)

// bodyLimit is the largest body the route takes.
func bodyLimit(c echo.Context) int64 {
	switch c.Path() {
	case "/import", "/import/preview", "/api/import":
		return maxImportBytes
	}
	return maxBodyBytes
}

// limitBody answers 413 to a body larger than its route takes (see statusOf).
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body == nil || r.Body == http.NoBody {
			return next(c)
		}
		limit := bodyLimit(c)
		if r.ContentLength > limit {
			return &http.MaxBytesError{Limit: limit}
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
		// Echo's FormValue drops parse errors, so an oversized form sent
		// without a length would reach the handler empty; parse it here.
		var err error
		switch ct, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType)); ct {
		case echo.MIMEApplicationForm:
			err = r.ParseForm()
		case echo.MIMEMultipartForm:
			err = r.ParseMultipartForm(32 << 20) // echo's own memory limit
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return next(c)
	}
}
