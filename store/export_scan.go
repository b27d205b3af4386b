package store

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// The export scans a batch's values into buffers it keeps from batch to
// batch instead of a string and a pointer per value, which were most of
// its allocations at a million rows (23 million, 1.7 GB, and a second of
// GC). Text goes into one textBuf, each value a span of it, and becomes
// one string per query; nullable numbers go beside their item, which
// points at them. Both destination types scan from pgx (its BytesScanner,
// Int64Scanner and Float64Scanner plans, without copying the value) and
// from database/sql (sql.Scanner).

// span is where one text value lies in its query's textBuf.
type span struct {
	start, end int
	null       bool
}

// in is the span's text in all, the query's text as one string.
func (s span) in(all string) string { return all[s.start:s.end] }

// textBuf holds the text a query's rows scanned.
type textBuf struct{ b []byte }

func (t *textBuf) reset() { t.b = t.b[:0] }

// String is the whole text: one allocation for all the query's values.
func (t *textBuf) String() string { return string(t.b) }

// spanDest scans a text column into buf, recording where in sp.
type spanDest struct {
	buf *textBuf
	sp  *span
}

// to points d at the next row's span.
func (d *spanDest) to(sp *span) *spanDest {
	d.sp = sp
	return d
}

// ScanBytes is pgx's: v is the value as it came, nil for NULL.
func (d *spanDest) ScanBytes(v []byte) error {
	start := len(d.buf.b)
	d.buf.b = append(d.buf.b, v...)
	d.mark(start, v == nil)
	return nil
}

// Scan is database/sql's.
func (d *spanDest) Scan(src any) error {
	start := len(d.buf.b)
	switch v := src.(type) {
	case nil:
	case string:
		d.buf.b = append(d.buf.b, v...)
	case []byte:
		d.buf.b = append(d.buf.b, v...)
	default:
		return fmt.Errorf("store: scan %T into text", src)
	}
	d.mark(start, src == nil)
	return nil
}

func (d *spanDest) mark(start int, null bool) {
	*d.sp = span{start: start, end: len(d.buf.b), null: null}
}

// nullNumber scans a nullable number column: *dst points at *val, which
// holds the value, or is nil for NULL.
type nullNumber[T int | int64 | float64] struct {
	dst **T
	val *T
}

// to points n at the next row's field and its storage.
func (n *nullNumber[T]) to(dst **T, val *T) *nullNumber[T] {
	n.dst, n.val = dst, val
	return n
}

func (n *nullNumber[T]) set(valid bool, v T) {
	if !valid {
		*n.dst = nil
		return
	}
	*n.val = v
	*n.dst = n.val
}

// ScanInt64 is pgx's, for integer columns.
func (n *nullNumber[T]) ScanInt64(v pgtype.Int8) error {
	n.set(v.Valid, T(v.Int64))
	return nil
}

// ScanFloat64 is pgx's, for double precision columns.
func (n *nullNumber[T]) ScanFloat64(v pgtype.Float8) error {
	n.set(v.Valid, T(v.Float64))
	return nil
}

// Scan is database/sql's.
func (n *nullNumber[T]) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		n.set(false, 0)
	case int64:
		n.set(true, T(v))
	case float64:
		n.set(true, T(v))
	default:
		return fmt.Errorf("store: scan %T into a number", src)
	}
	return nil
}
