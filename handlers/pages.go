package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

// redirect sends the browser on after a successful form post: HTMX follows
// HX-Redirect, a plain form follows 303 See Other.
func redirect(c echo.Context, to string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// flashCookie carries a success message across the redirect that follows a
// create, update or delete; the next full page shows it once (takeFlash).
const flashCookie = "tribunal_flash"

// redirectFlash redirects like redirect and has the page it lands on say msg.
func redirectFlash(c echo.Context, msg, to string) error {
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: "/", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return redirect(c, to)
}

// takeFlash hands a waiting success message to the full page being shown
// (views.Layout draws it in #flash) and clears it, so it shows once.
// Fragments, the API and assets leave it for the page.
func takeFlash(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodGet || isHTMX(c) || isAPI(c) || strings.HasPrefix(r.URL.Path, "/assets/") {
			return next(c)
		}
		ck, err := r.Cookie(flashCookie)
		if err != nil {
			return next(c)
		}
		c.SetCookie(&http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		if msg, err := url.QueryUnescape(ck.Value); err == nil && msg != "" {
			c.SetRequest(r.WithContext(views.WithFlash(r.Context(), msg)))
		}
		return next(c)
	}
}

// formProblem returns the status and message for re-showing a form, or
// ok=false when err is not the user's to fix. A server the form's settings
// point at that failed (502) is theirs to fix too.
func formProblem(err error) (status int, msg string, ok bool) {
	status, msg = statusOf(err)
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusConflict, http.StatusBadGateway:
		return status, msg, true
	}
	return 0, "", false
}

func formInt(c echo.Context, field string) (int, error) {
	v := strings.TrimSpace(c.FormValue(field))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &store.ValidationError{Field: field, Message: fmt.Sprintf("must be a whole number, got %q", v)}
	}
	return n, nil
}

// plural counts a noun: "1 model", "3 models".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
