package agentsrc

import (
	"strconv"
	"strings"
)

// valKind is the kind of a Python expression, as far as configs need.
type valKind int

const (
	valOpaque valKind = iota // anything else: an operation, a lambda, a comprehension…
	valString
	valNumber
	valBool
	valNone
	valName // a (dotted) name: a variable, resolved later
	valList // a list, tuple or set
	valDict
	valCall
)

// value is a parsed expression.
type value struct {
	kind valKind
	// str is a string's value, a name, or a call's callee (dotted).
	str     string
	num     float64
	isInt   bool
	boolean bool
	// fstring: an f-string with placeholders (kind valOpaque).
	fstring bool
	items   []value
	keys    []value // a dict's keys, beside items, its values
	kwargs  map[string]value
	line    int
}

// maxDepth bounds nesting, so a hostile input cannot exhaust the stack.
const maxDepth = 200

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) isOp(s string) bool { t := p.peek(); return t.kind == tokOp && t.text == s }

// expr reads one expression. What it does not understand becomes opaque,
// skipped up to the end of the expression (a comma, a closing bracket, the
// end of the line, or a colon where stopColon).
func (p *parser) expr(depth int, stopColon bool) value {
	if depth > maxDepth {
		p.skipRest(stopColon)
		return value{kind: valOpaque, line: p.peek().line}
	}
	v := p.primary(depth)
	if !p.atEnd(stopColon) {
		p.skipRest(stopColon)
		return value{kind: valOpaque, line: v.line}
	}
	return v
}

// atEnd reports whether the expression ends here.
func (p *parser) atEnd(stopColon bool) bool {
	t := p.peek()
	switch t.kind {
	case tokEOF, tokNewline:
		return true
	case tokOp:
		switch t.text {
		case ",", ")", "]", "}", "=":
			return true
		case ":":
			return stopColon
		}
	}
	return false
}

// skipRest skips tokens up to the end of the expression, over brackets.
func (p *parser) skipRest(stopColon bool) {
	depth := 0
	for {
		t := p.peek()
		if t.kind == tokEOF || (t.kind == tokNewline && depth == 0) {
			return
		}
		if t.kind == tokOp {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return
				}
				depth--
			case ",", "=":
				if depth == 0 {
					return
				}
			case ":":
				if depth == 0 && stopColon {
					return
				}
			}
		}
		p.next()
	}
}

// primary reads an atom and its trailers (calls, attributes, subscripts).
func (p *parser) primary(depth int) value {
	t := p.peek()
	var v value
	switch {
	case t.kind == tokString:
		v = value{kind: valString, line: t.line}
		var b strings.Builder
		// Adjacent literals concatenate ("a" "b"), as in Python.
		for p.peek().kind == tokString {
			s := p.next()
			if s.fstring || s.bytes {
				v.kind, v.fstring = valOpaque, s.fstring
			}
			b.WriteString(s.text)
		}
		v.str = b.String()
		if v.kind != valString {
			v.str = ""
		}
		return v
	case t.kind == tokNumber || (t.kind == tokOp && t.text == "-" && p.toks[p.pos+1].kind == tokNumber):
		neg := t.kind == tokOp
		if neg {
			p.next()
		}
		n := p.next()
		v = number(n.text, n.line)
		if neg {
			v.num = -v.num
		}
		return v
	case t.kind == tokName:
		p.next()
		switch t.text {
		case "True", "False":
			return value{kind: valBool, boolean: t.text == "True", line: t.line}
		case "None":
			return value{kind: valNone, line: t.line}
		case "lambda", "not", "await", "yield":
			p.skipRest(false)
			return value{kind: valOpaque, line: t.line}
		}
		v = value{kind: valName, str: t.text, line: t.line}
	case t.kind == tokOp && (t.text == "(" || t.text == "[" || t.text == "{"):
		p.next()
		v = p.collection(t, depth)
	default:
		if t.kind != tokEOF && t.kind != tokNewline && !p.atEnd(true) {
			p.next()
		}
		return value{kind: valOpaque, line: t.line}
	}
	for {
		switch {
		case p.isOp(".") && p.toks[p.pos+1].kind == tokName && (v.kind == valName):
			p.next()
			v.str += "." + p.next().text
		case p.isOp("("):
			p.next()
			v = p.call(v, depth)
		case p.isOp("["):
			// A subscript (Agent[Ctx], x[0]): what it picks is not followed.
			p.next()
			p.closeBracket("]")
			if v.kind != valName {
				v = value{kind: valOpaque, line: v.line}
			}
		case p.isOp("."):
			p.next()
			p.next()
			v = value{kind: valOpaque, line: v.line}
		default:
			return v
		}
	}
}

