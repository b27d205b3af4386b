package runs

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestCSVLineMatchesEncodingCSV: a record built by csvLine is what
// encoding/csv's Writer writes for the same cells.
func TestCSVLineMatchesEncodingCSV(t *testing.T) {
	cells := []string{"", "plain", "a,b", `say "hi"`, "two\nlines", "cr\rhere", "crlf\r\n", " leading space", "\tleading tab",
		"\u00a0nbsp first", "\u3000ideographic", `\.`, `\.x`, "trailing space ", "é中文", "'=SUM(A1)", `""`, "\xff"}
	for _, c := range cells {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		if err := w.Write([]string{c, "x", c}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		var l csvLine
		l.text(c)
		l.text("x")
		l.text(c)
		if got := l.end(); string(got) != want.String() {
			t.Errorf("cell %q:\ngot  %q\nwant %q", c, got, want.String())
		}
	}
}

// TestCSVLineNumbers: numeric cells, empty when absent, reuse the buffer.
func TestCSVLineNumbers(t *testing.T) {
	f, n := 2.345, int64(-7)
	var l csvLine
	l.text("first")
	l.reset()
	l.float(&f, 2)
	l.float(nil, 2)
	l.int(&n)
	l.int(nil)
	l.int64(42)
	l.bool(true)
	if got, want := string(l.end()), "2.35,,-7,,42,true\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
