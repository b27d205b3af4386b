package analysis

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"tribunal/store"
)

// pairedColumns, the merge PairTests walks, gives what looking each of a's
// tasks up in b gives: the values of the tasks both scored, in task order,
// with tasks that only one entry has or scored left out; and so does its
// walk side by side of two entries with the same tasks.
func TestPairedColumnsMatchLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	run := &store.Run{Targets: []store.RunTarget{{ID: 1}}}
	entry := func(all bool) Entry {
		var rs []store.TaskResult
		for k := range 60 {
			if !all && rng.IntN(4) == 0 {
				continue // a task this entry lacks
			}
			r := store.TaskResult{RunTargetID: 1, TaskKey: fmt.Sprintf("t%d", k), Scored: int64(rng.IntN(3)), Passed: int64(rng.IntN(2))}
			if rng.IntN(5) > 0 {
				r.Score = f(float64(rng.IntN(100)) / 10)
			}
			rs = append(rs, r)
		}
		rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		return Entries(run, 5, rs)[0]
	}
	for trial := range 20 {
		all := trial%3 == 0 // both have every task: the columns go side by side
		a, b := entry(all), entry(all)
		byKey := map[string]store.TaskResult{}
		for _, r := range b.Tasks {
			byKey[r.TaskKey] = r
		}
		for name, get := range map[string]func(store.TaskResult) (float64, bool){"score": taskScore, "pass": taskPass} {
			var wantX, wantY []float64
			for _, ra := range a.Tasks {
				rb, ok := byKey[ra.TaskKey]
				x, okA := get(ra)
				y, okB := get(rb)
				if ok && okA && okB {
					wantX, wantY = append(wantX, x), append(wantY, y)
				}
			}
			xs, ys := pairedColumns(columnOf(a, taskKeys(a), get), columnOf(b, taskKeys(b), get))
			if fmt.Sprint(xs, ys) != fmt.Sprint(wantX, wantY) {
				t.Errorf("trial %d, %s: paired %v %v, want %v %v", trial, name, xs, ys, wantX, wantY)
			}
		}
	}
}

// Entries lists each target's results in task id order whatever order
// they arrive in, keeps the last listed of a task listed twice, and copies
// them (the store reuses its rows); TaskRows then lines up entries that
// lack some of each other's tasks.
func TestEntriesInTaskOrder(t *testing.T) {
	run := &store.Run{Targets: []store.RunTarget{{ID: 1}, {ID: 2}}}
	rs := []store.TaskResult{
		{RunTargetID: 1, TaskKey: "c", Score: f(1)}, {RunTargetID: 2, TaskKey: "b", Score: f(2)},
		{RunTargetID: 1, TaskKey: "a", Score: f(3)}, {RunTargetID: 1, TaskKey: "c", Score: f(4)},
		{RunTargetID: 3, TaskKey: "a", Score: f(5)}, // not the run's target
	}
	es := Entries(run, 5, rs)
	rs[2].Score = f(9) // the store reuses nothing, but the entries must not see it
	got := func(e Entry) string {
		var b []string
		for _, r := range e.Tasks {
			b = append(b, fmt.Sprintf("%s=%v", r.TaskKey, *r.Score))
		}
		return fmt.Sprint(b)
	}
	if got(es[0]) != "[a=3 c=4]" || got(es[1]) != "[b=2]" {
		t.Fatalf("entries %s %s", got(es[0]), got(es[1]))
	}
	var rows []string
	for _, row := range TaskRows(es, nil, TaskFilter{}) {
		rows = append(rows, fmt.Sprintln(row.TaskID, row.Results[0] != nil, row.Results[1] != nil))
	}
	if strings.Join(rows, "") != "a true false\nb false true\nc true false\n" {
		t.Errorf("task rows %v", rows)
	}
}
