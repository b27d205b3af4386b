package checks

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// numericTolerance is the relative difference under which two numbers are
// equal, so "0.75", "3/4" and "0.7500000001" all match.
const numericTolerance = 1e-6

// numberRe finds a number as people write it: an optional sign and dollar
// sign, digits with optional thousands commas ("1,234" but not "1,2"), a
// decimal part, an optional simple fraction ("3/4") and a trailing percent.
var numberRe = regexp.MustCompile(`(?:[-−]\$?|\$[-−]?)?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:/\d+)?%?`)

// answerRe marks a stated final answer: "The answer is 18", "Answer: 18".
var answerRe = regexp.MustCompile(`(?i)answer\s*(?:is\s*:?|:|=)`)

// fracRe rewrites LaTeX fractions such as \frac{3}{4} or \dfrac{3}{4} to 3/4.
var fracRe = regexp.MustCompile(`\\[dt]?frac\{\s*([-−]?[\d.,]+)\s*\}\{\s*([\d.,]+)\s*\}`)

// number is a number found in text, as written and as a value.
type number struct {
	text  string
	value float64
}

func (n number) String() string { return n.text }

// numeric compares the reference's number with the answer's final number.
func numeric(response, ref string) (Result, error) {
	want, err := referenceNumber(ref)
	if err != nil {
		return Result{}, err
	}
	// A final answer sits at the end; reading only the tail keeps a huge
	// response cheap.
	response = response[max(0, len(response)-maxInputBytes):]
	got, where, ok := finalNumber(response)
	if !ok {
		return Result{0, fmt.Sprintf("expected %s, found no number", want)}, nil
	}
	score := 0.0
	if sameNumber(want.value, got.value) {
		score = 1
	}
	return Result{score, fmt.Sprintf("expected %s, found %s (%s)", want, got, where)}, nil
}

// referenceNumber reads the expected number: the one after the last "####"
// (GSM8K's "#### 72"), otherwise the last number in the reference.
func referenceNumber(ref string) (number, error) {
	ref = ref[max(0, len(ref)-maxInputBytes):]
	ref = fracRe.ReplaceAllString(ref, "$1/$2")
	if n, ok := numberAfterLast(ref, "####"); ok {
		return n, nil
	}
	if n, ok := lastNumber(ref); ok {
		return n, nil
	}
	return number{}, fmt.Errorf("checks: numeric: reference %q holds no number: %w", clip(ref, 40), ErrInvalid)
}

// finalNumber picks the answer's final number, most explicit form first: after
// "####", inside the last \boxed{}, after "answer is"/"Answer:", else the last
// number in the text. It also says where it found it, for the detail.
func finalNumber(text string) (n number, where string, ok bool) {
	text = fracRe.ReplaceAllString(text, "$1/$2")
	if n, ok := numberAfterLast(text, "####"); ok {
		return n, "after ####", true
	}
	if i := strings.LastIndex(text, `\boxed{`); i >= 0 {
		if n, ok := firstNumber(braced(text[i+len(`\boxed{`):])); ok {
			return n, `in \boxed{}`, true
		}
	}
	// Try the last few markers only: an earlier "answer" is usually a draft.
	marks := answerRe.FindAllStringIndex(text, -1)
	for k := len(marks) - 1; k >= max(0, len(marks)-maxAnswerMarks); k-- {
		if n, ok := firstNumber(firstLine(text[marks[k][1]:])); ok {
			return n, `after "answer"`, true
		}
	}
	if n, ok := lastNumber(text); ok {
		return n, "last number", true
	}
	return number{}, "", false
}

// numberAfterLast returns the first number on the line after the last marker.
func numberAfterLast(text, marker string) (number, bool) {
	i := strings.LastIndex(text, marker)
	if i < 0 {
		return number{}, false
	}
	return firstNumber(firstLine(text[i+len(marker):]))
}

// firstLine skips leading whitespace and returns the rest of that line, so
// "Answer:\n18" still finds 18 but a later paragraph is not read. The line is
// capped at maxAnswerLine bytes so many markers cannot make the search
// quadratic.
func firstLine(s string) string {
	s = strings.TrimLeftFunc(s[:min(len(s), maxAnswerLine)], unicode.IsSpace)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// maxAnswerLine bounds how far after a marker the answer may sit, and
// maxAnswerMarks how many markers are tried, latest first.
const (
	maxAnswerLine  = 200
	maxAnswerMarks = 5
)

// braced returns s up to the brace that closes an already opened one.
func braced(s string) string {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

func firstNumber(s string) (number, bool) {
	for off := 0; off < len(s); {
		loc := numberRe.FindStringIndex(s[off:])
		if loc == nil {
			break
		}
		loc[0], loc[1] = loc[0]+off, loc[1]+off
		if n, ok := parseNumber(s, loc); ok {
			return n, true
		}
		off = loc[1]
	}
	return number{}, false
}

func lastNumber(s string) (number, bool) {
	locs := numberRe.FindAllStringIndex(s, -1)
	for k := len(locs) - 1; k >= 0; k-- {
		if n, ok := parseNumber(s, locs[k]); ok {
			return n, true
		}
	}
	return number{}, false
}

// numberNoise strips what parseNumber reads separately (sign) or ignores.
var numberNoise = strings.NewReplacer("-", "", "−", "", "$", "", ",", "", "%", "")

// parseNumber turns the match s[loc[0]:loc[1]] into a value. A minus right
// after a letter or digit is a hyphen or subtraction ("COVID-19", "16-3"),
// not a sign.
func parseNumber(s string, loc []int) (number, bool) {
	tok := s[loc[0]:loc[1]]
	if prev, _ := utf8.DecodeLastRuneInString(s[:loc[0]]); loc[0] > 0 && (unicode.IsLetter(prev) || unicode.IsDigit(prev) || prev == ')') {
		tok = strings.TrimLeft(tok, "-−")
	}
	neg := strings.ContainsAny(tok, "-−")
	clean := numberNoise.Replace(tok)
	num, den, isFrac := strings.Cut(clean, "/")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return number{}, false
	}
	if isFrac {
		d, err := strconv.ParseFloat(den, 64)
		if err != nil || d == 0 || math.IsInf(d, 0) {
			return number{}, false
		}
		v /= d
	}
	if neg {
		v = -v
	}
	text := strings.ReplaceAll(tok, "−", "-")
	return number{text: text, value: v}, true
}

// sameNumber compares with a relative tolerance; exact equality covers zero.
func sameNumber(a, b float64) bool {
	return a == b || math.Abs(a-b) <= numericTolerance*math.Max(math.Abs(a), math.Abs(b))
}
