// Package trajectory is what an agent did to reach its answer: the tool
// calls it made, in order, with their results. The engine records it, the
// store keeps it with the item, reference checks score it, judges read its
// compact form, and pages and exports show it.
package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Call is one tool call of an item.
type Call struct {
	// Turn is the model call (1-based) that asked for the tool.
	Turn int `json:"turn"`
	// Server is the MCP server the tool lives on; empty for tools of the
	// user's own agent (the http executor) or a tool no server offers.
	Server    string `json:"server,omitempty"`
	Name      string `json:"name"`
	Arguments Args   `json:"arguments"`
	// Result is what the model was sent back: the tool's output, or why the
	// call failed when IsError.
	Result     string `json:"result"`
	IsError    bool   `json:"is_error"`
	DurationMs int64  `json:"duration_ms"`
}

// Args are a call's arguments as the model wrote them. Valid JSON is kept
// (and shown) as JSON; anything else as the string the model sent, since a
// call with broken arguments is part of the record too.
type Args string

// MarshalJSON writes valid JSON as is and anything else as a string; a
// JSON string is written as a string too, since a string is read back as
// the arguments' text.
func (a Args) MarshalJSON() ([]byte, error) {
	s := strings.TrimSpace(string(a))
	if s != "" && s[0] != '"' && json.Valid([]byte(s)) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err == nil {
			return buf.Bytes(), nil
		}
	}
	return json.Marshal(strings.ToValidUTF8(string(a), "\uFFFD"))
}

// UnmarshalJSON takes a JSON value, or a string holding the arguments'
// text (OpenAI's own convention).
func (a *Args) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Args(s)
	default:
		*a = Args(b)
	}
	return nil
}

// Object decodes the arguments as a JSON object; ok is false when they are
// not one (empty arguments are an empty object).
func (a Args) Object() (map[string]any, bool) {
	s := strings.TrimSpace(string(a))
	if s == "" {
		return map[string]any{}, true
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// Calls is an item's trajectory in the order the calls were made.
type Calls []Call

// Errors counts the calls that failed.
func (cs Calls) Errors() int {
	n := 0
	for _, c := range cs {
		if c.IsError {
			n++
		}
	}
	return n
}

// Names lists the tools called, in order.
func (cs Calls) Names() []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// compactResult bounds each result in the compact form, so a judge's
// prompt stays readable however much the tools said.
const compactResult = 500

// Compact is the trajectory as a judge reads it: one numbered line per
// call with its arguments and (clipped) result.
func (cs Calls) Compact() string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range cs {
		args, _ := c.Arguments.MarshalJSON()
		status := "→"
		if c.IsError {
			status = "→ ERROR:"
		}
		fmt.Fprintf(&b, "%d. [turn %d] %s(%s) %s %s\n", i+1, c.Turn, c.Name, args, status, clip(oneLine(c.Result), compactResult))
	}
	return strings.TrimRight(b.String(), "\n")
}

// CompactWithin is Compact cut to at most limit bytes (on a rune boundary),
// with a note of how much was left out.
func (cs Calls) CompactWithin(limit int) string {
	text := cs.Compact()
	if len(text) <= limit {
		return text
	}
	cut := runeStart(text, limit)
	return text[:cut] + fmt.Sprintf("\n… (%d more bytes of tool calls not shown)", len(text)-cut)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := runeStart(s, n)
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// runeStart is the last rune boundary at or before n.
func runeStart(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
