// Package kpi is Tribunal's KPI formula language (seed 002 §6 and §12.1).
//
// A formula is translated into github.com/expr-lang/expr syntax by a thin
// rewriting layer (translate.go) and compiled by expr in a closed
// environment: only the metrics the formula names and the functions below.
//
// Grammar, informally:
//
//	number     1, 0.5, .5, 2e-3
//	metric     a name of letters, digits and '_' (case-insensitive):
//	           score, accuracy, check_exact_match, pass_rate, latency_ms, …
//	           or one of the seed's names for them (ACCURACY, ROUGE, BLEU,
//	           F1_SCORE, PRECISION, RECALL, LATENCY_MS, COST_USD,
//	           PASS_RATE): Vocabulary lists them all
//	arithmetic + - * / and unary -, parentheses
//	comparison < <= > >= = == != <>   (= is equality, <> is !=;
//	           0.5 < x <= 1 is a range check: both must hold)
//	logic      AND, OR, NOT           (NOT a > b means NOT (a > b))
//	condition  IF cond THEN a ELSE b  (ELSE runs as far right as it can;
//	           put the whole IF in parentheses to combine it: (IF …) * 2)
//	functions  AVERAGE(x, …)  alias AVG   arithmetic mean
//	           MIN(x, …), MAX(x, …)
//	           THRESHOLD(x, v)            1 if x >= v, else 0
//	           WEIGHTED_SUM(m:w, …)       m1*w1 + m2*w2 + … (m a metric,
//	                                      w a number; weights not normalised)
//
// Keywords and function names are case-insensitive and reserved (a metric
// cannot be called "min" or "if"). Precedence, loosest first: IF…ELSE, OR,
// AND, NOT, comparisons, + -, * /, unary -. A formula whose value is a
// comparison evaluates to 1 (true) or 0 (false).
package kpi

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

const (
	// MaxLength caps a formula, in characters.
	MaxLength = 2000
	// maxNodes caps expr's syntax tree; a MaxLength formula stays below it.
	maxNodes = 4000
	// MaxErrors caps the errors returned: past a few, more are noise.
	MaxErrors = 20
)

// Error is one problem in a formula; Position is the 1-based character
// (rune) column in the formula as the user wrote it.
type Error struct {
	Message  string `json:"message"`
	Position int    `json:"position"`
}

func (e Error) Error() string { return fmt.Sprintf("column %d: %s", e.Position, e.Message) }

// Formula is a compiled KPI formula. It is safe for concurrent use.
type Formula struct {
	src      string
	program  *vm.Program
	metrics  []string       // sorted, lower-case
	firstPos map[string]int // metric -> column of its first use
	posMap   []int          // translated byte offset -> source column
}

// Compile translates and compiles src. known holds the metric names
// (lower-case) a formula may read besides the Vocabulary's, such as the
// judges' metrics; nil accepts any name. It returns every problem found
// (the first MaxErrors), sorted by position; the Formula is nil if there is
// any.
func Compile(src string, known map[string]bool) (*Formula, []Error) {
	runes := []rune(src)
	end := len(runes) + 1
	if len(runes) > MaxLength {
		return nil, []Error{{fmt.Sprintf("formula is too long (%d characters, at most %d)", len(runes), MaxLength), MaxLength + 1}}
	}
	toks, errs := tokenize(runes)
	if len(errs) > 0 {
		return nil, sortErrors(errs)
	}
	if len(toks) == 1 {
		return nil, []Error{{"formula is empty", 1}}
	}
	if errs := checkParens(toks); len(errs) > 0 {
		return nil, sortErrors(errs)
	}

	tr := &translator{toks: toks, known: known, metrics: map[string]int{}}
	if i, _ := tr.list(0, false); toks[i].kind != tEOF {
		tr.stray(toks[i]) // unreachable with balanced parentheses; kept as a guard
	}
	f := &Formula{src: src, firstPos: tr.metrics, posMap: tr.posMap}
	for name := range tr.metrics {
		f.metrics = append(f.metrics, name)
	}
	sort.Strings(f.metrics)
	if tr.blocked {
		return nil, sortErrors(tr.errs)
	}

	// Unknown metrics do not block this step, so type errors are found too.
	env := make(map[string]any, len(f.metrics))
	for _, name := range f.metrics {
		env[metricVar(name)] = 0.0
	}
	prog, err := expr.Compile(tr.out.String(), exprOptions(env)...)
	if err != nil {
		msg, off := exprError(err)
		tr.errs = append(tr.errs, Error{msg, f.column(off, end)})
	}
	if len(tr.errs) > 0 {
		return nil, sortErrors(tr.errs)
	}
	f.program = prog
	return f, nil
}

