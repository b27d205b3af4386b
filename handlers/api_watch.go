package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
)

// runKPIValues lists a finished run's KPI values for GET /api/runs/{id}.
func (h *Handler) runKPIValues(ctx context.Context, runID int64) ([]store.RunKPI, error) {
	return h.store.RunKPIValues(ctx, runID)
}

// bindMerge decodes a JSON body over cur: the fields the body names replace
// those of cur, the others keep their values (so PUT and PATCH may send
// only what changes). Unknown fields and wrong types are refused like bindJSON.
// It reports which fields the body named.
func bindMerge(c echo.Context, cur, dst any) (map[string]bool, error) {
	var body map[string]json.RawMessage
	if err := bindJSON(c, &body); err != nil {
		return nil, err
	}
	if body == nil {
		return nil, badRequest("the body must be a JSON object")
	}
	base, err := json.Marshal(cur)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(base, &merged); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	named := map[string]bool{}
	for k, v := range body {
		merged[k] = v
		named[k] = true
	}
	raw, _ := json.Marshal(merged)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return nil, badRequest("field %q: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return nil, badRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		case errors.Is(err, io.EOF):
			return nil, badRequest("the body is empty; send a JSON object")
		}
		return nil, badRequest("malformed JSON: %v", err)
	}
	return named, nil
}

// exclusive keeps one of two either-or fields: naming one in a PUT or
// PATCH (and not the other) drops the other.
func exclusive[A, B any](named map[string]bool, a string, pa *A, isSetA bool, b string, pb *B, isSetB bool) {
	var zeroA A
	var zeroB B
	switch {
	case named[a] && !named[b] && isSetA:
		*pb = zeroB
	case named[b] && !named[a] && isSetB:
		*pa = zeroA
	}
}
