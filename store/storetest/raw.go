package storetest

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"tribunal/store"
	"tribunal/trajectory"
)

// dsns remembers how to reach each test store's database, for DB.
var dsns sync.Map // *store.Store → [2]string{driver, dsn}

func remember(t testing.TB, st *store.Store, driver, dsn string) {
	dsns.Store(st, [2]string{driver, dsn})
	t.Cleanup(func() { dsns.Delete(st) })
}

// DB opens a connection of its own to a store this package opened, for
// tests that write columns no store method writes outside the engine (an
// agent's trajectory); it closes with the test.
func DB(t testing.TB, st *store.Store) *sql.DB {
	t.Helper()
	db := open(t, st)
	t.Cleanup(func() { db.Close() })
	return db
}

func open(t testing.TB, st *store.Store) *sql.DB {
	t.Helper()
	v, ok := dsns.Load(st)
	if !ok {
		t.Fatal("storetest: the store was not opened by storetest")
	}
	d := v.([2]string)
	db, err := sql.Open(d[0], d[1])
	if err != nil {
		t.Fatalf("open raw database: %v", err)
	}
	return db
}

// MakeAgentTarget turns a run target into an agent's (name, version), as a
// run of a saved agent freezes it.
func MakeAgentTarget(t testing.TB, st *store.Store, targetID int64, name string, version int) {
	t.Helper()
	cfg, err := json.Marshal(store.AgentInput{Name: name, Executor: store.ExecutorTools})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, st, `UPDATE run_targets SET agent_name = ?, agent_version = ?, agent = ? WHERE id = ?`, name, version, string(cfg), targetID)
}

// SetTrace writes what an agent item did (its tool calls, model calls and
// reasoning, "" for none) as the engine's tool loop stores it. A summary
// the run's end stored is dropped: the engine writes a trace before the run
// ends, so a real summary never predates one.
func SetTrace(t testing.TB, st *store.Store, itemID int64, calls trajectory.Calls, turns int, reasoning string) {
	t.Helper()
	if calls == nil {
		calls = trajectory.Calls{}
	}
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	var r *string
	if reasoning != "" {
		r = &reasoning
	}
	exec(t, st, `UPDATE items SET tool_calls = ?, turns = ?, reasoning = ? WHERE id = ?`, string(b), turns, r, itemID)
	for _, table := range []string{"run_summaries", "run_analyses"} {
		exec(t, st, `DELETE FROM `+table+` WHERE run_id = (SELECT run_id FROM items WHERE id = ?)`, itemID)
	}
}

// Exec runs a statement (with ? placeholders) on a store this package
// opened, for tests that set rows up as no store method would.
func Exec(t testing.TB, st *store.Store, q string, args ...any) {
	t.Helper()
	exec(t, st, q, args...)
}

func exec(t testing.TB, st *store.Store, q string, args ...any) {
	t.Helper()
	db := open(t, st)
	defer db.Close()
	if st.Dialect() == store.Postgres {
		q = dollars(q)
	}
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// dollars numbers a query's ? placeholders as PostgreSQL's $1, $2, ….
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