// Validation is the answer of POST /api/kpis/validate.
type Validation struct {
	OK     bool    `json:"ok"`
	Errors []Error `json:"errors"`
}

// Validate compiles src and reports the outcome; Errors is never nil so it
// encodes as [] in JSON.
func Validate(src string, known map[string]bool) Validation {
	_, errs := Compile(src, known)
	if errs == nil {
		errs = []Error{}
	}
	return Validation{OK: len(errs) == 0, Errors: errs}
}

// Metrics returns the metric names the formula reads, sorted and unique.
func (f *Formula) Metrics() []string { return slices.Clone(f.metrics) }

// Eval computes the formula. Metric names are matched case-insensitively; a
// metric the run lacks is read from its Fallback if it has one (accuracy →
// score). A missing or non-finite metric, a division by zero and a non-finite
// result are errors (of type Error, positioned in the source).
func (f *Formula) Eval(metrics map[string]float64) (float64, error) {
	env := make(map[string]any, len(f.metrics))
	for _, name := range f.metrics {
		v, ok := lookup(metrics, name)
		if m := builtin(name); !ok && m != nil && m.Fallback != "" {
			v, ok = lookup(metrics, m.Fallback)
		}
		if !ok {
			return 0, Error{fmt.Sprintf("missing metric %q", name), f.firstPos[name]}
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, Error{fmt.Sprintf("metric %q is not a finite number (%v)", name, v), f.firstPos[name]}
		}
		env[metricVar(name)] = v
	}
	out, err := expr.Run(f.program, env)
	if err != nil {
		msg, off := exprError(err)
		return 0, Error{msg, f.column(off, utf8.RuneCountInString(f.src)+1)}
	}
	var v float64
	switch x := out.(type) {
	case float64:
		v = x
	case bool:
		if x {
			v = 1
		}
	default:
		return 0, Error{fmt.Sprintf("formula gives %T, not a number", out), 1}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, Error{"result is not a finite number", 1}
	}
	return v, nil
}

func lookup(metrics map[string]float64, name string) (float64, bool) {
	if v, ok := metrics[name]; ok {
		return v, true
	}
	// Fall back to a case-insensitive match, picking the smallest key so the
	// choice does not depend on map order.
	best, found := "", false
	for k := range metrics {
		if strings.EqualFold(k, name) && (!found || k < best) {
			best, found = k, true
		}
	}
	return metrics[best], found
}

// exprError extracts the message and the offset in the translated text from
// an expr error, dropping expr's snippet (which shows the translated text).
func exprError(err error) (string, int) {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err.Error(), -1
	}
	msg := fe.Message
	if fe.Prev != nil && !strings.HasPrefix(msg, "runtime error") {
		msg = fe.Prev.Error()
	}
	msg = strings.TrimSpace(msg)
	if strings.HasPrefix(msg, "non-bool expression") {
		return "the IF condition must be a comparison (true/false), not a number", fe.From
	}
	return userTerms.Replace(msg), fe.From
}

// userTerms rewrites expr's wording into the formula language.
var userTerms = strings.NewReplacer(
	"float64", "number", "bool", "true/false", divFunc, "/",
	"operation: && ", "operation: AND ", "operation: || ", "operation: OR ", "operation: ! ", "operation: NOT ",
)

// column maps an offset in the translated text to a source column.
func (f *Formula) column(off, end int) int {
	switch {
	case off < 0:
		return 1
	case off >= len(f.posMap):
		return end
	}
	return f.posMap[off]
}

func sortErrors(errs []Error) []Error {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Position < errs[j].Position })
	return errs[:min(len(errs), MaxErrors)]
}
