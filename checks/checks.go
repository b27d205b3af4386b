// Package checks scores a model's answer against a reference without an LLM.
//
// Each check type turns (answer, reference) into a score in [0,1] plus a
// short detail for people. Exact, contains, regex, numeric and the JSON checks
// pass or fail (1 or 0); f1, precision, recall, bleu and rouge_l give partial
// credit. BLEU and ROUGE-L follow sacrebleu's sentence_bleu and Google's
// rouge-score defaults so numbers can be compared with published results.
//
// The trajectory checks (tool_called, tool_not_called, tool_args,
// tool_sequence, max_tool_calls) score an agent's tool calls instead of its
// text, pass or fail; they share the one list of types, so a task, a run's
// metrics and every form name them like the others (see tools.go).
package checks

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"tribunal/trajectory"
)

// Check type names, as stored on a task.
const (
	ExactMatch = "exact_match"
	Contains   = "contains"
	Regex      = "regex"
	Numeric    = "numeric"
	F1         = "f1"
	Precision  = "precision"
	Recall     = "recall"
	BLEU       = "bleu"
	RougeL     = "rouge_l"
	JSONValid  = "json_valid"
	JSONSchema = "json_schema"

	ToolCalled    = "tool_called"
	ToolNotCalled = "tool_not_called"
	ToolArgs      = "tool_args"
	ToolSequence  = "tool_sequence"
	MaxToolCalls  = "max_tool_calls"
)

// Types lists every check type in display order: the text checks, then the
// trajectory checks.
var Types = []string{ExactMatch, Contains, Regex, Numeric, F1, Precision, Recall, BLEU, RougeL, JSONValid, JSONSchema,
	ToolCalled, ToolNotCalled, ToolArgs, ToolSequence, MaxToolCalls}

// MaxPatternLen caps a regex pattern; RE2 is linear-time but a huge pattern
// still costs memory to compile.
const MaxPatternLen = 1000

// ErrInvalid is wrapped by every error about an unusable check definition,
// so callers can report it as a validation problem (errors.Is).
var ErrInvalid = errors.New("invalid check")

// Result is a check's score in [0,1] with a short human-readable detail
// (e.g. "expected 72, found 72").
type Result struct {
	Score  float64
	Detail string
}

// Answer is what a check scores: the answer's text and, for an agent, the
// tool calls it made on the way. ToolCalls is nil for a model target, which
// the trajectory checks read as an answer that called no tool.
type Answer struct {
	Text      string
	ToolCalls trajectory.Calls
}

// Run scores ans against ref (use Ref to pick it). For regex, ref is the
// pattern; for json_schema ref is the schema JSON; for json_valid ref is
// ignored; for the trajectory checks ref is the check's own value (see
// tools.go); for the other types ref is the expected answer. The error is
// only for an unusable check: unknown type, bad regex, schema or value, an
// empty reference, or a numeric reference with no number. A wrong answer is
// a Result with Score 0, never an error.
func Run(typ string, ans Answer, ref string) (Result, error) {
	if Trajectory(typ) {
		return runTool(typ, ans.ToolCalls, ref)
	}
	response := ans.Text
	if typ != JSONValid && strings.TrimSpace(ref) == "" {
		if !known(typ) {
			return Result{}, unknownType(typ)
		}
		return Result{}, fmt.Errorf("checks: %s: empty reference: %w", typ, ErrInvalid)
	}
	switch typ {
	case ExactMatch:
		return exactMatch(response, ref), nil
	case Contains:
		return contains(response, ref), nil
	case Regex:
		return regexMatch(response, ref)
	case Numeric:
		return numeric(response, ref)
	case F1:
		return tokenF1(response, ref), nil
	case Precision:
		return tokenPrecision(response, ref), nil
	case Recall:
		return tokenRecall(response, ref), nil
	case BLEU:
		return bleu(response, ref), nil
	case RougeL:
		return rougeL(response, ref), nil
	case JSONValid:
		return jsonValid(response), nil
	case JSONSchema:
		return jsonSchema(response, ref)
	}
	return Result{}, unknownType(typ)
}

// Ref is the reference a check runs against: its own value, or, for a text
// check without one, the task's reference. A trajectory check never falls
// back: its value says what to look for, and a reference answer cannot.
func Ref(typ, value, taskReference string) string {
	if value != "" || Trajectory(typ) {
		return value
	}
	return taskReference
}

// Validate checks a check definition when a task is saved: the type is known,
// a regex compiles, a schema compiles, a numeric reference holds a number, a
// trajectory check's value parses. ref may be empty for a text check: Run
// then gets the task's reference instead, so callers that know it should
// validate that too (Validate(typ, Ref(typ, value, task.Reference))).
func Validate(typ, ref string) error {
	if !known(typ) {
		return unknownType(typ)
	}
	if Trajectory(typ) {
		_, err := parseTool(typ, ref)
		return err
	}
	if strings.TrimSpace(ref) == "" {
		return nil
	}
	switch typ {
	case Regex:
		_, err := compileRegex(ref)
		return err
	case Numeric:
		_, err := referenceNumber(ref)
		return err
	case JSONSchema:
		_, err := compileSchema(ref)
		return err
	}
	return nil
}

func known(typ string) bool { return slices.Contains(Types, typ) }

func unknownType(typ string) error {
	return fmt.Errorf("checks: unknown check type %q: %w", clip(typ, 40), ErrInvalid)
}

// exactMatch ignores case (Unicode simple folding), surrounding whitespace
// and runs of internal whitespace, so "  Paris\n" matches "paris".
func exactMatch(response, ref string) Result {
	got, want := collapse(response), collapse(ref)
	if strings.EqualFold(got, want) {
		return Result{1, "exact match"}
	}
	return Result{0, fmt.Sprintf("expected %q, got %q", clip(want, 60), clip(got, 60))}
}

// contains is a case-insensitive substring test after the same whitespace
// normalisation as exact_match, so line breaks in the answer do not matter.
func contains(response, ref string) Result {
	want := collapse(ref)
	if strings.Contains(foldCase(collapse(response)), foldCase(want)) {
		return Result{1, fmt.Sprintf("contains %q", clip(want, 60))}
	}
	return Result{0, fmt.Sprintf("does not contain %q", clip(want, 60))}
}

func regexMatch(response, pattern string) (Result, error) {
	re, err := compileRegex(pattern)
	if err != nil {
		return Result{}, err
	}
	if loc := re.FindStringIndex(response); loc != nil {
		return Result{1, fmt.Sprintf("matched %q", clip(response[loc[0]:loc[1]], 60))}, nil
	}
	return Result{0, fmt.Sprintf("no match for /%s/", clip(pattern, 60))}, nil
}

// compileRegex compiles a Go RE2 pattern (linear-time, so a pattern cannot
// make matching blow up), searched anywhere in the response. Use (?i) for
// case-insensitive and ^…$ to anchor.
func compileRegex(pattern string) (*regexp.Regexp, error) {
	if len(pattern) > MaxPatternLen {
		return nil, fmt.Errorf("checks: regex: pattern is %d bytes, limit %d: %w", len(pattern), MaxPatternLen, ErrInvalid)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("checks: regex: %v: %w", err, ErrInvalid)
	}
	return re, nil
}

// collapse trims s and turns every run of whitespace into one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// foldCase maps s to a caseless form for substring search; strings.EqualFold
// has no substring variant. Lower(Upper(r)) merges e.g. 'ſ' with 's'.
func foldCase(s string) string {
	return strings.ToLower(strings.ToUpper(s))
}

// clip shortens s to at most n runes for details and error messages.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
