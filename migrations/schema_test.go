package migrations_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	mpgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	msqlite "github.com/golang-migrate/migrate/v4/database/sqlite" // also registers modernc's "sqlite" driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"tribunal/migrations"
	"tribunal/store/storetest"
)

// TestDialectsHaveSameSchema runs every migration in sqlite/ and in postgres/
// (whatever versions exist) on an empty database each, and compares what they
// build. The PostgreSQL half needs TEST_DATABASE_URL, like the store tests.
//
// Compared, per dialect:
//   - the names of the tables and views (golang-migrate's own schema_migrations
//     left out);
//   - each table's column names;
//   - each column's coarse type class (see sqliteClass and postgresClass:
//     int, real, text, bool, time, blob) and whether it is NOT NULL. A primary
//     key column counts as NOT NULL on SQLite too, where PRAGMA table_info
//     reports INTEGER PRIMARY KEY as nullable though it never holds NULL;
//   - the names of the indexes created with CREATE INDEX, and their tables
//     (not those PostgreSQL or SQLite create for PRIMARY KEY and UNIQUE, whose
//     names differ by design).
//
// Not compared: defaults, CHECK constraints, foreign keys, triggers, index
// columns, and views' column types.
//
// Known, intended differences are listed in schemaExceptions.
func TestDialectsHaveSameSchema(t *testing.T) {
	lite := sqliteSchema(t)
	if len(lite.columns) == 0 {
		t.Fatal("the SQLite migrations created no tables")
	}
	pg := postgresSchema(t)
	t.Logf("sqlite: %d tables and views, %d indexes; postgres: %d tables and views, %d indexes",
		len(lite.columns), len(lite.indexes), len(pg.columns), len(pg.indexes))

	var diffs []string
	for _, table := range sortedKeys(lite.columns, pg.columns) {
		lc, lok := lite.columns[table]
		pc, pok := pg.columns[table]
		switch {
		case !pok:
			diffs = append(diffs, fmt.Sprintf("table %s: only in sqlite", table))
			continue
		case !lok:
			diffs = append(diffs, fmt.Sprintf("table %s: only in postgres", table))
			continue
		}
		for _, name := range sortedKeys(lc, pc) {
			l, lok := lc[name]
			p, pok := pc[name]
			where := table + "." + name
			switch {
			case !pok:
				diffs = append(diffs, fmt.Sprintf("column %s: only in sqlite", where))
			case !lok:
				diffs = append(diffs, fmt.Sprintf("column %s: only in postgres", where))
			case l != p:
				if why, ok := schemaExceptions[where]; ok {
					t.Logf("column %s differs as intended (sqlite %s, postgres %s): %s", where, l, p, why)
					continue
				}
				diffs = append(diffs, fmt.Sprintf("column %s: sqlite %s, postgres %s", where, l, p))
			}
		}
	}
	for _, name := range sortedKeys(lite.indexes, pg.indexes) {
		l, p := lite.indexes[name], pg.indexes[name]
		switch {
		case p == "":
			diffs = append(diffs, fmt.Sprintf("index %s (on %s): only in sqlite", name, l))
		case l == "":
			diffs = append(diffs, fmt.Sprintf("index %s (on %s): only in postgres", name, p))
		case l != p:
			diffs = append(diffs, fmt.Sprintf("index %s: on %s in sqlite, on %s in postgres", name, l, p))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("the SQLite and PostgreSQL migrations build different schemas (%d differences):\n  %s\n"+
			"Fix the migration that differs, or list an intended difference in schemaExceptions with the reason.",
			len(diffs), strings.Join(diffs, "\n  "))
	}
}

// schemaExceptions lists columns ("table.column") whose type class or
// nullability differ between the dialects on purpose, each with the reason.
var schemaExceptions = map[string]string{}

// column is what the test compares of one column.
type column struct {
	class   string // coarse type class, or the declared type when it has none
	notNull bool
}

func (c column) String() string {
	if c.notNull {
		return c.class + " NOT NULL"
	}
	return c.class + " NULL"
}

// schema is what one dialect's migrations built.
type schema struct {
	columns map[string]map[string]column // table or view → column name → column
	indexes map[string]string            // explicit index name → its table
}

// sqliteClass maps a declared SQLite column type to its class. SQLite only
// knows affinities, so this reads the declared name the migration wrote.
func sqliteClass(declared string) string {
	d := strings.ToUpper(strings.TrimSpace(declared))
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = strings.TrimSpace(d[:i])
	}
	switch {
	case d == "BOOLEAN" || d == "BOOL":
		return "bool"
	case d == "DATETIME" || d == "TIMESTAMP" || d == "DATE":
		return "time"
	case strings.Contains(d, "INT"): // SQLite's own first affinity rule
		return "int"
	case strings.Contains(d, "CHAR") || strings.Contains(d, "CLOB") || strings.Contains(d, "TEXT"):
		return "text"
	case d == "BLOB":
		return "blob"
	case strings.Contains(d, "REAL") || strings.Contains(d, "FLOA") || strings.Contains(d, "DOUB") ||
		d == "NUMERIC" || d == "DECIMAL":
		return "real"
	}
	return "sqlite:" + declared
}

