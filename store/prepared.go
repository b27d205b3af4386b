package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// stmtCache holds SQLite statements prepared once on the database's single
// connection: the pure-Go SQLite parses a statement anew on every run, and
// for the writes and claims made once per call, parsing cost more than
// running. PostgreSQL needs none of this: pgx caches prepared statements
// per connection by itself.
type stmtCache struct {
	db    *sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// maxPrepared bounds the cache; the texts that reach it are few and fixed.
const maxPrepared = 64

func (c *stmtCache) get(text string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stmts[text]
}

// prepare makes text a prepared statement. It must be called outside any
// transaction: preparing takes the single connection. The cache is not
// locked meanwhile: a transaction holding the connection may need it to
// finish.
func (c *stmtCache) prepare(ctx context.Context, text string) error {
	if c == nil || c.get(text) != nil {
		return nil
	}
	c.mu.RLock()
	full := len(c.stmts) >= maxPrepared
	c.mu.RUnlock()
	if full {
		return nil
	}
	stmt, err := c.db.PrepareContext(ctx, text)
	if err != nil {
		return fmt.Errorf("store: prepare: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmts[text] != nil || len(c.stmts) >= maxPrepared {
		return stmt.Close() // another goroutine was first, or the cache filled up
	}
	c.stmts[text] = stmt
	return nil
}

// prepareHot prepares on SQLite the slot count and the engine's two claims:
// a target's items to answer, and the items waiting for a judge (each
// phase counts its own calls and names the status it claims from, so has
// its own text).
func (s *Store) prepareHot(ctx context.Context, sqlDB *sql.DB) error {
	if s.dialect != SQLite {
		return nil
	}
	s.prepared = &stmtCache{db: sqlDB, stmts: map[string]*sql.Stmt{}}
	texts := []string{"SELECT " + slotInflightSQL}
	pos := 0
	for _, p := range []ClaimParams{
		{From: ItemNew, To: ItemInProgress, TargetID: 1},
		{From: ItemWaitingForJudge, To: ItemJudging, JudgePos: &pos},
	} {
		text, _ := s.claimSQL(p, "?", "0", 1)
		texts = append(texts, text)
	}
	for _, text := range texts {
		if err := s.prepared.prepare(ctx, text); err != nil {
			return err
		}
	}
	return nil
}

// stmt returns text's prepared statement bound to the caller's transaction
// (if any), or nil when text was not prepared.
func (s *Store) stmt(ctx context.Context, text string) *sql.Stmt {
	stmt := s.prepared.get(text)
	if stmt == nil {
		return nil
	}
	if tx, ok := s.conn(ctx).Statement.ConnPool.(*sql.Tx); ok {
		return tx.StmtContext(ctx, stmt)
	}
	return stmt
}

// rawScan runs a query and scans its rows into dest, with text's prepared
// statement if there is one. It is Raw(...).Scan for the statements run
// once per call, without GORM's statement building or its Scan, which
// renders every statement with its values into a string for a logger,
// however discarded. args are plain values: no slices to expand.
func (s *Store) rawScan(ctx context.Context, dest any, text string, args ...any) error {
	rows, err := s.rawQuery(ctx, text, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		return rows.Err()
	}
	// ScanRows scans the current row and, into a slice, the rest.
	if err := s.conn(ctx).ScanRows(rows, dest); err != nil {
		return err
	}
	return rows.Err()
}

// rawQuery runs a query, with text's prepared statement if there is one,
// and returns its rows for the caller to scan and close.
func (s *Store) rawQuery(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if stmt := s.stmt(ctx, text); stmt != nil {
		return stmt.QueryContext(ctx, args...)
	}
	return s.conn(ctx).Statement.ConnPool.QueryContext(ctx, s.placeholders(text), args...)
}

// rawExec runs a statement, as Exec does, with text's prepared statement if
// there is one, and reports the rows it affected.
func (s *Store) rawExec(ctx context.Context, text string, args ...any) (int64, error) {
	stmt := s.stmt(ctx, text)
	if stmt == nil {
		res := s.conn(ctx).Exec(text, args...)
		return res.RowsAffected, res.Error
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// placeholders numbers a statement's ? placeholders for PostgreSQL ($1, $2,
// …); the statements given contain no other question marks.
func (s *Store) placeholders(text string) string {
	if s.dialect != Postgres {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 32)
	n := 0
	for _, r := range text {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	return b.String()
}
