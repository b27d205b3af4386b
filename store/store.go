// Package store owns every database query of Tribunal, on SQLite (the embedded
// default) and PostgreSQL (for several worker processes).
package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	mpgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	msqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver for migrations
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"tribunal/egress"
	"tribunal/migrations"
	"tribunal/secret"
)

// Sentinel errors that handlers map to HTTP status codes.
var (
	// ErrNotFound means the requested row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict means the change clashes with existing data (a unique name, an active run).
	ErrConflict = errors.New("conflict")
)

// ValidationError names the input field that is wrong and why.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ConflictError says what clashed; it matches ErrConflict.
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func conflict(format string, args ...any) error {
	return &ConflictError{Message: fmt.Sprintf(format, args...)}
}

// NotFoundError names the missing row; it matches ErrNotFound.
type NotFoundError struct {
	What string
	ID   any
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %v not found", e.What, e.ID) }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Dialect names the database in use.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Config says which database to open.
type Config struct {
	// DatabaseURL selects PostgreSQL when it starts with postgres:// or postgresql://.
	DatabaseURL string
	// DataDir holds the SQLite file when DatabaseURL is empty.
	DataDir string
	// Box encrypts secret header values; required.
	Box *secret.Box
	// MaxActiveRuns is how many runs may be active at once; 0 means 1 (seed 000 FR-16).
	MaxActiveRuns int
	// Egress refuses, when they are saved, provider and webhook URLs that
	// point where Tribunal may not connect; nil is egress.Default.
	Egress *egress.Policy
	// MaxRunItems is how many items a run may have; 0 means DefaultMaxRunItems.
	MaxRunItems int
	// AllowMCPCommands lets agents have stdio MCP servers, which run a
	// command on this machine (--allow-mcp-commands).
	AllowMCPCommands bool
}

// DefaultMaxRunItems bounds a run's items: a million rows is already minutes
// of inserts and deletes on SQLite.
const DefaultMaxRunItems = 1_000_000

// Store is the database handle. It is safe for concurrent use.
type Store struct {
	db      *gorm.DB
	dialect Dialect
	box     *secret.Box
	egress  *egress.Policy
	now     func() time.Time
	// maxActive is the active-run limit.
	maxActive int
	// maxItems is the items-per-run limit.
	maxItems int
	// allowMCPCommands: see Config.AllowMCPCommands.
	allowMCPCommands bool
	dsn              string
	// prepared are SQLite statements prepared once (see stmtCache).
	prepared *stmtCache
	// fillPartDoneFunc, when set (tests), runs at the end of each part of
	// a run's item fill, in its transaction (SQLite: one part, the whole
	// creation's); an error fails the part.
	fillPartDoneFunc func(part int) error
	// parallelFillFrom is the size from which a run's items are filled in
	// parallel on PostgreSQL (createRun): parallelFillItems, or the tests'.
	parallelFillFrom int64
}

// Open connects, runs the embedded migrations and checks the master key.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Box == nil {
		return nil, errors.New("store: open: no secret box")
	}
	dialect, dsn, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	if err := migrateUp(dialect, dsn); err != nil {
		return nil, err
	}
	gcfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		TranslateError:         true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	var db *gorm.DB
	switch dialect {
	case Postgres:
		var conn *sql.DB
		if conn, err = openPostgres(dsn); err == nil {
			db, err = gorm.Open(postgres.New(postgres.Config{Conn: conn}), gcfg)
		}
	default:
		db, err = gorm.Open(sqliteDialector{dsn: dsn}, gcfg)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	if dialect == SQLite {
		// One writer at a time is SQLite's model; one connection avoids SQLITE_BUSY.
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(20)
		sqlDB.SetMaxIdleConns(20) // as many as open: closing idle ones would churn PostgreSQL backends
	}
	s := &Store{db: db, dialect: dialect, box: cfg.Box, egress: cfg.Egress, now: func() time.Time { return time.Now().UTC() },
		maxActive: max(cfg.MaxActiveRuns, 1), maxItems: cmp.Or(cfg.MaxRunItems, DefaultMaxRunItems), allowMCPCommands: cfg.AllowMCPCommands, dsn: dsn,
		parallelFillFrom: parallelFillItems}
	if err := s.checkMasterKey(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if err := s.ensureBuiltinStyles(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	if err := s.prepareHot(ctx, sqlDB); err != nil {
		sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// openPostgres opens the pool with the planner's JIT compilation off in
// each session, unless the URL sets it (?jit=on, or in options): it
// compiled each statistics read's expressions in every process working on
// it, about 0.2 s apiece, more than it saved on reads of a second or two
// (the summary's grouped scan of a million items: 12 % less CPU without
// it). A SET after connecting rather than a startup parameter, which
// PgBouncer would refuse.
func openPostgres(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	if _, set := cfg.RuntimeParams["jit"]; set || strings.Contains(cfg.RuntimeParams["options"], "jit") {
		return stdlib.OpenDB(*cfg), nil
	}
	return stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "SET jit = off"); err != nil {
			return fmt.Errorf("store: turn jit off: %w", err)
		}
		return nil
	})), nil
}

