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
// the token. Requests without a token, and signed-in browsers' cookies,
// pass as before.
const (
	maxWrongTokens   = 10
	tokenGuessWindow = time.Minute
	// maxGuessers bounds the clients tracked at once; past it the ones
	// whose window has passed are forgotten, then the oldest.
	maxGuessers = 4096
)

// guessThrottle counts wrong tokens per client. A client is its connection's
// address, never a header it sends (X-Forwarded-For is the guesser's to
// write): an IPv4 address, or an IPv6 /64, which one host commonly holds
// whole. Behind a reverse proxy every client is the proxy, so a guesser
// there holds everybody's sign-in back for a minute, and no longer.
type guessThrottle struct {
	now func() time.Time

	mu      sync.Mutex
	clients map[string]*guesses
}

type guesses struct {
	wrong int
	since time.Time // the first wrong token of the window
}

func newGuessThrottle(now func() time.Time) *guessThrottle {
	return &guessThrottle{now: now, clients: map[string]*guesses{}}
}

// blocked reports whether r's client has used up its wrong tokens, and for
// how long more.
func (g *guessThrottle) blocked(r *http.Request) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.clients[clientOf(r)]
	if c == nil || c.wrong < maxWrongTokens {
		return 0, false
	}
	left := c.since.Add(tokenGuessWindow).Sub(g.now())
	return left, left > 0
}

// wrong counts a wrong token from r's client.
func (g *guessThrottle) wrong(r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now, key := g.now(), clientOf(r)
	c := g.clients[key]
	if c == nil || now.Sub(c.since) >= tokenGuessWindow {
		if c == nil && len(g.clients) >= maxGuessers {
			g.forget(now)
		}
		c = &guesses{since: now}
		g.clients[key] = c
	}
	c.wrong++
}

// forget drops the clients whose window has passed, or else the one whose
// window began first.
func (g *guessThrottle) forget(now time.Time) {
	var oldest string
	for key, c := range g.clients {
		if now.Sub(c.since) >= tokenGuessWindow {
			delete(g.clients, key)
		} else if oldest == "" || c.since.Before(g.clients[oldest].since) {
			oldest = key
		}
	}
	if len(g.clients) >= maxGuessers {
		delete(g.clients, oldest)
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
		return ip.Mask(net.CIDRMask(64, 128)).String()
	}
	return ip.String()
}

// retryAfter is the Retry-After header's value for a wait: whole seconds,
// rounded up.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}