func number(text string, line int) value {
	clean := strings.ReplaceAll(text, "_", "")
	if n, err := strconv.ParseInt(clean, 0, 64); err == nil {
		return value{kind: valNumber, num: float64(n), isInt: true, line: line}
	}
	if f, err := strconv.ParseFloat(clean, 64); err == nil {
		return value{kind: valNumber, num: f, line: line}
	}
	return value{kind: valOpaque, line: line}
}

// closeBracket skips to the bracket that closes the one just read.
func (p *parser) closeBracket(closing string) {
	depth := 0
	for {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			return
		case t.kind == tokOp && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == tokOp && (t.text == ")" || t.text == "]" || t.text == "}"):
			if depth == 0 {
				return
			}
			depth--
		}
	}
}

// collection reads a parenthesised expression, tuple, list, dict or set
// after its opening bracket.
func (p *parser) collection(open token, depth int) value {
	closing := map[string]string{"(": ")", "[": "]", "{": "}"}[open.text]
	v := value{kind: valList, line: open.line}
	if open.text == "{" {
		v.kind = valDict
	}
	single, commas := true, 0
	for !p.isOp(closing) {
		if p.peek().kind == tokEOF {
			return value{kind: valOpaque, line: open.line}
		}
		if p.isOp("*") || p.isOp("**") {
			p.next()
			p.expr(depth+1, open.text == "{")
			v.kind = valOpaque
		} else {
			item := p.expr(depth+1, open.text == "{")
			if p.isOp(":") && open.text == "{" {
				p.next()
				v.keys = append(v.keys, item)
				item = p.expr(depth+1, true)
			} else if open.text == "{" {
				v.kind = valList // a set
			}
			v.items = append(v.items, item)
		}
		if p.isOp(",") {
			p.next()
			commas++
			continue
		}
		if !p.isOp(closing) {
			// for/if of a comprehension, or anything unread: skip it whole.
			p.closeBracket(closing)
			return value{kind: valOpaque, line: open.line}
		}
	}
	p.next()
	single = open.text == "(" && commas == 0 && len(v.items) == 1
	if single {
		return v.items[0]
	}
	if v.kind == valDict && len(v.keys) != len(v.items) {
		v.kind = valOpaque
	}
	return v
}

// call reads a call's arguments after "(".
func (p *parser) call(callee value, depth int) value {
	v := value{kind: valCall, str: callee.str, line: callee.line, kwargs: map[string]value{}}
	if callee.kind != valName {
		v.str = ""
	}
	for !p.isOp(")") {
		if p.peek().kind == tokEOF {
			return value{kind: valOpaque, line: callee.line}
		}
		switch {
		case p.peek().kind == tokName && p.toks[p.pos+1].kind == tokOp && p.toks[p.pos+1].text == "=":
			name := p.next().text
			p.next()
			v.kwargs[name] = p.expr(depth+1, false)
		case p.isOp("*") || p.isOp("**"):
			p.next()
			p.expr(depth+1, false)
		default:
			v.items = append(v.items, p.expr(depth+1, false))
		}
		if p.isOp(",") {
			p.next()
			continue
		}
		if !p.isOp(")") {
			p.closeBracket(")")
			return value{kind: valOpaque, line: callee.line}
		}
	}
	p.next()
	return v
}
