package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// rowScanner is a row being read: *sql.Rows and pgx.Rows both are.
type rowScanner interface {
	Scan(dest ...any) error
}

// exportReader runs an export's batch reads. On PostgreSQL it holds one
// connection for the whole export and reads through pgx itself: binary
// rows scanned by pgx's typed plans, where database/sql would box every
// value and convert it again by reflection (a third of the Go side's time
// at a million rows). Elsewhere it reads through GORM.
type exportReader struct {
	s  *Store
	pg *pgx.Conn // nil on SQLite
}

// withExportReader calls fn with a reader for s's database.
func (s *Store) withExportReader(ctx context.Context, fn func(exportReader) error) error {
	if s.dialect != Postgres {
		return fn(exportReader{s: s})
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: export connection: %w", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: export connection: %w", err)
	}
	defer conn.Close()
	var ferr error
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: export connection: %T is no pgx connection", dc)
		}
		ferr = fn(exportReader{s: s, pg: sc.Conn()})
		return nil
	})
	if err != nil {
		return err
	}
	return ferr
}

// each runs query, written with ? placeholders, and calls scan on each row.
func (r exportReader) each(ctx context.Context, query string, args []any, scan func(rowScanner) error) error {
	if r.pg == nil {
		rows, err := r.s.conn(ctx).Raw(query, args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanRows(rows, scan)
	}
	rows, err := r.pg.Query(ctx, numbered(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return scanRows(rows, scan)
}

// scanRows calls scan on each row of rows (*sql.Rows or pgx.Rows).
func scanRows(rows interface {
	rowScanner
	Next() bool
	Err() error
}, scan func(rowScanner) error) error {
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// numbered turns a query's ? placeholders into PostgreSQL's $1, $2, ….
func numbered(query string) string {
	var b strings.Builder
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		query = query[i+1:]
	}
}

// byIDs runs fn over ids as a WHERE clause on column: a range (BETWEEN)
// when the ids are dense, as an export's batch is, which PostgreSQL reads
// in one index scan where a list of a thousand ids costs a probe each and
// a slow plan; else lists of at most 1,000 (IN on SQLite, = ANY on
// PostgreSQL). A range may bring rows of ids not asked for: fn keeps only
// those keep accepts.
func (r exportReader) byIDs(column string, ids []int64, fn func(where string, args []any, keep func(int64) bool) error) error {
	if len(ids) >= 100 {
		lo, hi := slices.Min(ids), slices.Max(ids)
		if hi-lo < 2*int64(len(ids)) {
			want := make([]bool, hi-lo+1)
			for _, id := range ids {
				want[id-lo] = true
			}
			return fn(column+" BETWEEN ? AND ?", []any{lo, hi}, func(id int64) bool { return id >= lo && id <= hi && want[id-lo] })
		}
	}
	in := column + " IN ?"
	if r.pg != nil {
		in = column + " = ANY(?)"
	}
	return inChunks(ids, func(part []int64) error {
		return fn(in, []any{part}, func(int64) bool { return true })
	})
}
