package runs

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// csvLine builds one CSV record exactly as encoding/csv's Writer (comma,
// "\n" line ends) writes it, in a buffer reused from row to row: at a
// million rows the []string a Writer takes, and a string per number,
// were most of the CSV export's allocations.
type csvLine struct {
	b     []byte
	cells int
}

func (l *csvLine) reset() { l.b, l.cells = l.b[:0], 0 }

// end is the record with its line end; valid until the next reset.
func (l *csvLine) end() []byte { return append(l.b, '\n') }

func (l *csvLine) sep() {
	if l.cells > 0 {
		l.b = append(l.b, ',')
	}
	l.cells++
}

// text appends a cell, quoted as encoding/csv quotes it.
func (l *csvLine) text(s string) {
	l.sep()
	if !csvNeedsQuotes(s) {
		l.b = append(l.b, s...)
		return
	}
	l.b = append(l.b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		l.b = append(l.b, s[:i+1]...)
		l.b = append(l.b, '"')
		s = s[i+1:]
	}
	l.b = append(append(l.b, s...), '"')
}

func (l *csvLine) int64(n int64) {
	l.sep()
	l.b = strconv.AppendInt(l.b, n, 10)
}

func (l *csvLine) bool(v bool) {
	l.sep()
	l.b = strconv.AppendBool(l.b, v)
}

// int is *p, or an empty cell when p is nil.
func (l *csvLine) int(p *int64) {
	if p == nil {
		l.sep()
		return
	}
	l.int64(*p)
}

// float is *p with prec decimals, or an empty cell when p is nil.
func (l *csvLine) float(p *float64, prec int) {
	l.sep()
	if p != nil {
		l.b = strconv.AppendFloat(l.b, *p, 'f', prec, 64)
	}
}

// csvNeedsQuotes is encoding/csv's rule: a field with a comma, quote or
// line break, one that starts with a space, or `\.` (which ends a
// PostgreSQL COPY) is quoted.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	// Four vectorised scans beat one byte loop over a long answer.
	for _, c := range []byte{',', '"', '\n', '\r'} {
		if strings.IndexByte(s, c) >= 0 {
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
