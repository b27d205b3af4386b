package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// Trajectory checks are saved with their own values; a missing or unusable
// value is refused at save, naming the check, and never borrows the task's
// reference.
func TestTaskTrajectoryChecks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		want := []store.Check{
			{Type: "tool_called", Value: "search"},
			{Type: "tool_args", Value: `{"tool":"search","args":{"q":"paris"}}`},
			{Type: "tool_sequence", Value: "search, fetch"},
			{Type: "max_tool_calls", Value: "4"},
		}
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "agent-1", Category: "agents", Question: "Capital of France?",
			Reference: "Paris", Checks: want})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Task(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Checks, want) {
			t.Errorf("checks = %+v, want %+v", got.Checks, want)
		}

		for _, tc := range []struct {
			name  string
			check store.Check
			want  string
		}{
			{"no value despite a reference", store.Check{Type: "tool_not_called"}, "tool_not_called: the value must name a tool"},
			{"args not JSON", store.Check{Type: "tool_args", Value: "search(q=paris)"}, `must be a JSON object {"tool": name, "args": {...}}`},
			{"fractional limit", store.Check{Type: "max_tool_calls", Value: "2.5"}, `"2.5" is not a whole number`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "bad", Category: "agents", Question: "q", Reference: "search",
					Checks: []store.Check{{Type: "exact_match"}, tc.check}})
				var ve *store.ValidationError
				if !errors.As(err, &ve) || ve.Field != "checks[1]" || !strings.Contains(ve.Message, tc.want) {
					t.Fatalf("CreateTask error = %v, want checks[1] containing %q", err, tc.want)
				}
			})
		}
	})
}
