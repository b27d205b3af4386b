// Package handlers serves Tribunal's HTML pages (templ + HTMX) and its JSON
// API. Handlers parse input, call a use case (package runs) or the store,
// and render; they compute no figures of their own.
package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"tribunal/agentsrc"
	"tribunal/engine"
	"tribunal/llm"
	"tribunal/metrics"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
	"tribunal/watch"
)

// Handler holds what every handler needs.
type Handler struct {
	store     *store.Store
	engine    *engine.Engine
	log       *slog.Logger
	runs      *runs.Service
	hosts     hostGuard
	authToken string
	// session is the session cookie's value for authToken (sessionValue).
	session string
	// guesses holds back clients that keep sending a wrong token.
	guesses *guessThrottle
	metrics *metrics.Metrics
	// openAPI is the API's description, built once from the route table.
	openAPI func() map[string]any
	// imports keeps previewed task files until they are imported.
	imports *importPreviews
}

// Option configures New.
type Option func(*Handler)

// WithEdge sets the host names the server answers to and its auth token.
func WithEdge(edge Edge) Option {
	return func(h *Handler) {
		h.hosts = newHostGuard(edge)
		h.authToken = edge.AuthToken
	}
}

// WithMetrics serves m at /metrics, so what the engine counts into it shows.
func WithMetrics(m *metrics.Metrics) Option {
	return func(h *Handler) { h.metrics = m }
}

// New wires the handlers and registers their routes on a new Echo.
func New(st *store.Store, eng *engine.Engine, logger *slog.Logger, opts ...Option) *echo.Echo {
	h := &Handler{store: st, engine: eng, log: logger, hosts: newHostGuard(Edge{}), runs: runs.New(st, eng),
		imports: newImportPreviews(time.Now), guesses: newGuessThrottle(time.Now)}
	for _, opt := range opts {
		opt(h)
	}
	if h.authToken != "" {
		h.session = sessionValue(st.Box(), h.authToken)
	}
	if h.metrics == nil {
		h.metrics = metrics.New(st, logger)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = h.handleError
	h.routes(e)
	h.openAPI = sync.OnceValue(func() map[string]any { return openAPI(h.apiRoutes()) })
	return e
}

// render writes a templ component with a status code.
func render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

func isAPI(c echo.Context) bool { return strings.HasPrefix(c.Request().URL.Path, "/api/") }

func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// badRequest is a 400 whose message is safe to show.
func badRequest(format string, args ...any) error {
	return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(format, args...))
}

// statusOf maps an error to its HTTP status and the message a user may see.
func statusOf(err error) (int, string) {
	var he *echo.HTTPError
	var ve *store.ValidationError
	var le *llm.Error
	var nf *store.NotFoundError
	var ce *store.ConflictError
	var mbe *http.MaxBytesError
	var ip *importProblems
	var ap *agentsrc.Problem
	var se *runs.SourceError
	switch {
	case errors.As(err, &he):
		return he.Code, fmt.Sprint(he.Message)
	case errors.Is(err, watch.ErrBadToken):
		return http.StatusUnauthorized, "send the schedule's token in the " + scheduleTokenHeader + " header"
	case errors.As(err, &ve):
		return http.StatusUnprocessableEntity, ve.Error()
	case errors.As(err, &nf):
		return http.StatusNotFound, nf.Error()
	case errors.As(err, &ce):
		return http.StatusConflict, ce.Error()
	case errors.Is(err, store.ErrConflict): // a conflict of its own type, e.g. store.AlreadyImportedError
		return http.StatusConflict, err.Error()
	case errors.As(err, &le):
		return http.StatusBadGateway, "provider: " + le.Error()
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than this route's limit of %d MB", mbe.Limit>>20)
	case errors.As(err, &ip):
		return http.StatusUnprocessableEntity, ip.Error()
	case errors.As(err, &ap):
		return http.StatusUnprocessableEntity, ap.Error()
	case errors.As(err, &se):
		return http.StatusBadGateway, se.Error()
	}
	return http.StatusInternalServerError, "internal error"
}

