package importer

import (
	"bytes"
	"fmt"
	"strings"
)

// parseJSONL reads one task object per line, with the same loose field names
// as CSV (so GSM8K's {question, answer} imports as question and reference).
// Structured values are allowed where they make sense: turns, tags, checks
// and metadata as JSON lists/objects, reference as a list (first one wins).
func parseJSONL(data []byte) ([]row, Errors) {
	return eachJSONRecord(data, func(obj *value, b *builder) { b.setAll(obj) })
}

// eachJSONRecord calls fn for every object of a JSON-lines file (Row is the
// line number) or, when the whole file is one JSON array, of that array (Row
// is the 1-based index). Blank lines are skipped.
func eachJSONRecord(data []byte, fn func(obj *value, b *builder)) ([]row, Errors) {
	var rows []row
	var errs Errors
	record := func(obj *value, num int) {
		b := newBuilder(num, obj.line, obj.col)
		if obj.kind != object {
			b.fail(obj, "", "must be a JSON object, not %s", obj.describe())
		} else {
			fn(obj, b)
		}
		rows, errs = b.done(rows, errs)
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		arr, err := parseJSONValue(data, 1)
		if err != nil {
			return nil, Errors{{Message: fmt.Sprintf("not valid JSON: %v", err)}}
		}
		for i, it := range arr.items {
			record(it, i+1)
		}
		return rows, errs
	}
	lineNo := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			rows = append(rows, row{num: lineNo, line: lineNo, skip: true})
			continue
		}
		if len(line) > MaxRowSize {
			errs = append(errs, RowError{Row: lineNo, Line: lineNo, Message: fmt.Sprintf("the line is %d bytes, more than the %d MB limit", len(line), MaxRowSize>>20)})
			continue
		}
		obj, err := parseJSONValue(line, lineNo)
		if err != nil {
			errs = append(errs, RowError{Row: lineNo, Line: lineNo, Message: fmt.Sprintf("not valid JSON: %v", stripLine(err, lineNo))})
			continue
		}
		record(obj, lineNo)
	}
	return rows, errs
}

// stripLine drops the "line N: " prefix of a one-line document's error: the
// RowError already says which line.
func stripLine(err error, line int) string {
	return strings.TrimPrefix(err.Error(), fmt.Sprintf("line %d: ", line))
}
