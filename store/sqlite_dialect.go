package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"
	modernc "modernc.org/sqlite"
)

// sqliteDialector is GORM's SQLite dialect over modernc.org/sqlite, the
// pure-Go driver golang-migrate uses too. GORM's own SQLite driver links
// the C SQLite of mattn/go-sqlite3, which made every first build compile C
// (and need cgo) for a driver Tribunal never opened. The schema is
// golang-migrate's, so GORM's migrator here is only its generic one.
type sqliteDialector struct{ dsn string }

func (sqliteDialector) Name() string { return "sqlite" }

// Initialize opens the pool and registers GORM's callbacks with RETURNING,
// which every SQLite modernc ships (3.35 and later) understands.
func (d sqliteDialector) Initialize(db *gorm.DB) error {
	if db.ConnPool == nil {
		conn, err := sql.Open("sqlite", d.dsn)
		if err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		db.ConnPool = conn
	}
	callbacks.RegisterDefaultCallbacks(db, &callbacks.Config{
		CreateClauses:        []string{"INSERT", "VALUES", "ON CONFLICT", "RETURNING"},
		UpdateClauses:        []string{"UPDATE", "SET", "FROM", "WHERE", "RETURNING"},
		DeleteClauses:        []string{"DELETE", "FROM", "WHERE", "RETURNING"},
		LastInsertIDReversed: true,
	})
	db.ClauseBuilders["LIMIT"] = sqliteLimit
	db.ClauseBuilders["FOR"] = sqliteLocking
	return nil
}

// sqliteLimit writes LIMIT -1 before an OFFSET without a limit: SQLite
// has no OFFSET on its own.
func sqliteLimit(c clause.Clause, b clause.Builder) {
	l, ok := c.Expression.(clause.Limit)
	if !ok {
		c.Build(b)
		return
	}
	n := -1
	if l.Limit != nil && *l.Limit >= 0 {
		n = *l.Limit
	}
	if n < 0 && l.Offset <= 0 {
		return
	}
	b.WriteString("LIMIT " + strconv.Itoa(n))
	if l.Offset > 0 {
		b.WriteString(" OFFSET " + strconv.Itoa(l.Offset))
	}
}

// sqliteLocking drops FOR UPDATE: SQLite locks the whole database per
// write transaction, and Tribunal's one connection serialises them.
func sqliteLocking(c clause.Clause, b clause.Builder) {
	if _, ok := c.Expression.(clause.Locking); ok {
		return
	}
	c.Build(b)
}

func (d sqliteDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return migrator.Migrator{Config: migrator.Config{DB: db, Dialector: d, CreateIndexAfterCreateTable: true}}
}

func (sqliteDialector) DataTypeOf(f *schema.Field) string {
	switch f.DataType {
	case schema.Bool:
		return "numeric"
	case schema.Int, schema.Uint:
		if f.AutoIncrement {
			return "integer PRIMARY KEY AUTOINCREMENT"
		}
		return "integer"
	case schema.Float:
		return "real"
	case schema.String:
		return "text"
	case schema.Time:
		return "datetime"
	case schema.Bytes:
		return "blob"
	}
	return string(f.DataType)
}

// DefaultValueOf lets SQLite number a row whose key is left out.
func (sqliteDialector) DefaultValueOf(f *schema.Field) clause.Expression {
	if f.AutoIncrement {
		return clause.Expr{SQL: "NULL"}
	}
	return clause.Expr{SQL: "DEFAULT"}
}

func (sqliteDialector) BindVarTo(w clause.Writer, _ *gorm.Statement, _ any) { w.WriteByte('?') }

// QuoteTo quotes each dotted part of a name as a standard SQL identifier.
func (sqliteDialector) QuoteTo(w clause.Writer, name string) {
	for i, part := range strings.Split(name, ".") {
		if i > 0 {
			w.WriteByte('.')
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(part, `"`, `""`))
		w.WriteByte('"')
	}
}

func (sqliteDialector) Explain(sql string, vars ...any) string {
	return logger.ExplainSQL(sql, nil, `'`, vars...)
}

func (sqliteDialector) SavePoint(tx *gorm.DB, name string) error {
	return tx.Exec("SAVEPOINT " + name).Error
}

func (sqliteDialector) RollbackTo(tx *gorm.DB, name string) error {
	return tx.Exec("ROLLBACK TO SAVEPOINT " + name).Error
}

// Translate maps modernc's constraint errors to GORM's, which the store
// turns into conflicts.
func (sqliteDialector) Translate(err error) error {
	var se *modernc.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case 1555, 2067: // SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE
			return gorm.ErrDuplicatedKey
		case 787: // SQLITE_CONSTRAINT_FOREIGNKEY
			return gorm.ErrForeignKeyViolated
		}
	}
	return err
}
