package e2e

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/store/storetest"
)

// TestSignIn: with a token, a page sends the browser to sign in and the
// token brings it back there; signing out sends it to sign in again. No
// page breaks the Content-Security-Policy (jsErrors holds what it refused).
func TestSignIn(t *testing.T) {
	st := storetest.SQLite(t)
	eng := engine.New(engine.Config{}, st, engine.NewBroker(), nil)
	srv := httptest.NewServer(handlers.New(st, eng, slog.Default(), handlers.WithEdge(handlers.Edge{AuthToken: "browser-token"})))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	b := newBrowser(t, srv.URL)

	b.open("/runs/new")
	b.waitFor("the sign-in page", `location.pathname === "/login" && document.querySelector("[data-testid=login-token]")`, 15*time.Second)
	b.typeInto("[data-testid=login-token]", "not-the-token")
	b.click("[data-testid=login-submit]")
	b.waitFor("the refusal", `document.querySelector("[data-testid=login-error]")`, 15*time.Second)
	b.typeInto("[data-testid=login-token]", "browser-token")
	b.click("[data-testid=login-submit]")
	b.waitFor("the page first asked for", `location.pathname === "/runs/new" && document.querySelector("[data-testid=sign-out]")`, 15*time.Second)
	b.click("[data-testid=theme-toggle]")
	b.check("the theme toggle ran", `document.documentElement.getAttribute("data-theme")`, 2*time.Second)
	b.click("[data-testid=sign-out]")
	b.waitFor("the sign-in page again", `location.pathname === "/login"`, 15*time.Second)
	b.open("/runs")
	b.waitFor("signed out for good", `location.pathname === "/login"`, 15*time.Second)
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
