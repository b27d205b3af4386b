package checks_test

import (
	"errors"
	"strings"
	"testing"

	"tribunal/checks"
	"tribunal/trajectory"
)

// agentCalls is a trajectory: search twice (Paris, then a page), fetch,
// summarize, with one call whose arguments are not JSON.
var agentCalls = trajectory.Calls{
	{Turn: 1, Name: "search", Arguments: `{"q": "paris", "limit": 5, "filters": {"lang": "fr", "safe": true}}`},
	{Turn: 2, Name: "fetch", Arguments: `{"url": "https://example.org/paris", "headers": ["a", "b"]}`},
	{Turn: 2, Name: "search", Arguments: `{"q": "lyon", "page": 2}`},
	{Turn: 3, Name: "summarize", Arguments: `not json`},
}

// toolCase is one trajectory check run on calls.
type toolCase struct {
	name   string
	typ    string
	calls  trajectory.Calls
	ref    string
	want   float64
	detail string // substring of the detail
}

func toolTable(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The text must not matter to a trajectory check.
			got, err := checks.Run(tc.typ, checks.Answer{Text: tc.ref, ToolCalls: tc.calls}, tc.ref)
			if err != nil {
				t.Fatalf("Run(%q, %q) error: %v", tc.typ, tc.ref, err)
			}
			if got.Score != tc.want {
				t.Errorf("Run(%q, %q) score = %v, want %v (detail %q)", tc.typ, tc.ref, got.Score, tc.want, got.Detail)
			}
			if !strings.Contains(got.Detail, tc.detail) {
				t.Errorf("detail = %q, want it to contain %q", got.Detail, tc.detail)
			}
		})
	}
}

func TestToolCalled(t *testing.T) {
	toolTable(t, []toolCase{
		{"called twice", checks.ToolCalled, agentCalls, "search", 1, "called search 2×"},
		{"name is trimmed", checks.ToolCalled, agentCalls, "  fetch \n", 1, "called fetch 1×"},
		{"never called", checks.ToolCalled, agentCalls, "delete", 0, "never called delete (called search, fetch, summarize)"},
		{"case matters", checks.ToolCalled, agentCalls, "Search", 0, "never called Search"},
		{"all of a list", checks.ToolCalled, agentCalls, `["search", "fetch"]`, 1, "called search 2×, fetch 1×"},
		{"one of a list missing", checks.ToolCalled, agentCalls, "search, delete, drop", 0, "never called delete, drop"},
		{"model target", checks.ToolCalled, nil, "search", 0, "never called search (no tool calls)"},
	})
}

func TestToolNotCalled(t *testing.T) {
	toolTable(t, []toolCase{
		{"never called", checks.ToolNotCalled, agentCalls, "delete", 1, "never called delete"},
		{"called", checks.ToolNotCalled, agentCalls, "search", 0, "called search 2×"},
		{"any of a list", checks.ToolNotCalled, agentCalls, "delete, fetch", 0, "called fetch 1×"},
		{"none of a list", checks.ToolNotCalled, agentCalls, `["delete", "drop"]`, 1, "never called delete, drop"},
		{"model target", checks.ToolNotCalled, nil, "delete", 1, "never called delete"},
	})
}

