package checks_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"tribunal/checks"
	"tribunal/trajectory"
)

// fuzzType maps a fuzzed byte to a check type, with a few unknown names.
func fuzzType(b byte) string {
	all := append(append([]string{}, checks.Types...), "", "EXACT_MATCH", "rouge")
	return all[int(b)%len(all)]
}

// FuzzRun: Run never panics, a score is always in [0,1], an error is always
// ErrInvalid with a zero Result, a definition Validate accepts always runs,
// the symmetric metrics (f1, rouge_l) are symmetric, and precision one way
// is recall the other.
func FuzzRun(f *testing.F) {
	for i := range checks.Types {
		f.Add(byte(i), "The answer is $1,234.50 (3/4)", "#### 1234.5")
		f.Add(byte(i), "```json\n{\"a\": [1, -2e3, \"x\"]}\n```", `{"type":"object","properties":{"a":{"type":"array"}}}`)
		f.Add(byte(i), "İstanbul &amp; the cat\x1csat -- 2019-2020.", `The (cat) sat, 3.14 \boxed{\frac{1}{2}}`)
		f.Add(byte(i), "", "")
		f.Add(byte(i), "a a a a", "(?i)^a+$")
	}
	f.Fuzz(func(t *testing.T, tb byte, response, ref string) {
		typ := fuzzType(tb)
		got, err := checks.Run(typ, checks.Answer{Text: response}, ref)
		if err != nil {
			if !errors.Is(err, checks.ErrInvalid) {
				t.Fatalf("Run(%q) error %v does not wrap ErrInvalid", typ, err)
			}
			if got != (checks.Result{}) {
				t.Fatalf("Run(%q) returned %+v with error %v", typ, got, err)
			}
			if strings.TrimSpace(ref) != "" && checks.Validate(typ, ref) == nil {
				t.Fatalf("Validate(%q, %q) accepted a definition Run rejects: %v", typ, ref, err)
			}
			return
		}
		if math.IsNaN(got.Score) || got.Score < 0 || got.Score > 1 {
			t.Fatalf("Run(%q, %q, %q) score %v out of [0,1]", typ, response, ref, got.Score)
		}
		if got.Detail == "" && typ != checks.Regex {
			t.Fatalf("Run(%q) gave an empty detail", typ)
		}
		if (typ == checks.F1 || typ == checks.RougeL) && strings.TrimSpace(response) != "" {
			back, err := checks.Run(typ, checks.Answer{Text: ref}, response)
			if err != nil || math.Abs(back.Score-got.Score) > 1e-12 {
				t.Fatalf("%s not symmetric: %v vs %v (%v)", typ, got.Score, back.Score, err)
			}
		}
		if typ == checks.Precision && strings.TrimSpace(response) != "" {
			back, err := checks.Run(checks.Recall, checks.Answer{Text: ref}, response)
			if err != nil || math.Abs(back.Score-got.Score) > 1e-12 {
				t.Fatalf("precision %v is not the recall the other way round %v (%v)", got.Score, back.Score, err)
			}
		}
	})
}

// FuzzSelfMatch: an answer identical to the reference gets full marks from
// every check that compares text, whatever the text.
func FuzzSelfMatch(f *testing.F) {
	f.Add("The cat sat on the mat.")
	f.Add("  MiXeD\tcase\n")
	f.Add("İ\x1c“the”")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		for _, typ := range []string{checks.ExactMatch, checks.Contains, checks.F1, checks.Precision, checks.Recall, checks.BLEU, checks.RougeL} {
			got, err := checks.Run(typ, checks.Answer{Text: s}, s)
			if err != nil {
				t.Fatalf("Run(%q) on %q: %v", typ, s, err)
			}
			if got.Score == 1 {
				continue
			}
			// BLEU and ROUGE-L give 0 when the text has no tokens at all.
			if got.Score == 0 && (typ == checks.BLEU && strings.Contains(got.Detail, "0/0") ||
				typ == checks.RougeL && strings.Contains(got.Detail, "no tokens")) {
				continue
			}
			t.Fatalf("Run(%q, s, s) = %+v for s = %q, want 1", typ, got, s)
		}
	})
}

// toolTypes are the trajectory checks, for FuzzToolChecks.
var toolTypes = []string{checks.ToolCalled, checks.ToolNotCalled, checks.ToolArgs, checks.ToolSequence, checks.MaxToolCalls}

