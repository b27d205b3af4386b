package kpi

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// The translator rewrites the seed's syntax into expr syntax. It is not a
// full parser: it tracks only what the rewrite needs (bracket nesting, the
// extent of IF/THEN/ELSE and NOT, function arguments) plus an
// operand/operator alternation check, so that common mistakes get a message
// and a position in the user's own text. Precedence and types are left to
// expr. Every byte written to the output remembers the 1-based rune column
// of the source token it came from, so expr's errors can be mapped back.

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tIdent
	tLParen
	tRParen
	tComma
	tColon
	tIf
	tThen
	tElse
	tAnd
	tOr
	tNot
	tPlus
	tMinus
	tOp // binary-only operator: * / < <= > >= = == != <>
)

var keywords = map[string]tokKind{
	"IF": tIf, "THEN": tThen, "ELSE": tElse, "AND": tAnd, "OR": tOr, "NOT": tNot,
}

type token struct {
	kind tokKind
	text string // as written
	out  string // expr text for numbers and operators
	pos  int    // 1-based rune column
}

// describe names a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the formula"
	case tIf, tThen, tElse, tAnd, tOr, tNot:
		return strings.ToUpper(t.text)
	case tIdent, tNum:
		return fmt.Sprintf("%q", t.text)
	}
	return "'" + t.text + "'"
}

func isLetter(r rune) bool { return r < 128 && (unicode.IsLetter(r) || r == '_') }
func isDigit(r rune) bool  { return r >= '0' && r <= '9' }

// tokenize splits src into tokens, always ending with tEOF at len+1.
func tokenize(src []rune) ([]token, []Error) {
	var toks []token
	var errs []Error
	ops2 := map[string]string{"<=": "<=", ">=": ">=", "==": "==", "!=": "!=", "<>": "!="}
	ops1 := map[rune]token{
		'+': {kind: tPlus, out: "+"}, '-': {kind: tMinus, out: "-"},
		'*': {kind: tOp, out: "*"}, '/': {kind: tOp, out: "/"},
		'<': {kind: tOp, out: "<"}, '>': {kind: tOp, out: ">"}, '=': {kind: tOp, out: "=="},
		'(': {kind: tLParen}, ')': {kind: tRParen}, ',': {kind: tComma}, ':': {kind: tColon},
	}
	for i := 0; i < len(src); {
		r, pos := src[i], i+1
		switch {
		case unicode.IsSpace(r):
			i++
		case isLetter(r):
			j := i
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
				j++
			}
			word := string(src[i:j])
			kind, ok := keywords[strings.ToUpper(word)]
			if !ok {
				kind = tIdent
			}
			toks = append(toks, token{kind: kind, text: word, pos: pos})
			i = j
		case isDigit(r) || r == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j < len(src) && src[j] == '.' {
				for j++; j < len(src) && isDigit(src[j]); j++ {
				}
			}
			// An exponent only if digits follow: "2e" is 2 followed by e.
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && isDigit(src[k]) {
					for j = k; j < len(src) && isDigit(src[j]); j++ {
					}
				}
			}
			text := string(src[i:j])
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				errs = append(errs, Error{fmt.Sprintf("number %s is out of range", text), pos})
			}
			toks = append(toks, token{kind: tNum, text: text, out: floatLiteral(v), pos: pos})
			i = j
		default:
			if i+1 < len(src) {
				if out, ok := ops2[string(src[i:i+2])]; ok {
					toks = append(toks, token{kind: tOp, text: string(src[i : i+2]), out: out, pos: pos})
					i += 2
					continue
				}
			}
			if t, ok := ops1[r]; ok {
				t.text, t.pos = string(r), pos
				toks = append(toks, t)
				i++
				continue
			}
			msg := fmt.Sprintf("unexpected character %q", r)
			switch r {
			case '!':
				msg += " (write NOT)"
			case '&', '|':
				msg += " (write AND / OR)"
			}
			errs = append(errs, Error{msg, pos})
			i++
		}
	}
	return append(toks, token{kind: tEOF, pos: len(src) + 1}), errs
}

