package store

import (
	"slices"
	"testing"
)

// TestByIDsKeepsOnlyAskedIDs: a dense set of ids is read as one range,
// whose rows of the ids between them keep rejects; a sparse set is read as
// IN lists of at most 1,000.
func TestByIDsKeepsOnlyAskedIDs(t *testing.T) {
	var dense []int64
	for id := int64(1000); id < 1300; id++ {
		if id%3 != 0 {
			dense = append(dense, id)
		}
	}
	var calls []string
	err := byIDs("item_id", dense, func(where string, args []any, keep func(int64) bool) error {
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
	var got []int64
	err = byIDs("item_id", sparse, func(where string, args []any, keep func(int64) bool) error {
		part := args[0].([]int64)
		if where != "item_id IN ?" || len(part) > 1000 || !keep(part[0]) {
			t.Errorf("sparse ids: %q with %d ids", where, len(part))
		}
		got = append(got, part...)
		return nil
	})
	if err != nil || !slices.Equal(got, sparse) {
		t.Fatalf("sparse ids: read %d of %d, %v", len(got), len(sparse), err)
	}
}
