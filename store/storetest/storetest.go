// Package storetest opens migrated stores for tests: SQLite in a temp dir,
// and PostgreSQL in a fresh schema when TEST_DATABASE_URL is set.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // pgx database/sql driver for schema set-up

	"tribunal/egress"
	"tribunal/secret"
	"tribunal/store"
)

// Box is the secret box tests use.
func Box(t testing.TB) *secret.Box {
	t.Helper()
	b, err := secret.NewBox("test-master-key")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Egress is the test stores' policy: every kind may reach loopback, where
// httptest servers listen.
var Egress = egress.AllowPrivate(egress.Kinds...)

// SQLite returns a store on a new SQLite file in t.TempDir().
func SQLite(t testing.TB) *store.Store {
	t.Helper()
	return sqliteWith(t, store.Config{Egress: Egress})
}

// SQLiteIn returns a store on the SQLite database in dataDir, sealed with
// box: the one a command run in the test opens.
func SQLiteIn(t testing.TB, dataDir string, box *secret.Box) *store.Store {
	t.Helper()
	return sqliteAt(t, store.Config{Egress: Egress, DataDir: dataDir, Box: box})
}

func sqliteWith(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	cfg.DataDir, cfg.Box = t.TempDir(), Box(t)
	return sqliteAt(t, cfg)
}

func sqliteAt(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open sqlite store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	remember(t, st, "sqlite", "file:"+filepath.Join(cfg.DataDir, "tribunal.db")+"?_pragma=busy_timeout(10000)")
	return st
}

// PostgresURL returns a URL to a fresh, empty schema of the test database,
// dropped when the test ends. Without TEST_DATABASE_URL the test is skipped,
// or fails under CI, where PostgreSQL must be there.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TEST_DATABASE_URL is not set under CI; run the tests with scripts/test.sh")
		}
		t.Skip("TEST_DATABASE_URL not set: skipping PostgreSQL (scripts/test.sh starts one)")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer db.Close()
	schema := fmt.Sprintf("t_%d_%d", os.Getpid(), rand.Uint32())
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// Postgres returns a store on a fresh PostgreSQL schema.
func Postgres(t testing.TB) *store.Store {
	t.Helper()
	return postgresWith(t, store.Config{Egress: Egress})
}

func postgresWith(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	cfg.DatabaseURL, cfg.Box = PostgresURL(t), Box(t)
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	remember(t, st, "pgx", cfg.DatabaseURL)
	return st
}

// Each runs fn as a subtest on SQLite and on PostgreSQL.
func Each(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	EachWith(t, store.Config{}, fn)
}

// EachWithEgress is Each on stores under another egress policy.
func EachWithEgress(t *testing.T, p *egress.Policy, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	EachWith(t, store.Config{Egress: p}, fn)
}

// EachWith is Each on stores opened with cfg's limits (MaxActiveRuns,
// MaxRunItems) and egress policy (nil: Egress); its database fields are
// filled in.
func EachWith(t *testing.T, cfg store.Config, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	if cfg.Egress == nil {
		cfg.Egress = Egress
	}
	t.Run("sqlite", func(t *testing.T) { fn(t, sqliteWith(t, cfg)) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresWith(t, cfg)) })
}