// floatLiteral writes v so that expr reads it as a float64, never an int:
// all arithmetic then stays in float64 and "/" reaches our DIV overload.
func floatLiteral(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// checkParens reports unmatched brackets; nothing else can be trusted
// while they are unbalanced.
func checkParens(toks []token) []Error {
	var open []token
	var errs []Error
	for _, t := range toks {
		switch t.kind {
		case tLParen:
			open = append(open, t)
		case tRParen:
			if len(open) == 0 {
				errs = append(errs, Error{"unmatched ')'", t.pos})
			} else {
				open = open[:len(open)-1]
			}
		}
	}
	for _, t := range open {
		errs = append(errs, Error{"'(' is never closed", t.pos})
	}
	return errs
}

// metricVar is the expr variable for a metric. The prefix keeps metric names
// clear of expr keywords (in, not, matches, nil…) and of our functions.
func metricVar(name string) string { return "m_" + name }

type translator struct {
	toks    []token
	known   map[string]bool
	out     strings.Builder
	posMap  []int // posMap[i]: source column of output byte i
	errs    []Error
	grammar bool           // a grammar error was reported; later ones would be noise
	blocked bool           // the output is not valid expr text
	metrics map[string]int // lower-case name -> first column
}

func (tr *translator) emit(s string, pos int) {
	tr.out.WriteString(s)
	for range len(s) {
		tr.posMap = append(tr.posMap, pos)
	}
}

// syntaxError reports a grammar error; only the first is kept because
// the ones after it are usually consequences of it.
func (tr *translator) syntaxError(pos int, format string, a ...any) {
	tr.blocked = true
	if !tr.grammar {
		tr.grammar = true
		tr.errs = append(tr.errs, Error{fmt.Sprintf(format, a...), pos})
	}
}

// error reports an independent error (arity, argument kind, unknown name).
func (tr *translator) error(pos int, format string, a ...any) {
	tr.blocked = true
	tr.errs = append(tr.errs, Error{fmt.Sprintf(format, a...), pos})
}

// stray explains a token that ended an expression where it does not belong.
func (tr *translator) stray(t token) {
	switch t.kind {
	case tComma:
		tr.syntaxError(t.pos, "unexpected ',' (commas only separate function arguments)")
	case tThen:
		tr.syntaxError(t.pos, "THEN without IF")
	case tElse:
		tr.syntaxError(t.pos, "ELSE without IF … THEN")
	case tRParen:
		tr.syntaxError(t.pos, "unexpected ')'")
	default:
		tr.syntaxError(t.pos, "unexpected %s", t.describe())
	}
}

// list rewrites comma-separated expressions (commas allowed only if
// inCall) up to the closing ')' or the end, and returns that index and how
// many items it saw.
func (tr *translator) list(i int, inCall bool) (int, int) {
	n := 1
	for {
		i = tr.expr(i, false, tEOF)
		t := tr.toks[i]
		switch {
		case t.kind == tRParen || t.kind == tEOF:
			return i, n
		case t.kind == tComma && inCall:
			tr.emit(",", t.pos)
			n++
		default:
			tr.stray(t)
		}
		i++
	}
}

// expr rewrites one expression starting at i and returns the index of the
// token that ends it: ')', ',', THEN, ELSE, the end, or (if stopAtAndOr,
// for the operand of NOT) AND/OR. want is the THEN or ELSE an enclosing IF
// waits for (tEOF: none), so that any other one is reported as stray. It
// checks that operands and operators alternate.
func (tr *translator) expr(i int, stopAtAndOr bool, want tokKind) int {
	expectOperand := true
	var prev *token // token before the pending operand, for messages
	if i > 0 {
		prev = &tr.toks[i-1]
	}
	for {
		t := tr.toks[i]
		switch t.kind {
		case tEOF, tRParen, tComma, tThen, tElse:
			// (An ELSE while waiting for THEN is left to ifThenElse, which
			// says "expected THEN".)
			if (t.kind == tThen || t.kind == tElse) && t.kind != want && want != tThen {
				tr.stray(t)
				return i
			}
			if expectOperand {
				if prev != nil {
					tr.syntaxError(t.pos, "expected a value after %s", prev.describe())
				} else {
					tr.syntaxError(t.pos, "expected a value before %s", t.describe())
				}
			}
			return i
		case tAnd, tOr:
			if stopAtAndOr {
				if expectOperand {
					tr.syntaxError(t.pos, "expected a value after %s", prev.describe())
				}
				return i
			}
			if expectOperand {
				tr.syntaxError(t.pos, "unexpected %s", t.describe())
			}
			op := " && "
			if t.kind == tOr {
				op = " || "
			}
			tr.emit(op, t.pos)
			expectOperand, prev = true, &tr.toks[i]
			i++
		case tColon:
			tr.syntaxError(t.pos, "':' is only used inside WEIGHTED_SUM(metric:weight, …)")
			expectOperand, prev = true, &tr.toks[i]
			i++
		case tPlus, tMinus, tOp:
			if expectOperand && t.kind == tOp {
				tr.syntaxError(t.pos, "unexpected %s", t.describe())
			}
			tr.emit(" "+t.out, t.pos) // unary when an operand is expected
			expectOperand, prev = true, &tr.toks[i]
			i++
		case tNot:
			if !expectOperand {
				tr.syntaxError(t.pos, "missing operator before NOT")
			}
			// NOT covers the comparison after it, not only the next value:
			// NOT a > b means NOT (a > b), as in SQL.
			tr.emit(" !(", t.pos)
			i = tr.expr(i+1, true, want)
			tr.emit(")", t.pos)
			expectOperand = false
		default: // operands
			if !expectOperand {
				tr.syntaxError(t.pos, "missing operator before %s", t.describe())
			}
			i = tr.operand(i, want)
			expectOperand = false
		}
	}
}

// operand rewrites a number, metric, call, parenthesised group or IF and
// returns the index after it.
func (tr *translator) operand(i int, want tokKind) int {
	t := tr.toks[i]
	switch t.kind {
	case tNum:
		tr.emit(" "+t.out, t.pos)
		return i + 1
	case tLParen:
		tr.emit(" (", t.pos)
		end, _ := tr.list(i+1, false)
		if tr.toks[end].kind == tEOF { // only after an earlier error
			return end
		}
		tr.emit(")", tr.toks[end].pos)
		return end + 1
	case tIf:
		return tr.ifThenElse(i, want)
	}
	// identifier
	upper := strings.ToUpper(t.text)
	fn := lookupFunction(upper)
	if tr.toks[i+1].kind == tLParen {
		if fn == nil {
			tr.error(t.pos, "unknown function %s", t.text)
		}
		return tr.call(i, fn)
	}
	if fn != nil {
		tr.error(t.pos, "%s is a function: write %s", upper, fn.usage)
		return i + 1
	}
	tr.metric(t)
	return i + 1
}

// metric rewrites a metric name, an alias becoming its metric (ROUGE is
// check_rouge_l), so a formula reads the same whichever name it uses.
func (tr *translator) metric(t token) {
	name := Canonical(t.text)
	if tr.known != nil && !tr.known[name] && builtin(name) == nil {
		// Not blocking: expr can still check the rest, so report more.
		msg := fmt.Sprintf("unknown metric %q", t.text)
		if close := closeNames(t.text, tr.known); len(close) > 0 {
			msg += fmt.Sprintf(" (close: %s)", strings.Join(close, ", "))
		}
		tr.errs = append(tr.errs, Error{msg, t.pos})
	}
	if _, seen := tr.metrics[name]; !seen {
		tr.metrics[name] = t.pos
	}
	tr.emit(" "+metricVar(name), t.pos)
}

// ifThenElse rewrites IF c THEN a ELSE b into ((c) ? (a) : (b)). The ELSE
// branch runs to the end of the enclosing group, as far right as possible.
func (tr *translator) ifThenElse(i int, want tokKind) int {
	ifPos := tr.toks[i].pos
	tr.emit(" ((", ifPos)
	j := tr.expr(i+1, false, tThen)
	if tr.toks[j].kind != tThen {
		tr.syntaxError(tr.toks[j].pos, "expected THEN, found %s (IF needs THEN … ELSE …)", tr.toks[j].describe())
		return j
	}
	tr.emit(") ? (", tr.toks[j].pos)
	j = tr.expr(j+1, false, tElse)
	if tr.toks[j].kind != tElse {
		tr.syntaxError(tr.toks[j].pos, "expected ELSE, found %s (IF … THEN needs ELSE …)", tr.toks[j].describe())
		return j
	}
	tr.emit(") : (", tr.toks[j].pos)
	j = tr.expr(j+1, false, want)
	tr.emit("))", tr.toks[j].pos)
	return j
}

// call rewrites NAME(args) at i; fn is nil for an unknown function (its
// arguments are still scanned for more errors).
func (tr *translator) call(i int, fn *function) int {
	name := tr.toks[i]
	open := i + 1
	if fn != nil {
		tr.emit(" "+fn.name, name.pos)
	}
	tr.emit("(", tr.toks[open].pos)
	if fn != nil && fn.name == "WEIGHTED_SUM" {
		return tr.weightedSum(name, open+1)
	}
	var end, n int
	if tr.toks[open+1].kind == tRParen {
		end = open + 1
	} else {
		before := tr.grammar
		end, n = tr.list(open+1, true)
		if tr.toks[end].kind == tEOF {
			return end
		}
		if tr.grammar != before {
			return end + 1 // the count is unreliable after a syntax error
		}
	}
	tr.emit(")", tr.toks[end].pos)
	if fn != nil {
		tr.checkArity(fn, name, n)
	}
	return end + 1
}

func (tr *translator) checkArity(fn *function, name token, n int) {
	switch {
	case fn.maxArgs == fn.minArgs && n != fn.minArgs:
		tr.error(name.pos, "%s takes %d arguments: %s, got %d", strings.ToUpper(name.text), fn.minArgs, fn.usage, n)
	case n < fn.minArgs:
		tr.error(name.pos, "%s needs at least %d argument: %s", strings.ToUpper(name.text), fn.minArgs, fn.usage)
	}
}

// weightedSum rewrites the metric:weight pairs starting at i into flat
// arguments "m1, w1, m2, w2". Each pair must be a metric name, ':', and an
// optionally signed number.
func (tr *translator) weightedSum(name token, i int) int {
	n := 0
	if tr.toks[i].kind == tRParen {
		tr.error(name.pos, "%s needs at least one metric:weight pair, e.g. WEIGHTED_SUM(accuracy:0.7, coherence:0.3)", strings.ToUpper(name.text))
		tr.emit(")", tr.toks[i].pos)
		return i + 1
	}
	for {
		t := tr.toks
		j, ok := i, false
		if t[j].kind == tIdent && lookupFunction(strings.ToUpper(t[j].text)) == nil {
			if t[j+1].kind != tColon {
				tr.error(t[j].pos, "WEIGHTED_SUM needs metric:weight, e.g. %s:0.5; %q has no weight", t[j].text, t[j].text)
			} else {
				k := j + 2
				sign := ""
				if t[k].kind == tPlus || t[k].kind == tMinus {
					sign = t[k].out
					k++
				}
				if t[k].kind == tNum && (t[k+1].kind == tComma || t[k+1].kind == tRParen) {
					if n > 0 {
						tr.emit(",", t[j].pos)
					}
					tr.metric(t[j])
					tr.emit(", "+sign+t[k].out, t[k].pos)
					ok, j = true, k+1
				} else {
					tr.error(t[j+2].pos, "WEIGHTED_SUM weight must be a number, e.g. %s:0.5", t[j].text)
				}
			}
		} else {
			tr.error(t[j].pos, "WEIGHTED_SUM needs metric:weight pairs, e.g. accuracy:0.5; found %s", t[j].describe())
		}
		if !ok { // skip the rest of this argument
			for depth := 0; depth > 0 || (t[j].kind != tComma && t[j].kind != tRParen && t[j].kind != tEOF); j++ {
				switch t[j].kind {
				case tLParen:
					depth++
				case tRParen:
					depth--
				}
			}
		}
		n++
		if t[j].kind == tEOF {
			return j
		}
		if t[j].kind != tComma {
			tr.emit(")", t[j].pos)
			return j + 1
		}
		i = j + 1
	}
}
