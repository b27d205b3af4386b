package bench

import "testing"

// TestPostgresOnly: on SQLite a PostgreSQL-only target is shown without a
// verdict and counts neither as met nor missed; on PostgreSQL it stands.
func TestPostgresOnly(t *testing.T) {
	for _, postgres := range []bool{true, false} {
		var rep Report
		rep.add(postgresOnly(postgres, below("create run (items)", 12, "s", createTarget)),
			below("run page", 20, "ms", pageTarget),
			below("items page", 200, "ms", pageTarget))
		misses, targets := 1, 2
		if postgres {
			misses, targets = 2, 3
		}
		if rep.Misses() != misses || rep.targets() != targets {
			t.Errorf("postgres=%v: %d of %d targets missed, want %d of %d", postgres, rep.Misses(), rep.targets(), misses, targets)
		}
		if got := rep.Figures[0].Target; postgres != (got == "< 10 s") {
			t.Errorf("postgres=%v: target %q", postgres, got)
		}
	}
}