func TestToolArgs(t *testing.T) {
	toolTable(t, []toolCase{
		{"subset of the first call", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"q": "paris"}}`, 1, `called search with {"q":"paris"} (call 1 of 4)`},
		{"a later call matches", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"q": "lyon"}}`, 1, "(call 3 of 4)"},
		{"numbers as numbers", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"limit": 5.0, "q": "paris"}}`, 1, ""},
		{"nested subset", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"filters": {"safe": true}}}`, 1, ""},
		{"list exact", checks.ToolArgs, agentCalls, `{"tool": "fetch", "args": {"headers": ["a", "b"]}}`, 1, ""},
		{"empty args is any call", checks.ToolArgs, agentCalls, `{"tool": "fetch", "args": {}}`, 1, ""},
		{"wrong value", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"q": "rome"}}`, 0,
			`called search 2×, never with {"q":"rome"} (first call: q is "paris", want "rome")`},
		{"missing key", checks.ToolArgs, agentCalls, `{"tool": "fetch", "args": {"timeout": 3}}`, 0, "first call: timeout is missing"},
		{"nested value", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"filters": {"lang": "en"}}}`, 0, `filters.lang is "fr", want "en"`},
		{"number is not a string", checks.ToolArgs, agentCalls, `{"tool": "search", "args": {"limit": "5"}}`, 0, `limit is 5, want "5"`},
		{"list order counts", checks.ToolArgs, agentCalls, `{"tool": "fetch", "args": {"headers": ["b", "a"]}}`, 0, `headers[0] is "a", want "b"`},
		{"list length counts", checks.ToolArgs, agentCalls, `{"tool": "fetch", "args": {"headers": ["a"]}}`, 0, `headers is ["a","b"], want ["a"]`},
		{"broken arguments", checks.ToolArgs, agentCalls, `{"tool": "summarize", "args": {}}`, 0, "its arguments are not a JSON object"},
		{"tool never called", checks.ToolArgs, agentCalls, `{"tool": "delete", "args": {"id": 1}}`, 0, "never called delete"},
		{"model target", checks.ToolArgs, nil, `{"tool": "search", "args": {}}`, 0, "no tool calls"},
	})
}

func TestToolSequence(t *testing.T) {
	toolTable(t, []toolCase{
		{"in order", checks.ToolSequence, agentCalls, `["search", "fetch", "summarize"]`, 1, "called search → fetch → summarize in order"},
		{"interleaved", checks.ToolSequence, agentCalls, "search, summarize", 1, ""},
		{"repeats need repeats", checks.ToolSequence, agentCalls, "search, search", 1, ""},
		{"too many repeats", checks.ToolSequence, agentCalls, "fetch, fetch", 0, ""},
		{"wrong order", checks.ToolSequence, agentCalls[1:3], "search, fetch", 0, "expected search → fetch, got fetch → search"},
		{"one missing", checks.ToolSequence, agentCalls, `["search","fetch","delete"]`, 0, "got search → fetch → search → summarize"},
		{"model target", checks.ToolSequence, nil, "search", 0, "expected search, got no tool calls"},
	})
}

func TestMaxToolCalls(t *testing.T) {
	toolTable(t, []toolCase{
		{"under", checks.MaxToolCalls, agentCalls, "5", 1, "4 tool calls, at most 5 allowed"},
		{"at the limit", checks.MaxToolCalls, agentCalls, " 4 ", 1, ""},
		{"over", checks.MaxToolCalls, agentCalls, "3", 0, "4 tool calls, more than the 3 allowed"},
		{"zero allowed", checks.MaxToolCalls, agentCalls[:1], "0", 0, "1 tool call, more than the 0 allowed"},
		{"model target", checks.MaxToolCalls, nil, "0", 1, "0 tool calls, at most 0 allowed"},
	})
}

// A long trajectory is summarised in the detail, not spelled out.
func TestToolDetailBounded(t *testing.T) {
	var calls trajectory.Calls
	for range 50 {
		calls = append(calls, trajectory.Call{Name: strings.Repeat("x", 200)})
	}
	got, err := checks.Run(checks.ToolSequence, checks.Answer{ToolCalls: calls}, "a, b")
	if err != nil || got.Score != 0 {
		t.Fatalf("Run = %+v, %v", got, err)
	}
	if !strings.Contains(got.Detail, "… (40 more)") || len(got.Detail) > 1000 {
		t.Errorf("detail of %d bytes: %q", len(got.Detail), got.Detail)
	}
}

