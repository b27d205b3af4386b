// Package egress decides which addresses Tribunal may connect to on a user's
// behalf (provider base URLs, alert webhooks), so that a URL typed into a
// form cannot reach the cloud metadata service, nor the local network unless
// the operator allows it (--allow-private-egress).
//
// Addresses are checked when each connection is made, on the address
// actually dialled, so a name that resolved to a public address when it was
// saved cannot be switched to a forbidden one afterwards (DNS rebinding).
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Kind is a kind of destination, as --allow-private-egress names it.
type Kind string

// The kinds of destination.
const (
	Providers Kind = "providers"
	// Webhooks are the webhook, Slack and Teams channels of alerts.
	Webhooks Kind = "webhooks"
)

// Kinds lists every kind.
var Kinds = []Kind{Providers, Webhooks}

// Policy says which kinds of destination may reach loopback and private
// addresses; link-local and cloud metadata addresses are refused to all.
// A nil *Policy is Default.
type Policy struct {
	private []Kind
}

// Default lets providers reach private addresses (a local Ollama or LM Studio
// is the common case) and nothing else.
var Default = &Policy{private: []Kind{Providers}}

// AllowPrivate returns a policy letting the given kinds reach loopback and
// private addresses.
func AllowPrivate(kinds ...Kind) *Policy {
	return &Policy{private: slices.Clone(kinds)}
}

// Parse reads a comma-separated list of kinds, or "none".
func Parse(s string) (*Policy, error) {
	p := &Policy{}
	for _, f := range strings.Split(s, ",") {
		k := Kind(strings.ToLower(strings.TrimSpace(f)))
		switch {
		case k == "none" || k == "":
		case slices.Contains(Kinds, k):
			if !slices.Contains(p.private, k) {
				p.private = append(p.private, k)
			}
		default:
			return nil, fmt.Errorf("egress: unknown destination kind %q: use %s, or none", f, strings.Join(kindNames(), ", "))
		}
	}
	return p, nil
}

func kindNames() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return out
}

// String is the policy as Parse reads it.
func (p *Policy) String() string {
	if p == nil {
		p = Default
	}
	if len(p.private) == 0 {
		return "none"
	}
	out := make([]string, len(p.private))
	for i, k := range p.private {
		out[i] = string(k)
	}
	return strings.Join(out, ",")
}

// Error is a destination the policy refuses.
type Error struct {
	Addr   netip.Addr
	reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s is %s", e.Addr, e.reason)
}

// ErrForbidden matches every *Error.
var ErrForbidden = errors.New("egress: forbidden destination")

// Is makes errors.Is(err, ErrForbidden) true.
func (e *Error) Is(target error) bool { return target == ErrForbidden }

var (
	// metadata are cloud metadata services outside the link-local range
	// (AWS over IPv6, Alibaba Cloud).
	metadata = []netip.Addr{netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}
	// private are ranges netip does not classify: "this network" (0/8),
	// carrier-grade NAT (100.64/10) and the deprecated IPv6 site-local (fec0::/10).
	private = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("fec0::/10")}
	// nat64 embeds an IPv4 address in its last 4 bytes (RFC 6052).
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

// Check returns an *Error when kind may not connect to addr.
func (p *Policy) Check(kind Kind, addr netip.Addr) error {
	if p == nil {
		p = Default
	}
	a := addr.Unmap().WithZone("")
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || slices.Contains(metadata, a):
		return &Error{Addr: addr, reason: "a link-local or cloud metadata address, which Tribunal never connects to"}
	case slices.Contains(p.private, kind):
		return nil
	case a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || slices.ContainsFunc(private, func(r netip.Prefix) bool { return r.Contains(a) }):
		return &Error{Addr: addr, reason: fmt.Sprintf(
			"a loopback or private address, which %s may reach only with --allow-private-egress=%s (now %s)", kind, kind, p)}
	}
	return nil
}

// lookupTimeout bounds the resolution of a name checked before use.
const lookupTimeout = 2 * time.Second

// CheckHost checks a host name or IP literal before use: the literal, or
// each address the name resolves to now. A name that does not resolve
// passes: it may be unreachable only for now, and each connection is
// checked anyway.
func (p *Policy) CheckHost(ctx context.Context, kind Kind, host string) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return p.Check(kind, a)
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := p.Check(kind, a); err != nil {
			return fmt.Errorf("%s resolves to %w", host, err)
		}
	}
	return nil
}

// CheckURL is CheckHost on a URL's host.
func (p *Policy) CheckURL(ctx context.Context, kind Kind, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	return p.CheckHost(ctx, kind, u.Hostname())
}

// DialContext connects like d would, refusing every address the policy
// forbids to kind as the connection is made. The proxy the environment sets
// (HTTPS_PROXY, HTTP_PROXY) is the operator's and always reached: it makes
// the onward connection, which Proxy checks.
func (p *Policy) DialContext(ctx context.Context, kind Kind, d net.Dialer, network, addr string) (net.Conn, error) {
	if !isProxy(addr) {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("egress: unexpected address %q: %w", address, err)
			}
			return p.Check(kind, ap.Addr())
		}
	}
	return d.DialContext(ctx, network, addr)
}

// Proxy is http.ProxyFromEnvironment that refuses, before it goes through
// the proxy, a request whose host the policy forbids to kind (by name, as
// the proxy will resolve it).
func (p *Policy) Proxy(kind Kind) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		u, err := http.ProxyFromEnvironment(req)
		if u == nil || err != nil {
			return u, err
		}
		if err := p.CheckHost(req.Context(), kind, req.URL.Hostname()); err != nil {
			return nil, err
		}
		return u, nil
	}
}

// isProxy reports whether addr is the environment's proxy, as the HTTP
// transport dials it (host:port, the port filled in).
func isProxy(addr string) bool {
	for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		if !strings.Contains(v, "://") {
			v = "http://" + v
		}
		u, err := url.Parse(v)
		if err != nil || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
		}
		if net.JoinHostPort(u.Hostname(), port) == addr {
			return true
		}
	}
	return false
}
