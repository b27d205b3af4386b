package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestByIDsKeepsOnlyAskedIDs: a dense set of ids is read as one range,
// whose rows of the ids between them keep rejects; a sparse set is read as
// lists of at most 1,000 (IN on SQLite, = ANY on PostgreSQL).
func TestByIDsKeepsOnlyAskedIDs(t *testing.T) {
	var dense []int64
	for id := int64(1000); id < 1300; id++ {
		if id%3 != 0 {
			dense = append(dense, id)
		}
	}
	var calls []string
	err := exportReader{}.byIDs("item_id", dense, func(where string, args []any, keep func(int64) bool) error {
		calls = append(calls, where)
		if !slices.Equal(args, []any{dense[0], dense[len(dense)-1]}) {
			t.Errorf("range %v, want %d to %d", args, dense[0], dense[len(dense)-1])
		}
		for id := dense[0]; id <= dense[len(dense)-1]; id++ {
			if keep(id) != (id%3 != 0) {
				t.Errorf("keep(%d) = %v", id, keep(id))
			}
		}
		return nil
	})
	if err != nil || !slices.Equal(calls, []string{"item_id BETWEEN ? AND ?"}) {
		t.Fatalf("dense ids: %v, %v", calls, err)
	}

	sparse := make([]int64, 2500)
	for i := range sparse {
		sparse[i] = int64(i) * 10
	}
	for _, r := range []struct {
		reader exportReader
		where  string
	}{{exportReader{}, "item_id IN ?"}, {exportReader{pg: &pgx.Conn{}}, "item_id = ANY(?)"}} {
		var got []int64
		err = r.reader.byIDs("item_id", sparse, func(where string, args []any, keep func(int64) bool) error {
			part := args[0].([]int64)
			if where != r.where || len(part) > 1000 || !keep(part[0]) {
				t.Errorf("sparse ids: %q with %d ids, want %q", where, len(part), r.where)
			}
			got = append(got, part...)
			return nil
		})
		if err != nil || !slices.Equal(got, sparse) {
			t.Fatalf("sparse ids: read %d of %d, %v", len(got), len(sparse), err)
		}
	}
}

// TestNumbered: ? placeholders become $1, $2, … in order.
func TestNumbered(t *testing.T) {
	got := numbered("SELECT a FROM t WHERE run_id = ? AND id BETWEEN ? AND ? ORDER BY id")
	if want := "SELECT a FROM t WHERE run_id = $1 AND id BETWEEN $2 AND $3 ORDER BY id"; got != want {
		t.Fatalf("numbered: %q, want %q", got, want)
	}
}

// TestTaskCacheKeepsWithinBudget: the export keeps the tasks it reads until
// their text reaches taskCacheBytes; a task past that serves its batch and
// is read again for the next.
func TestTaskCacheKeepsWithinBudget(t *testing.T) {
	c := newTaskCache()
	c.add(1, exportTask{key: "t1", question: strings.Repeat("q", taskCacheBytes-10)})
	c.add(2, exportTask{key: "t2", question: "a question longer than the ten bytes left"})
	c.add(3, exportTask{key: "t3"})
	for _, id := range []int64{1, 2, 3} {
		if got, ok := c.get(id); !ok || got.key != fmt.Sprintf("t%d", id) {
			t.Fatalf("task %d during its batch: %+v, %v", id, got, ok)
		}
	}
	c.forget()
	_, kept1 := c.get(1)
	_, kept2 := c.get(2)
	_, kept3 := c.get(3)
	if !kept1 || kept2 || !kept3 {
		t.Errorf("kept after the batch: 1 %v, 2 %v (past the budget), 3 %v", kept1, kept2, kept3)
	}
}