func TestToolValidate(t *testing.T) {
	for _, tc := range []struct {
		name, typ, ref string
		want           string // substring of the error, "" when valid
	}{
		{"name", checks.ToolCalled, "search", ""},
		{"empty name", checks.ToolCalled, "  ", "the value must name a tool"},
		{"empty in list", checks.ToolNotCalled, "a,,b", "name 2: a tool name is empty"},
		{"control char", checks.ToolCalled, "a\nb", "control character"},
		{"long name", checks.ToolCalled, strings.Repeat("n", 257), "longer than 256 bytes"},
		{"list not strings", checks.ToolSequence, `["a", 1]`, "not a JSON list of tool names"},
		{"empty list", checks.ToolSequence, `[]`, "names no tool"},
		{"too many names", checks.ToolSequence, strings.Repeat("a,", checks.MaxToolNames) + "a", "limit 100"},
		{"empty sequence", checks.ToolSequence, "", "must list tool names"},
		{"args ok", checks.ToolArgs, `{"tool": "s", "args": {"a": [1, {"b": null}]}}`, ""},
		{"args not JSON", checks.ToolArgs, `{tool: s}`, "must be a JSON object"},
		{"args a list", checks.ToolArgs, `[1]`, "must be a JSON object"},
		{"args unknown key", checks.ToolArgs, `{"tool": "s", "args": {}, "name": "x"}`, `unknown key "name"`},
		{"args no tool", checks.ToolArgs, `{"args": {}}`, `"tool" must be the tool's name`},
		{"args empty tool", checks.ToolArgs, `{"tool": " ", "args": {}}`, `"tool": a tool name is empty`},
		{"args missing", checks.ToolArgs, `{"tool": "s"}`, `"args" must be a JSON object`},
		{"args not object", checks.ToolArgs, `{"tool": "s", "args": "q=1"}`, `"args" must be a JSON object`},
		{"args empty value", checks.ToolArgs, "", `{"tool": name, "args": {...}}`},
		{"max ok", checks.MaxToolCalls, "0", ""},
		{"max fraction", checks.MaxToolCalls, "2.5", `"2.5" is not a whole number`},
		{"max negative", checks.MaxToolCalls, "-1", "not a whole number"},
		{"max words", checks.MaxToolCalls, "five", "not a whole number"},
		{"max empty", checks.MaxToolCalls, "", "the most calls allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checks.Validate(tc.typ, tc.ref)
			_, runErr := checks.Run(tc.typ, checks.Answer{}, tc.ref)
			if tc.want == "" {
				if err != nil || runErr != nil {
					t.Fatalf("Validate = %v, Run = %v, want both nil", err, runErr)
				}
				return
			}
			if !errors.Is(err, checks.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate(%q, %q) = %v, want ErrInvalid containing %q", tc.typ, tc.ref, err, tc.want)
			}
			if !errors.Is(runErr, checks.ErrInvalid) {
				t.Fatalf("Run(%q, %q) = %v, want ErrInvalid", tc.typ, tc.ref, runErr)
			}
		})
	}
}

// A trajectory check reads its own value only; a text check falls back to
// the task's reference.
func TestRef(t *testing.T) {
	if got := checks.Ref(checks.Contains, "", "Paris"); got != "Paris" {
		t.Errorf("Ref(contains, empty) = %q, want the reference", got)
	}
	if got := checks.Ref(checks.Contains, "own", "Paris"); got != "own" {
		t.Errorf("Ref(contains, own) = %q", got)
	}
	for _, typ := range []string{checks.ToolCalled, checks.ToolNotCalled, checks.ToolArgs, checks.ToolSequence, checks.MaxToolCalls} {
		if !checks.Trajectory(typ) {
			t.Errorf("Trajectory(%q) = false", typ)
		}
		if got := checks.Ref(typ, "", "search"); got != "" {
			t.Errorf("Ref(%q, empty, reference) = %q, want no fallback", typ, got)
		}
	}
	if checks.Trajectory(checks.ExactMatch) {
		t.Error("Trajectory(exact_match) = true")
	}
}
