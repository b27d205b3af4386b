package store

import "testing"

// TestPgSetShapeGroups: completions that set the same columns share one
// statement (one text, whatever their number); others get their own.
func TestPgSetShapeGroups(t *testing.T) {
	a, b := &Item{ID: 1}, &Item{ID: 2}
	judged := func(it *Item, resp string) *Completion {
		return BenchmarkCompletion(it, BenchmarkResult{Request: "{}", Response: resp, Judged: true})
	}
	// Scored by its checks alone, it completes with a score: one column more.
	checked := BenchmarkCompletion(b, BenchmarkResult{Request: "{}", Response: "c",
		Scores: []Score{{Source: "check:contains", Metric: "check_contains", Score: 1}}})
	if groups := byPgSetShape([]*Completion{judged(a, "x"), judged(b, "y")}); len(groups) != 1 || len(groups[0]) != 2 {
		t.Fatalf("answers of one kind in %d group(s), want 1", len(groups))
	}
	groups := byPgSetShape([]*Completion{judged(a, "x"), checked})
	if len(groups) != 2 || groups[0][0].Item != a || groups[1][0].Item != b {
		t.Fatalf("two kinds in %d group(s), want 2 in their order", len(groups))
	}
	shape, values := pgSetShape(judged(a, "x").updates)
	cols, types, err := pgColumns([][]any{values})
	if err != nil || len(cols) != len(types) {
		t.Fatalf("columns of %q: %v", shape, err)
	}
}
