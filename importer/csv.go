package importer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"tribunal/spreadsheet"
)

// parseCSV reads a CSV with a header row (the seed 000/001 columns or any
// loosely matching names, see fieldAliases). Unknown columns go to Metadata,
// empty cells count as not given, tags split on , or ;, and turns, checks and
// metadata cells may hold JSON. The delimiter is a comma, or the semicolon or
// tab the header uses (Excel exports), or tab for .tsv; an Excel "sep=;"
// first line is honoured. A quoting error stops the read: the reader cannot
// tell where the broken row ends, so later rows are not checked.
func parseCSV(data []byte, tsv bool) ([]row, Errors) {
	return eachCSVRecord(data, tsv, taskHeader, exported, func(obj *value, b *builder) { b.setAll(obj) })
}

// exported says whether a task CSV's header is the one Tribunal's export
// writes (csvColumns), whose cells the export defused: those read back as
// written, where a hand-made file's '-h or '=' is text to keep.
func exported(keys []string) bool {
	return slices.Equal(keys, csvColumns)
}

// taskHeader checks a task file's header: no field twice, and a question.
func taskHeader(keys []string, line int) *RowError {
	byField := map[string]int{}
	hasQuestion := false
	for i, k := range keys {
		f := fieldOf(k)
		if f == "" {
			f = "metadata:" + k
		}
		if j, dup := byField[f]; dup {
			return &RowError{Line: line, Field: strings.TrimPrefix(f, "metadata:"),
				Message: fmt.Sprintf("columns %d (%q) and %d (%q) are the same field", j+1, keys[j], i+1, k)}
		}
		byField[f] = i
		hasQuestion = hasQuestion || f == "question" || f == "turns"
	}
	if !hasQuestion {
		return &RowError{Line: line, Field: "question",
			Message: "no question column (name one question, prompt, input, query or query_text)"}
	}
	return nil
}

// eachCSVRecord reads a CSV with a header row (see parseCSV for the
// delimiter), checks the header's names with header (a problem there stops
// the read), and calls fn with every non-blank record as an object of the
// header's names and the cells' text; when defused says the header's file
// defused its formula cells (spreadsheet.Defuse), as they were written.
func eachCSVRecord(data []byte, tsv bool, header func(keys []string, line int) *RowError, defused func(keys []string) bool,
	fn func(obj *value, b *builder)) ([]row, Errors) {
	headerLine := 1
	comma := ','
	if first, rest, ok := bytes.Cut(data, []byte("\n")); ok || len(first) > 0 {
		s := strings.TrimSpace(string(first))
		if len(s) == 5 && strings.HasPrefix(strings.ToLower(s), "sep=") {
			comma, data, headerLine = rune(s[4]), rest, 2
		} else if tsv {
			comma = '\t'
		} else {
			comma = sniffComma(s)
		}
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = comma
	r.FieldsPerRecord = -1 // checked per row, so a short row is a row error and not the end of the file
	names, err := r.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, Errors{csvError(err, 0, headerLine-1)}
	}
	keys := make([]string, len(names))
	for i, h := range names {
		keys[i] = strings.TrimSpace(h)
		if keys[i] == "" {
			keys[i] = fmt.Sprintf("column_%d", i+1)
		}
	}
	if e := header(keys, headerLine); e != nil {
		return nil, Errors{*e}
	}
	restore := defused(keys)

	var rows []row
	var errs Errors
	for num := 1; ; num++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, csvError(err, num, headerLine-1))
			break
		}
		line, col := r.FieldPos(0)
		line += headerLine - 1
		if blank(rec) {
			rows = append(rows, row{num: num, line: line, skip: true})
			continue
		}
		b := newBuilder(num, line, col)
		// Trailing empty cells (a spreadsheet's stray commas) are harmless;
		// anything else off the header's width means the columns are shifted.
		if len(rec) > len(keys) && blank(rec[len(keys):]) {
			rec = rec[:len(keys)]
		}
		if len(rec) != len(keys) {
			b.fail(nil, "", "has %d fields, the header has %d", len(rec), len(keys))
			rows, errs = b.done(rows, errs)
			continue
		}
		obj := &value{kind: object, line: line, col: col}
		for i, cell := range rec {
			if restore {
				cell = spreadsheet.Restore(cell)
			}
			v := newScalar(cell, true, 0)
			v.line, v.col = r.FieldPos(i)
			v.line += headerLine - 1
			obj.add(keys[i], v)
		}
		fn(obj, b)
		rows, errs = b.done(rows, errs)
	}
	return rows, errs
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// sniffComma picks the delimiter the header line uses most, outside quotes.
func sniffComma(header string) rune {
	counts := map[rune]int{}
	quoted := false
	for _, c := range header {
		switch c {
		case '"':
			quoted = !quoted
		case ',', ';', '\t':
			if !quoted {
				counts[c]++
			}
		}
	}
	best := ','
	for _, c := range []rune{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

func csvError(err error, num, offset int) RowError {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return RowError{Row: num, Line: pe.Line + offset, Message: fmt.Sprintf("column %d: %v", pe.Column, pe.Err)}
	}
	return RowError{Row: num, Message: err.Error()}
}
