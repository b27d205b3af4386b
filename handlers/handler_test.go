package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestClientWentAway: a request whose client left is no server error and
// gets nothing written.
func TestClientWentAway(t *testing.T) {
	var logs bytes.Buffer
	h := &Handler{log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "/api/runs", nil)
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(req, rec)
	h.handleError(fmt.Errorf("store: list runs: %w", context.Canceled), c)
	if c.Response().Committed || rec.Body.Len() != 0 {
		t.Errorf("wrote %d %q to a client that went away", rec.Code, rec.Body)
	}
	if out := logs.String(); !strings.Contains(out, "client went away") || strings.Contains(out, "level=ERROR") {
		t.Errorf("logged %q", out)
	}
}
