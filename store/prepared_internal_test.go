package store

import (
	"context"
	"strings"
	"testing"

	"tribunal/secret"
)

// TestHotClaimsArePrepared: the claims the engine makes for every call run
// as prepared statements on SQLite, in both phases (each counts its own
// calls, so has its own text): parsing one anew costs more than running it.
func TestHotClaimsArePrepared(t *testing.T) {
	box, err := secret.NewBox("test-master-key")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), Config{DataDir: t.TempDir(), Box: box})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pos := 0
	for _, p := range []ClaimParams{
		{From: ItemNew, To: ItemInProgress, TargetID: 1},             // benchmark claims and their successors
		{From: ItemWaitingForJudge, To: ItemJudging, JudgePos: &pos}, // judge claims and theirs
	} {
		if text, _ := st.claimSQL(p, "?", "0", 1); st.prepared.get(text) == nil {
			t.Errorf("the %s claim is not prepared:\n%s", p.To, text)
		}
	}
}

// statusValue writes a known item status as a literal on SQLite (whose
// planner, weighing a bound status against the items' partial indexes,
// prepares a statement again whenever the value bound changes) and binds
// anything else, and every status on PostgreSQL.
func TestStatusValue(t *testing.T) {
	for _, st := range ItemStatuses {
		if strings.ContainsAny(string(st), `'?\`) {
			t.Errorf("status %q would need escaping as a literal", st)
		}
	}
	sqlite, postgres := &Store{dialect: SQLite}, &Store{dialect: Postgres}
	for _, tc := range []struct {
		st       *Store
		status   ItemStatus
		text     string
		argCount int
	}{
		{sqlite, ItemNew, "'NEW'", 0},
		{sqlite, ItemWaitingForJudge, "'WAITING_FOR_JUDGE'", 0},
		{sqlite, ItemStatus("NEW' OR 1=1 --"), "?", 1},
		{sqlite, ItemStatus(""), "?", 1},
		{postgres, ItemNew, "?", 1},
	} {
		text, args := tc.st.statusValue(tc.status)
		if text != tc.text || len(args) != tc.argCount {
			t.Errorf("%s, %q: %q %v, want %q with %d argument(s)", tc.st.dialect, tc.status, text, args, tc.text, tc.argCount)
		}
	}
}
