package checks

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"tribunal/trajectory"
)

// The trajectory checks score an agent's tool calls, pass or fail. Each
// reads its own value, never the task's reference:
//
//	tool_called      search              1 when search was called (several
//	                                     names: comma-separated or a JSON
//	                                     list, all of them)
//	tool_not_called  delete              1 when delete was never called
//	                                     (several names: none of them)
//	tool_args        {"tool": "search", "args": {"q": "paris"}}
//	                                     1 when some call of search had these
//	                                     arguments (see argsDiff)
//	tool_sequence    ["search", "fetch"] (or "search, fetch")
//	                                     1 when the calls hold these names in
//	                                     this order, others may come between
//	max_tool_calls   5                   1 when there were at most 5 calls
//
// A model target has no trajectory (nil calls): it called no tool, so it
// scores 0 on tool_called, tool_args and tool_sequence and 1 on
// tool_not_called and max_tool_calls.

// MaxToolNames caps the names of one tool_called, tool_not_called or
// tool_sequence value; a real sequence is a handful of steps.
const MaxToolNames = 100

// maxToolName bounds one tool name (MCP and OpenAI names are at most 64).
const maxToolName = 256

// Trajectory reports whether a check type scores the tool calls rather than
// the answer's text.
func Trajectory(typ string) bool {
	switch typ {
	case ToolCalled, ToolNotCalled, ToolArgs, ToolSequence, MaxToolCalls:
		return true
	}
	return false
}

// toolSpec is a trajectory check's value, parsed.
type toolSpec struct {
	names []string       // tool_called, tool_not_called, tool_sequence
	tool  string         // tool_args
	args  map[string]any // tool_args
	max   int            // max_tool_calls
}

// parseTool reads a trajectory check's value; every problem is ErrInvalid.
func parseTool(typ, ref string) (toolSpec, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return toolSpec{}, fmt.Errorf("checks: %s: %s: %w", typ, toolValueHint(typ), ErrInvalid)
	}
	var sp toolSpec
	var err error
	switch typ {
	case ToolCalled, ToolNotCalled, ToolSequence:
		sp.names, err = parseNames(ref)
	case ToolArgs:
		sp.tool, sp.args, err = parseArgs(ref)
	case MaxToolCalls:
		sp.max, err = strconv.Atoi(ref)
		if err != nil || sp.max < 0 {
			err = fmt.Errorf("%q is not a whole number of calls (0 or more)", clip(ref, 40))
		}
	default:
		return toolSpec{}, unknownType(typ)
	}
	if err != nil {
		return toolSpec{}, fmt.Errorf("checks: %s: %v: %w", typ, err, ErrInvalid)
	}
	return sp, nil
}

// toolValueHint says what an empty value should have held.
func toolValueHint(typ string) string {
	switch typ {
	case ToolArgs:
		return `the value must be {"tool": name, "args": {...}}`
	case ToolSequence:
		return `the value must list tool names, e.g. ["search", "fetch"] or search, fetch`
	case MaxToolCalls:
		return "the value must be the most calls allowed, e.g. 5"
	}
	return "the value must name a tool"
}

// parseNames reads a JSON list of names or a comma-separated one.
func parseNames(ref string) ([]string, error) {
	var names []string
	if strings.HasPrefix(ref, "[") {
		if err := json.Unmarshal([]byte(ref), &names); err != nil {
			return nil, fmt.Errorf(`not a JSON list of tool names (%v)`, err)
		}
	} else {
		names = strings.Split(ref, ",")
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the list names no tool")
	}
	if len(names) > MaxToolNames {
		return nil, fmt.Errorf("%d tool names, limit %d", len(names), MaxToolNames)
	}
	for i, n := range names {
		n = strings.TrimSpace(n)
		if err := validName(n); err != nil {
			return nil, fmt.Errorf("name %d: %v", i+1, err)
		}
		names[i] = n
	}
	return names, nil
}

func validName(n string) error {
	switch {
	case n == "":
		return fmt.Errorf("a tool name is empty")
	case len(n) > maxToolName:
		return fmt.Errorf("tool name %q is longer than %d bytes", clip(n, 40), maxToolName)
	case strings.ContainsFunc(n, unicode.IsControl):
		return fmt.Errorf("tool name %q holds a control character", clip(n, 40))
	}
	return nil
}

// parseArgs reads {"tool": name, "args": {...}}.
func parseArgs(ref string) (string, map[string]any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ref), &raw); err != nil || raw == nil {
		return "", nil, fmt.Errorf(`the value must be a JSON object {"tool": name, "args": {...}}`)
	}
	for k := range raw {
		if k != "tool" && k != "args" {
			return "", nil, fmt.Errorf("unknown key %q (want tool and args)", clip(k, 40))
		}
	}
	var tool string
	if err := json.Unmarshal(raw["tool"], &tool); err != nil {
		return "", nil, fmt.Errorf(`"tool" must be the tool's name as a string`)
	}
	tool = strings.TrimSpace(tool)
	if err := validName(tool); err != nil {
		return "", nil, fmt.Errorf(`"tool": %v`, err)
	}
	var args map[string]any
	if err := json.Unmarshal(raw["args"], &args); err != nil || args == nil {
		return "", nil, fmt.Errorf(`"args" must be a JSON object of the arguments to find (use tool_called to check the call alone)`)
	}
	return tool, args, nil
}

