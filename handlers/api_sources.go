package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/langfuse"
	"tribunal/runs"
	"tribunal/store"
)

// ---- trace sources ----

func (h *Handler) apiListSources(c echo.Context) error {
	list, err := h.store.Sources(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}

func (h *Handler) apiGetSource(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	src, err := h.store.Source(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, src)
}

func (h *Handler) apiCreateSource(c echo.Context) error {
	var in store.SourceInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	src, err := h.store.CreateSource(withoutCancel(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, src)
}

func (h *Handler) apiUpdateSource(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	var in store.SourceInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	src, err := h.store.UpdateSource(withoutCancel(c), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, src)
}

func (h *Handler) apiDeleteSource(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	if err := h.store.DeleteSource(withoutCancel(c), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// SourceTest is the outcome of a source's "Test": whether Langfuse took the keys.
type SourceTest struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"` // empty when OK
	LatencyMs int64  `json:"latency_ms"`
}

func (h *Handler) apiTestSource(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	res, err := h.testSource(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// sourceTestTimeout bounds a test: retries of a busy Langfuse included.
const sourceTestTimeout = 30 * time.Second

// testSource calls the source's Langfuse with its keys, through the
// engine's egress-checked client, as an import would.
func (h *Handler) testSource(c echo.Context, id int64) (*SourceTest, error) {
	src, err := h.store.SourceWithSecret(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), sourceTestTimeout)
	defer cancel()
	client := langfuse.New(src.BaseURL, src.PublicKey, src.SecretKey, h.engine.HTTPClient())
	client.Attempts = 2 // a test answers soon; an import retries longer
	start := time.Now()
	err = client.Test(ctx)
	res := &SourceTest{OK: err == nil, LatencyMs: time.Since(start).Milliseconds()}
	if err != nil {
		res.Error = err.Error() // refused keys say so (langfuse.ErrUnauthorized)
	}
	return res, nil
}

// apiImportSource imports a dataset run of a source as an IMPORTED run.
func (h *Handler) apiImportSource(c echo.Context) error {
	id, err := pathID(c, "source")
	if err != nil {
		return err
	}
	var in runs.SourceImport
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	out, err := h.runs.ImportSource(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if out.Rejudged {
		status = http.StatusOK
	}
	return c.JSON(status, out)
}
