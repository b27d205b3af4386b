package metrics

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"tribunal/llm"
)

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&llm.Error{Kind: llm.KindRateLimit, StatusCode: 429}, "rate_limit"},
		{fmt.Errorf("judge j: %w", &llm.Error{Kind: llm.KindTimeout}), "timeout"},
		{fmt.Errorf("chat: %w", context.Canceled), "canceled"},
		{errors.New("something else"), "error"},
	} {
		if got := outcome(tc.err); got != tc.want {
			t.Errorf("outcome(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