// runTool scores a trajectory check; calls is nil for a model target.
func runTool(typ string, calls trajectory.Calls, ref string) (Result, error) {
	sp, err := parseTool(typ, ref)
	if err != nil {
		return Result{}, err
	}
	switch typ {
	case ToolCalled:
		return toolCalled(calls, sp.names), nil
	case ToolNotCalled:
		return toolNotCalled(calls, sp.names), nil
	case ToolArgs:
		return toolArgs(calls, sp.tool, sp.args), nil
	case ToolSequence:
		return toolSequence(calls, sp.names), nil
	}
	return maxToolCalls(calls, sp.max), nil
}

func toolCalled(calls trajectory.Calls, names []string) Result {
	var missing []string
	for _, n := range names {
		if count(calls, n) == 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return Result{0, "never called " + nameList(missing) + calledSoFar(calls)}
	}
	return Result{1, "called " + counts(calls, names)}
}

func toolNotCalled(calls trajectory.Calls, names []string) Result {
	var hit []string
	for _, n := range names {
		if count(calls, n) > 0 {
			hit = append(hit, n)
		}
	}
	if len(hit) > 0 {
		return Result{0, "called " + counts(calls, hit)}
	}
	return Result{1, "never called " + nameList(names)}
}

// toolArgs passes when some call of the tool has the expected arguments.
func toolArgs(calls trajectory.Calls, tool string, want map[string]any) Result {
	wantText := short(want, 80)
	n, firstDiff := 0, ""
	for i, c := range calls {
		if c.Name != tool {
			continue
		}
		n++
		got, ok := c.Arguments.Object()
		d := "its arguments are not a JSON object"
		if ok {
			d = argsDiff("", want, got)
		}
		if d == "" {
			return Result{1, fmt.Sprintf("called %s with %s (call %d of %d)", clip(tool, 60), wantText, i+1, len(calls))}
		}
		if firstDiff == "" {
			firstDiff = d
		}
	}
	if n == 0 {
		return Result{0, "never called " + clip(tool, 60) + calledSoFar(calls)}
	}
	return Result{0, fmt.Sprintf("called %s %d×, never with %s (first call: %s)", clip(tool, 60), n, wantText, firstDiff)}
}

// argsDiff is where got first departs from want, or "" when it matches.
// An expected object matches an object holding at least its keys with
// matching values, at any depth; a list matches a list of the same length
// whose elements match in order; numbers compare as numbers (1 and 1.0 are
// equal), everything else by JSON equality.
func argsDiff(path string, want, got any) string {
	at := path
	if at == "" {
		at = "the arguments"
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %s, want an object", at, short(got, 40))
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			gv, ok := g[k]
			if !ok {
				return clip(p, 60) + " is missing"
			}
			if d := argsDiff(p, w[k], gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s is %s, want %s", clip(at, 60), short(got, 40), short(want, 40))
		}
		for i := range w {
			if d := argsDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	}
	// JSON scalars decode to float64, string, bool or nil, all comparable.
	if want == got {
		return ""
	}
	return fmt.Sprintf("%s is %s, want %s", clip(at, 60), short(got, 40), short(want, 40))
}

// toolSequence passes when names occur in order in the calls (a
// subsequence: other calls may come between).
func toolSequence(calls trajectory.Calls, names []string) Result {
	j := 0
	for _, c := range calls {
		if j < len(names) && c.Name == names[j] {
			j++
		}
	}
	want := arrows(names)
	if j == len(names) {
		return Result{1, "called " + want + " in order"}
	}
	if len(calls) == 0 {
		return Result{0, "expected " + want + ", got no tool calls"}
	}
	return Result{0, fmt.Sprintf("expected %s, got %s", want, arrows(calls.Names()))}
}

func maxToolCalls(calls trajectory.Calls, limit int) Result {
	if len(calls) <= limit {
		return Result{1, fmt.Sprintf("%s, at most %d allowed", callCount(len(calls)), limit)}
	}
	return Result{0, fmt.Sprintf("%s, more than the %d allowed", callCount(len(calls)), limit)}
}

func count(calls trajectory.Calls, name string) int {
	n := 0
	for _, c := range calls {
		if c.Name == name {
			n++
		}
	}
	return n
}

// counts says how often each name was called: "search 2×, fetch 1×".
func counts(calls trajectory.Calls, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d×", clip(n, 60), count(calls, n))
	}
	return strings.Join(parts, ", ")
}

// calledSoFar names the tools that were called instead, for a failed detail.
func calledSoFar(calls trajectory.Calls) string {
	if len(calls) == 0 {
		return " (no tool calls)"
	}
	var seen []string
	for _, c := range calls {
		if !slices.Contains(seen, c.Name) {
			seen = append(seen, c.Name)
		}
	}
	return " (called " + nameList(seen) + ")"
}

// listed bounds how many names a detail spells out.
const listed = 10

func nameList(names []string) string {
	return joinNames(names, ", ")
}

func arrows(names []string) string {
	return joinNames(names, " → ")
}

func joinNames(names []string, sep string) string {
	shown := names[:min(len(names), listed)]
	parts := make([]string, len(shown))
	for i, n := range shown {
		parts[i] = clip(n, 60)
	}
	s := strings.Join(parts, sep)
	if more := len(names) - len(shown); more > 0 {
		s += fmt.Sprintf("%s… (%d more)", sep, more)
	}
	return s
}

func callCount(n int) string {
	if n == 1 {
		return "1 tool call"
	}
	return fmt.Sprintf("%d tool calls", n)
}

// short is v as compact JSON, clipped for a detail.
func short(v any, n int) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return clip(string(b), n)
}
