package store

import (
	"context"
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