// handleError is the one place errors become responses: JSON {"error"} for
// the API, an error page or an HTMX fragment for the UI. 5xx are logged once.
// A client that went away gets nothing written and is no server error.
func (h *Handler) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if ctx := c.Request().Context(); errors.Is(ctx.Err(), context.Canceled) {
		h.log.DebugContext(ctx, "client went away", "method", c.Request().Method, "path", c.Request().URL.Path,
			"status", 499, "err", err)
		return
	}
	err = pageNotFound(err, c)
	status, msg := statusOf(err)
	if status >= 500 {
		h.log.ErrorContext(c.Request().Context(), "request failed", "method", c.Request().Method,
			"path", c.Request().URL.Path, "status", status, "err", err)
	}
	if isAPI(c) {
		if c.Request().Method == http.MethodHead {
			c.NoContent(status)
			return
		}
		var ip *importProblems
		if errors.As(err, &ip) {
			c.JSON(status, ip.reply()) // {"error", "errors": [every bad row]}
			return
		}
		c.JSON(status, ErrorJSON{Error: msg})
		return
	}
	if isHTMX(c) {
		// Let HTMX swap the message into the page's error box.
		c.Response().Header().Set("HX-Retarget", "#flash")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		render(c, status, views.FlashError(msg))
		return
	}
	render(c, status, views.ErrorPage(status, msg))
}

// pageNotFound turns Echo's 405 for a GET or HEAD of a page path that
// exists for POST only (/judges/styles matches POST /judges/:judge) into the
// 404 a guessed address deserves: to a person, no page is there. The JSON API
// keeps 405 with its Allow header, which tells a program the right method.
func pageNotFound(err error, c echo.Context) error {
	m := c.Request().Method
	if !errors.Is(err, echo.ErrMethodNotAllowed) || isAPI(c) || (m != http.MethodGet && m != http.MethodHead) {
		return err
	}
	c.Response().Header().Del(echo.HeaderAllow)
	return echo.NewHTTPError(http.StatusNotFound, "no page at "+c.Request().URL.Path)
}

// bindJSON decodes a JSON body strictly: JSON only, known fields only, one
// value, within the body limit (see limitBody).
func bindJSON(c echo.Context, dst any) error {
	ct, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if ct != echo.MIMEApplicationJSON {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "the body must be JSON (Content-Type: application/json)")
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return err
		case errors.Is(err, io.EOF):
			return badRequest("the body is empty; send a JSON object")
		case errors.As(err, &se):
			return badRequest("malformed JSON at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			return badRequest("field %q: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return badRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return badRequest("malformed JSON: %v", err)
	}
	if dec.More() {
		return badRequest("the body holds more than one JSON value")
	}
	if f := store.NULField(dst); f != "" {
		return &store.ValidationError{Field: f, Message: store.NULMessage}
	}
	return nil
}

// refuseNUL answers 422, naming the parameter, for a query or form value
// holding a NUL byte: PostgreSQL text cannot hold one, and SQLite must
// answer the same. Multipart forms are checked where they are read
// (readUpload), under that handler's size limit.
func refuseNUL(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		values := r.URL.Query()
		if ct, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType)); ct == echo.MIMEApplicationForm {
			if err := r.ParseForm(); err != nil {
				return badRequest("unreadable form: %v", err)
			}
			values = r.Form // the query and the body
		}
		if err := nulParam(values); err != nil {
			return err
		}
		return next(c)
	}
}

// nulParam names the first parameter whose name or value holds a NUL byte.
func nulParam(values url.Values) error {
	if f := store.NULField(map[string][]string(values)); f != "" {
		name, _, _ := strings.Cut(f, "[")
		return &store.ValidationError{Field: name, Message: store.NULMessage}
	}
	return nil
}

// oneOf lists a vocabulary for an error message: "A, B, C".
func oneOf[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// pathID reads a numeric path parameter.
func pathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("no such %s: %q", name, c.Param(name)))
	}
	return id, nil
}

// queryInt reads an optional positive integer query parameter.
func queryInt(c echo.Context, name string) (int, error) {
	v := c.QueryParam(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest("query parameter %s must be a positive integer, got %q", name, v)
	}
	return n, nil
}

// sameOrigin refuses state-changing requests sent by another site: a browser
// always sends Origin (or Sec-Fetch-Site) on them, while scripts and CLIs send
// neither. The Origin must be a name the server answers to (see hostGuard),
// not merely the request's own Host, which a rebound name would match.
func (h *Handler) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
			u, err := url.Parse(origin)
			if err != nil || !h.hosts.allows(u.Host) {
				return echo.NewHTTPError(http.StatusForbidden, "cross-origin request refused (Origin "+origin+")")
			}
			return next(c)
		}
		if origin := r.Header.Get("Origin"); origin == "null" || r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			return echo.NewHTTPError(http.StatusForbidden, "cross-site request refused")
		}
		return next(c)
	}
}

// withoutCancel keeps work going when a client disconnects mid-write.
func withoutCancel(c echo.Context) context.Context {
	return context.WithoutCancel(c.Request().Context())
}
