package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/secret"
	"tribunal/views"
)

// With --auth-token, scripts send the token as a Bearer header and browsers
// sign in once and then carry a session cookie.

const (
	sessionCookie = "tribunal_session"
	sessionMaxAge = 30 * 24 * time.Hour
)

// sessionValue is what the session cookie holds: a MAC of the token under
// the master key, so every process behind one token and master key accepts
// it, the token itself never sits in a cookie, changing the token signs
// everybody out, and nobody can make the cookie of a guessed token to try
// it (the guesses the throttle counts are the form's and Bearer headers').
func sessionValue(box *secret.Box, token string) string {
	return hex.EncodeToString(box.MAC("tribunal-session\x00" + token))
}

// equalSecret compares in constant time; hashing first hides the length too.
func equalSecret(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// signedIn reports whether the request carries the token or the session
// cookie, and whether it sent a token (a Bearer header) to be checked.
func (h *Handler) signedIn(r *http.Request) (ok, sentToken bool) {
	if scheme, tok, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return equalSecret(strings.TrimSpace(tok), h.authToken), true
	}
	ck, err := r.Cookie(sessionCookie)
	return err == nil && equalSecret(ck.Value, h.session), false
}

// tooManyGuesses is the 429 a client gets once it has sent maxWrongTokens
// wrong tokens (see guessThrottle).
func tooManyGuesses(c echo.Context, left time.Duration) error {
	c.Response().Header().Set("Retry-After", retryAfter(left))
	return echo.NewHTTPError(http.StatusTooManyRequests, "too many wrong tokens: try again in "+retryAfter(left)+" s")
}

// openPath is a route anyone may reach: health checks, assets, signing in and out.
func openPath(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/login", "/logout", "/assets/*":
		return true
	}
	return false
}

// scheduleWebhook is the one API route that has its own credential: a
// WEBHOOK schedule's token (X-Tribunal-Token), checked by the handler.
func scheduleWebhook(c echo.Context) bool {
	return c.Request().Method == http.MethodPost && c.Path() == "/api/schedules/:schedule/trigger"
}

// requireAuth lets signed-in requests through when a token is set. Others
// get 401 from the API and /metrics, and the sign-in page elsewhere.
func (h *Handler) requireAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.authToken == "" {
			return next(c)
		}
		r := c.Request()
		signedIn, sentToken := h.signedIn(r)
		if sentToken {
			if left, blocked := h.guesses.blocked(r); blocked {
				return tooManyGuesses(c, left)
			}
			if !signedIn {
				h.guesses.wrong(r)
			}
		}
		session := views.SignedOut
		if signedIn {
			session = views.SignedIn
		}
		c.SetRequest(r.WithContext(views.WithSession(r.Context(), session)))
		if signedIn || openPath(c.Path()) || scheduleWebhook(c) {
			return next(c)
		}
		if isAPI(c) || r.URL.Path == "/metrics" {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="tribunal"`)
			return echo.NewHTTPError(http.StatusUnauthorized, "sign in: send Authorization: Bearer <token> (the server's --auth-token)")
		}
		login := "/login"
		if r.Method == http.MethodGet && !isHTMX(c) {
			login += "?next=" + url.QueryEscape(r.URL.RequestURI())
		}
		if isHTMX(c) {
			// A fragment request cannot show a page; HTMX navigates instead.
			c.Response().Header().Set("HX-Redirect", login)
			return c.NoContent(http.StatusUnauthorized)
		}
		return c.Redirect(http.StatusSeeOther, login)
	}
}

// localPath keeps a redirect on this site: a path, never //host, a URL, or
// something a browser would turn into one (backslashes, control characters).
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || u.Scheme != "" || u.Host != "" ||
		strings.ContainsFunc(next, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }) {
		return "/runs"
	}
	return next
}

// showLogin is GET /login: the sign-in form, or straight on when there is
// nothing to sign in to or the browser already is.
func (h *Handler) showLogin(c echo.Context) error {
	next := localPath(c.QueryParam("next"))
	if signedIn, _ := h.signedIn(c.Request()); h.authToken == "" || signedIn {
		return c.Redirect(http.StatusSeeOther, next)
	}
	return render(c, http.StatusOK, views.LoginPage(next, ""))
}

// login is POST /login: the right token sets the session cookie.
func (h *Handler) login(c echo.Context) error {
	next := localPath(c.FormValue("next"))
	if h.authToken == "" {
		return c.Redirect(http.StatusSeeOther, next)
	}
	r := c.Request()
	if left, blocked := h.guesses.blocked(r); blocked {
		c.Response().Header().Set("Retry-After", retryAfter(left))
		return render(c, http.StatusTooManyRequests, views.LoginPage(next, "Too many wrong tokens: try again in "+retryAfter(left)+" seconds."))
	}
	if !equalSecret(c.FormValue("token"), h.authToken) {
		h.guesses.wrong(r)
		return render(c, http.StatusUnauthorized, views.LoginPage(next, "That is not the server's token."))
	}
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: h.session, Path: "/",
		MaxAge: int(sessionMaxAge.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: c.Scheme() == "https"})
	return c.Redirect(http.StatusSeeOther, next)
}

// logout is /logout: it clears the session cookie.
func (h *Handler) logout(c echo.Context) error {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Scheme() == "https"})
	return c.Redirect(http.StatusSeeOther, "/login")
}
