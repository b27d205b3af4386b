package agentsrc

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a Python token, as far as reading configs needs.
type tokKind int

const (
	tokName tokKind = iota
	tokString
	tokNumber
	tokOp
	tokNewline // the end of a logical line (outside brackets)
	tokEOF
)

type token struct {
	kind tokKind
	text string // the source text (for strings: the decoded value)
	// fstring marks an f-string with placeholders, which is no literal;
	// bytes marks a bytes literal.
	fstring, bytes bool
	line           int
}

// lex splits Python source into tokens. Comments, indentation and line
// continuations disappear; a newline inside brackets is no token, as in
// Python. It fails only on an unterminated string.
func lex(src string) ([]token, error) {
	var toks []token
	line, depth := 1, 0
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			if depth == 0 && len(toks) > 0 && toks[len(toks)-1].kind != tokNewline {
				toks = append(toks, token{kind: tokNewline, line: line})
			}
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i++ // a line continuation: the newline that follows is skipped as space
			if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			line++
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			t, n, err := lexString(src[i:], "", line)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			line += strings.Count(src[i:i+n], "\n")
			i += n
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			j := i + 1
			for j < len(src) && (isNumChar(src[j]) || ((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			toks = append(toks, token{kind: tokNumber, text: src[i:j], line: line})
			i = j
		case isNameStart(src[i:]):
			j := i
			for j < len(src) {
				r, size := utf8.DecodeRuneInString(src[j:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += size
			}
			name := src[i:j]
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(name) {
				t, n, err := lexString(src[j:], strings.ToLower(name), line)
				if err != nil {
					return nil, err
				}
				toks = append(toks, t)
				line += strings.Count(src[j:j+n], "\n")
				i = j + n
				continue
			}
			toks = append(toks, token{kind: tokName, text: name, line: line})
			i = j
		default:
			op := src[i : i+1]
			if i+1 < len(src) {
				switch two := src[i : i+2]; two {
				case "==", "!=", "<=", ">=", "**", "//", "->", ":=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "@=":
					op = two
				}
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth = max(depth-1, 0)
			}
			// Any other byte (a stray non-ASCII one included) is one op token.
			_, size := utf8.DecodeRuneInString(src[i:])
			if len(op) == 1 {
				op = src[i : i+size]
			}
			toks = append(toks, token{kind: tokOp, text: op, line: line})
			i += len(op)
		}
	}
	return append(toks, token{kind: tokEOF, line: line}), nil
}

func isNumChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.'
}

func isNameStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || unicode.IsLetter(r)
}

func isStringPrefix(p string) bool {
	switch strings.ToLower(p) {
	case "r", "u", "f", "b", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

// lexString reads one string literal at the start of s (its prefix already
// read, lower case) and returns it decoded, with the bytes it took.
func lexString(s, prefix string, line int) (token, int, error) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	raw := strings.Contains(prefix, "r")
	i := len(q)
	for {
		if i >= len(s) || (len(q) == 1 && s[i] == '\n') {
			return token{}, 0, fmt.Errorf("line %d: a string is not closed", line)
		}
		if s[i] == '\\' {
			i += 2
			continue
		}
		if strings.HasPrefix(s[i:], q) {
			break
		}
		i++
	}
	body := s[len(q):i]
	t := token{kind: tokString, line: line, bytes: strings.Contains(prefix, "b")}
	if !raw {
		body = unescape(body)
	}
	if strings.Contains(prefix, "f") {
		// Without placeholders an f-string is a literal; {{ and }} are braces.
		rest := strings.ReplaceAll(strings.ReplaceAll(body, "{{", ""), "}}", "")
		t.fstring = strings.ContainsAny(rest, "{}")
		body = strings.ReplaceAll(strings.ReplaceAll(body, "{{", "{"), "}}", "}")
	}
	t.text = body
	return t, i + len(q), nil
}

// unescape decodes Python's backslash escapes; one it does not know stays
// as written, as Python keeps it.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case '\n':
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(c)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+1+n <= len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}