// FuzzToolChecks: the trajectory checks' value parsers never panic, Run
// fails exactly when Validate does (always ErrInvalid), a score is 0 or 1
// with a detail, and the checks agree with each other: tool_called and
// tool_not_called of one name add up to 1, a one-name sequence is
// tool_called, the calls' own names in order are a sequence, and a call's
// own arguments match tool_args.
func FuzzToolChecks(f *testing.F) {
	for i := range toolTypes {
		f.Add(byte(i), "search", "search,fetch", `{"q": "paris", "n": 2}`)
		f.Add(byte(i), `{"tool": "search", "args": {"q": "paris"}}`, "search", `{"q": "paris", "n": [1, {"a": null}]}`)
		f.Add(byte(i), `["fetch", "search"]`, "fetch,search,fetch", "")
		f.Add(byte(i), "3", "a,b,c,d", "not json")
		f.Add(byte(i), "", "", "")
		f.Add(byte(i), `{"tool": "", "args": []}`, ",", "{}")
		f.Add(byte(i), "-1", "a", "1e400")
	}
	f.Fuzz(func(t *testing.T, tb byte, ref, names, args string) {
		typ := toolTypes[int(tb)%len(toolTypes)]
		var calls trajectory.Calls
		if names != "" {
			for _, n := range strings.Split(names, ",") {
				calls = append(calls, trajectory.Call{Name: n, Arguments: trajectory.Args(args)})
			}
		}
		ans := checks.Answer{Text: ref, ToolCalls: calls}
		got, err := checks.Run(typ, ans, ref)
		verr := checks.Validate(typ, ref)
		if (err == nil) != (verr == nil) {
			t.Fatalf("Run(%q, %q) error %v but Validate %v", typ, ref, err, verr)
		}
		if err != nil {
			if !errors.Is(err, checks.ErrInvalid) || got != (checks.Result{}) {
				t.Fatalf("Run(%q, %q) = %+v, %v; want a zero Result and ErrInvalid", typ, ref, got, err)
			}
			return
		}
		if got.Score != 0 && got.Score != 1 || got.Detail == "" {
			t.Fatalf("Run(%q, %q) = %+v, want 0 or 1 with a detail", typ, ref, got)
		}
		if len(calls) > 0 && validName(calls[0].Name) {
			name := calls[0].Name
			called := mustRun(t, checks.ToolCalled, ans, name)
			if not := mustRun(t, checks.ToolNotCalled, ans, name); called+not != 1 || called != 1 {
				t.Fatalf("%q was called: tool_called %v, tool_not_called %v", name, called, not)
			}
			one, _ := json.Marshal([]string{name})
			if seq := mustRun(t, checks.ToolSequence, ans, string(one)); seq != called {
				t.Fatalf("tool_sequence [%q] = %v, tool_called = %v", name, seq, called)
			}
			if mustRun(t, checks.MaxToolCalls, ans, strconv.Itoa(len(calls))) != 1 || mustRun(t, checks.MaxToolCalls, ans, strconv.Itoa(len(calls)-1)) != 0 {
				t.Fatalf("max_tool_calls does not count %d calls", len(calls))
			}
			if obj, ok := calls[0].Arguments.Object(); ok {
				spec, jerr := json.Marshal(map[string]any{"tool": name, "args": obj})
				if jerr == nil && mustRun(t, checks.ToolArgs, ans, string(spec)) != 1 {
					t.Fatalf("tool_args %s does not match the call's own arguments", spec)
				}
			}
			if !slices.ContainsFunc(calls, func(c trajectory.Call) bool { return !validName(c.Name) }) {
				own, _ := json.Marshal(calls.Names())
				if len(calls) <= checks.MaxToolNames && mustRun(t, checks.ToolSequence, ans, string(own)) != 1 {
					t.Fatalf("the calls' own names %s are not their sequence", own)
				}
			}
		}
	})
}

// validName is a name the parsers accept as it stands (trimmed, printable,
// not read as a JSON list).
func validName(n string) bool {
	return n != "" && n == strings.TrimSpace(n) && len(n) <= 256 && !strings.HasPrefix(n, "[") &&
		!strings.ContainsFunc(n, unicode.IsControl) && utf8.ValidString(n)
}

func mustRun(t *testing.T, typ string, ans checks.Answer, ref string) float64 {
	t.Helper()
	got, err := checks.Run(typ, ans, ref)
	if err != nil {
		t.Fatalf("Run(%q, %q): %v", typ, ref, err)
	}
	return got.Score
}
