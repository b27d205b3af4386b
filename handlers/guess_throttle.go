package handlers

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A client that keeps sending a wrong server token is guessing it. After
// maxWrongTokens wrong tokens within tokenGuessWindow, a client's requests
// that carry a token (the sign-in form, a Bearer header) get 429 until the
// window that began with its first wrong token has passed, whether their
// token is right or not: a right one must not tell a guesser it has found
// the token. Requests without a token, and signed-in browsers' cookies
// (which cannot be made for a guessed token: see sessionValue), pass.
const (
	maxWrongTokens   = 10
	tokenGuessWindow = time.Minute
	// maxGuessers bounds the clients counted at once. While that many are
	// in their window, a client not counted yet gets 429 too: forgetting a
	// counted one instead would let a guesser with enough addresses go on
	// for ever.
	maxGuessers = 4096
)

// guessThrottle counts wrong tokens per client. A client is its connection's
// address, never a header it sends (X-Forwarded-For is the guesser's to
// write): an IPv4 address, or an IPv6 /48, a site's usual share (one host
// may hold a whole /64, and a site a /48 of them). Behind a reverse proxy
// every client is the proxy: a guesser there holds every token-bearing
// request back, the API's scripts' too, for as long as it goes on, while
// signed-in browsers go on.
type guessThrottle struct {
	now func() time.Time

	mu      sync.Mutex
	clients map[string]*guesses
	// started lists the clients' windows in the order they began, so the
	// ones that have passed are forgotten from its front, in O(1) each.
	started []window
}

type guesses struct {
	wrong int
	since time.Time // when the window began: the first wrong token
}

type window struct {
	client string
	since  time.Time
}

func newGuessThrottle(now func() time.Time) *guessThrottle {
	return &guessThrottle{now: now, clients: map[string]*guesses{}}
}

// blocked reports whether r's client has used up its wrong tokens, or is
// not counted while maxGuessers others are, and for how long more.
func (g *guessThrottle) blocked(r *http.Request) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.forget(now)
	switch c := g.clients[clientOf(r)]; {
	case c == nil && len(g.clients) >= maxGuessers:
		return g.started[0].since.Add(tokenGuessWindow).Sub(now), true
	case c != nil && c.wrong >= maxWrongTokens:
		return c.since.Add(tokenGuessWindow).Sub(now), true
	}
	return 0, false
}

// wrong counts a wrong token from r's client.
func (g *guessThrottle) wrong(r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now, key := g.now(), clientOf(r)
	g.forget(now)
	c := g.clients[key]
	if c == nil {
		if len(g.clients) >= maxGuessers {
			return // blocked said so; this one slipped in beside another
		}
		c = &guesses{since: now}
		g.clients[key] = c
		g.started = append(g.started, window{key, now})
	}
	c.wrong++
}

// forget drops the clients whose window has passed. A client's window is
// listed once: it gets a new one only after this has dropped the old.
func (g *guessThrottle) forget(now time.Time) {
	for len(g.started) > 0 && now.Sub(g.started[0].since) >= tokenGuessWindow {
		delete(g.clients, g.started[0].client)
		g.started = g.started[1:]
	}
}

// clientOf is the client a request's connection comes from.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(48, 128)).String()
	}
	return ip.String()
}

// retryAfter is the Retry-After header's value for a wait: whole seconds,
// rounded up.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}
