package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestGuessThrottle(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	g := newGuessThrottle(func() time.Time { return now })
	from := func(addr string) *http.Request {
		r := httptest.NewRequest("GET", "/api/runs", nil)
		r.RemoteAddr = addr
		r.Header.Set("X-Forwarded-For", fmt.Sprint(now.UnixNano())) // a guesser's to write: ignored
		return r
	}
	guesser, other := "203.0.113.7:4100", "203.0.113.8:4100"

	for i := range maxWrongTokens {
		if _, blocked := g.blocked(from(guesser)); blocked {
			t.Fatalf("blocked after %d wrong tokens", i)
		}
		g.wrong(from(guesser))
		now = now.Add(time.Second)
	}
	left, blocked := g.blocked(from("203.0.113.7:9999")) // another port, the same client
	if !blocked || left != tokenGuessWindow-maxWrongTokens*time.Second {
		t.Fatalf("after %d wrong tokens: blocked %v for %v", maxWrongTokens, blocked, left)
	}
	if _, blocked := g.blocked(from(other)); blocked {
		t.Error("another client is blocked too")
	}
	if got := retryAfter(left); got != "50" {
		t.Errorf("Retry-After %q, want 50", got)
	}

	// The window began with the first wrong token; when it has passed, the
	// client starts afresh.
	now = now.Add(left)
	if _, blocked := g.blocked(from(guesser)); blocked {
		t.Error("still blocked once the window has passed")
	}
	g.wrong(from(guesser))
	if _, blocked := g.blocked(from(guesser)); blocked {
		t.Error("one wrong token in a new window blocks")
	}

	// An IPv6 client is its /48: hopping between its /64s does not reset
	// the count.
	for i := range maxWrongTokens {
		g.wrong(from(fmt.Sprintf("[2001:db8:1:%x::1]:443", i+1)))
	}
	if _, blocked := g.blocked(from("[2001:db8:1:ffff::1]:443")); !blocked {
		t.Error("a /48 hopping /64s is not blocked")
	}
	if _, blocked := g.blocked(from("[2001:db8:2::1]:443")); blocked {
		t.Error("the next /48 is blocked too")
	}
}

// TestGuessThrottleForgets: the clients counted stay bounded without
// forgetting one in its window (a guesser with enough addresses would go on
// for ever): while the table is full a new client waits, and clients whose
// window has passed are forgotten.
func TestGuessThrottleForgets(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	g := newGuessThrottle(func() time.Time { return now })
	from := func(i int) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255)
		return r
	}
	for range maxWrongTokens - 1 {
		g.wrong(from(0))
	}
	now = now.Add(time.Second)
	for i := 1; i < maxGuessers+10; i++ {
		g.wrong(from(i))
	}
	if len(g.clients) != maxGuessers {
		t.Fatalf("%d clients counted, want %d", len(g.clients), maxGuessers)
	}
	g.wrong(from(0))
	if _, blocked := g.blocked(from(0)); !blocked {
		t.Error("the first client's tenth wrong token was not counted while the table was full")
	}
	left, blocked := g.blocked(from(maxGuessers + 20))
	if !blocked || left != tokenGuessWindow-time.Second {
		t.Errorf("a new client while the table is full: blocked %v for %v, want until the oldest window passes", blocked, left)
	}
	now = now.Add(left)
	if _, blocked := g.blocked(from(maxGuessers + 20)); blocked {
		t.Error("a new client is still refused once the oldest window has passed")
	}
	if len(g.clients) != maxGuessers-1 {
		t.Errorf("%d clients counted once the oldest window has passed, want %d", len(g.clients), maxGuessers-1)
	}
	now = now.Add(time.Second)
	g.wrong(from(maxGuessers + 20))
	if len(g.clients) != 1 || len(g.started) != 1 {
		t.Errorf("%d clients and %d windows once every other window has passed, want 1", len(g.clients), len(g.started))
	}
}