// postgresClass maps information_schema.columns.data_type to its class.
// JSON and JSONB count as text: SQLite keeps JSON in TEXT columns (with a
// json_valid CHECK).
func postgresClass(dataType string) string {
	switch dataType {
	case "smallint", "integer", "bigint":
		return "int"
	case "text", "character varying", "character", "json", "jsonb":
		return "text"
	case "real", "double precision", "numeric":
		return "real"
	case "boolean":
		return "bool"
	case "timestamp with time zone", "timestamp without time zone", "date":
		return "time"
	case "bytea":
		return "blob"
	}
	return "postgres:" + dataType
}

func sqliteSchema(t *testing.T) schema {
	t.Helper()
	path := filepath.Join(t.TempDir(), "schema.db")
	db := openDB(t, "sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	drv, err := msqlite.WithInstance(db, &msqlite.Config{})
	if err != nil {
		t.Fatalf("sqlite migrations driver: %v", err)
	}
	migrateUp(t, "sqlite", drv)

	db = openDB(t, "sqlite", "file:"+path)
	s := schema{columns: map[string]map[string]column{}, indexes: map[string]string{}}
	for _, name := range queryStrings(t, db, `SELECT name FROM sqlite_master
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name <> 'schema_migrations'`) {
		cols := map[string]column{}
		rows, err := db.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, name)
		if err != nil {
			t.Fatalf("sqlite columns of %s: %v", name, err)
		}
		for rows.Next() {
			var col, typ string
			var notNull, pk int
			if err := rows.Scan(&col, &typ, &notNull, &pk); err != nil {
				t.Fatalf("sqlite columns of %s: %v", name, err)
			}
			cols[col] = column{class: sqliteClass(typ), notNull: notNull != 0 || pk > 0}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatalf("sqlite columns of %s: %v", name, err)
		}
		s.columns[name] = cols
	}
	// sql is NULL for the indexes SQLite makes for PRIMARY KEY and UNIQUE.
	rows, err := db.Query(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatalf("sqlite indexes: %v", err)
	}
	scanPairs(t, rows, s.indexes)
	return s
}

func postgresSchema(t *testing.T) schema {
	t.Helper()
	url := storetest.PostgresURL(t) // skips without TEST_DATABASE_URL (fails under CI)
	db := openDB(t, "pgx", url)
	drv, err := mpgx.WithInstance(db, &mpgx.Config{})
	if err != nil {
		t.Fatalf("postgres migrations driver: %v", err)
	}
	migrateUp(t, "postgres", drv)

	db = openDB(t, "pgx", url)
	s := schema{columns: map[string]map[string]column{}, indexes: map[string]string{}}
	for _, name := range queryStrings(t, db, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type IN ('BASE TABLE', 'VIEW') AND table_name <> 'schema_migrations'`) {
		s.columns[name] = map[string]column{}
	}
	rows, err := db.Query(`SELECT table_name, column_name, data_type, is_nullable = 'NO'
		FROM information_schema.columns WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatalf("postgres columns: %v", err)
	}
	for rows.Next() {
		var table, col, typ string
		var notNull bool
		if err := rows.Scan(&table, &col, &typ, &notNull); err != nil {
			t.Fatalf("postgres columns: %v", err)
		}
		if cols, ok := s.columns[table]; ok {
			cols[col] = column{class: postgresClass(typ), notNull: notNull}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatalf("postgres columns: %v", err)
	}
	// Leave out the indexes behind PRIMARY KEY, UNIQUE and EXCLUDE constraints.
	rows, err = db.Query(`SELECT i.relname, r.relname FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class r ON r.oid = x.indrelid
		WHERE r.relnamespace = current_schema()::regnamespace
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u', 'x'))`)
	if err != nil {
		t.Fatalf("postgres indexes: %v", err)
	}
	scanPairs(t, rows, s.indexes)
	return s
}

func openDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// migrateUp applies every migration of the dialect's folder; it closes the
// driver's database handle.
func migrateUp(t *testing.T, dialect string, drv database.Driver) {
	t.Helper()
	src, err := iofs.New(migrations.FS, dialect)
	if err != nil {
		t.Fatalf("%s migrations source: %v", dialect, err)
	}
	m, err := migrate.NewWithInstance("iofs", src, dialect, drv)
	if err != nil {
		t.Fatalf("%s migrations: %v", dialect, err)
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		t.Fatalf("%s migrate up: %v", dialect, err)
	}
}

func queryStrings(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out = append(out, s)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// scanPairs reads (index, table) rows, leaving out golang-migrate's table.
func scanPairs(t *testing.T, rows *sql.Rows, into map[string]string) {
	t.Helper()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if v != "schema_migrations" {
			into[k] = v
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
}

// sortedKeys returns the keys of a and b together, sorted, once each.
func sortedKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