func resolve(cfg Config) (Dialect, string, error) {
	url := strings.TrimSpace(cfg.DatabaseURL)
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return Postgres, url, nil
	case url != "":
		return "", "", fmt.Errorf("store: unsupported database URL %q: use postgres://… or leave it empty for the embedded SQLite", redactURL(url))
	}
	dir := cfg.DataDir
	if dir == "" {
		dir = "data"
	}
	// The database holds provider secrets (encrypted) and every answer: owner only.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("store: create data dir: %w", err)
	}
	path := filepath.Join(dir, "tribunal.db")
	// SQLite would create the file with the umask's mode (often 0644), and its
	// -wal and -shm files copy the database file's mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("store: create database file: %w", err)
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_time_format=sqlite"
	return SQLite, dsn, nil
}

func redactURL(u string) string {
	if i := strings.Index(u, "@"); i >= 0 {
		if j := strings.Index(u, "://"); j >= 0 && j < i {
			return u[:j+3] + "…" + u[i:]
		}
	}
	return u
}

func migrateUp(dialect Dialect, dsn string) error {
	src, err := iofs.New(migrations.FS, string(dialect))
	if err != nil {
		return fmt.Errorf("store: migrations source: %w", err)
	}
	driverName := "sqlite"
	if dialect == Postgres {
		driverName = "pgx"
	}
	// migrate closes the *sql.DB it is handed, so it gets its own.
	sqlDB, err := sql.Open(driverName, dsn)
	if err != nil {
		return fmt.Errorf("store: open for migrations: %w", err)
	}
	var m *migrate.Migrate
	if dialect == Postgres {
		drv, derr := mpgx.WithInstance(sqlDB, &mpgx.Config{})
		if derr != nil {
			sqlDB.Close()
			return fmt.Errorf("store: migrations driver: %w", derr)
		}
		m, err = migrate.NewWithInstance("iofs", src, "pgx", drv)
	} else {
		drv, derr := msqlite.WithInstance(sqlDB, &msqlite.Config{})
		if derr != nil {
			sqlDB.Close()
			return fmt.Errorf("store: migrations driver: %w", derr)
		}
		m, err = migrate.NewWithInstance("iofs", src, "sqlite", drv)
	}
	if err != nil {
		sqlDB.Close()
		return fmt.Errorf("store: migrations: %w", err)
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("store: migrate up: %w", err)
	}
	return nil
}

// lockForUpdate locks the rows a query reads until the transaction ends.
// SQLite needs nothing: its single connection serialises transactions.
func lockForUpdate(d Dialect) []clause.Expression {
	if d == Postgres {
		return []clause.Expression{clause.Locking{Strength: "UPDATE"}}
	}
	return nil
}

// Dialect reports which database the store is on.
func (s *Store) Dialect() Dialect { return s.dialect }

// Box is the secret box the store seals with; it also authenticates
// (secret.Box.MAC) what must not be forged without the master key.
func (s *Store) Box() *secret.Box { return s.box }

// Close closes the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return sqlDB.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// PoolStats reports the connection pool's state.
func (s *Store) PoolStats() sql.DBStats {
	sqlDB, err := s.db.DB()
	if err != nil {
		return sql.DBStats{}
	}
	return sqlDB.Stats()
}

// Transact runs fn in one transaction: all its writes land, or none.
func (s *Store) Transact(ctx context.Context, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(s.on(tx))
	})
}

// on is the store working through db: a transaction or one connection.
func (s *Store) on(db *gorm.DB) *Store {
	c := *s
	c.db = db
	return &c
}

func (s *Store) conn(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// notFound turns gorm.ErrRecordNotFound into ErrNotFound, naming the entity.
func notFound(err error, what string, id any) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &NotFoundError{What: what, ID: id}
	}
	return err
}

const masterKeyCheck = "master_key_check"

// checkMasterKey stores a sealed marker on first start and, later, proves the
// configured key opens it, so a wrong key fails at start-up with a clear message.
func (s *Store) checkMasterKey(ctx context.Context) error {
	var row appSetting
	err := s.conn(ctx).Where("key = ?", masterKeyCheck).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		sealed, serr := s.box.Seal("tribunal")
		if serr != nil {
			return serr
		}
		if err := s.conn(ctx).Create(&appSetting{Key: masterKeyCheck, Value: sealed}).Error; err != nil && !errors.Is(err, gorm.ErrDuplicatedKey) {
			return fmt.Errorf("store: save master key check: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: read master key check: %w", err)
	}
	if v, err := s.box.Open(row.Value); err != nil || v != "tribunal" {
		return errors.New("store: TRIBUNAL_MASTER_KEY does not match the key this database's secrets were encrypted with; set the original key (see README, 'Secrets')")
	}
	return nil
}

type appSetting struct {
	Key   string `gorm:"primaryKey"`
	Value string
}

func (appSetting) TableName() string { return "app_settings" }

// mustJSON encodes a value GORM writes as a JSON column; the values are
// plain structs, lists and maps, which always encode.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: encode %T: %v", v, err))
	}
	return string(b)
}

// AllowsMCPCommands says whether agents may have stdio MCP servers here
// (Config.AllowMCPCommands); one saved before the flag was dropped is
// refused when it would be started.
func (s *Store) AllowsMCPCommands() bool { return s.allowMCPCommands }
