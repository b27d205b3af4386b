package analysis

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"tribunal/store"
)

// pairedColumns, the merge PairTests walks, gives what looking each of a's
// tasks up in b gives: the values of the tasks both scored, in task order,
// with tasks that only one entry has or scored left out.
func TestPairedColumnsMatchLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	entry := func() Entry {
		e := Entry{Tasks: map[string]store.TaskResult{}}
		for k := range 60 {
			if rng.IntN(4) == 0 {
				continue // a task this entry lacks
			}
			r := store.TaskResult{TaskKey: fmt.Sprintf("t%d", k), Scored: int64(rng.IntN(3)), Passed: int64(rng.IntN(2))}
			if rng.IntN(5) > 0 {
				r.Score = f(float64(rng.IntN(100)) / 10)
			}
			e.Tasks[r.TaskKey] = r
		}
		return e
	}
	for trial := range 20 {
		a, b := entry(), entry()
		if trial%2 == 0 {
			a = Entries(&store.Run{Targets: []store.RunTarget{{ID: 1}}}, 5, resultsOf(a, 1))[0] // keys sorted once, as runs' entries are
		}
		for name, get := range map[string]func(store.TaskResult) (float64, bool){"score": taskScore, "pass": taskPass} {
			var wantX, wantY []float64
			for _, k := range slices.Sorted(maps.Keys(a.Tasks)) {
				rb, ok := b.Tasks[k]
				x, okA := get(a.Tasks[k])
				y, okB := get(rb)
				if ok && okA && okB {
					wantX, wantY = append(wantX, x), append(wantY, y)
				}
			}
			xs, ys := pairedColumns(columnOf(a, get), columnOf(b, get))
			if fmt.Sprint(xs, ys) != fmt.Sprint(wantX, wantY) {
				t.Errorf("trial %d, %s: paired %v %v, want %v %v", trial, name, xs, ys, wantX, wantY)
			}
		}
	}
}

func resultsOf(e Entry, target int64) []store.TaskResult {
	var out []store.TaskResult
	for _, r := range e.Tasks {
		r.RunTargetID = target
		out = append(out, r)
	}
	return out
}
