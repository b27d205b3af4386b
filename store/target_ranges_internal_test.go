package store

import (
	"slices"
	"testing"
)

// A run's task results are read in ranges of its targets side by side:
// every target falls in exactly one range, the ranges do not overlap, and
// there are no more of them than parts, or than targets.
func TestTargetRangesCoverEveryTarget(t *testing.T) {
	for n := range 6 {
		var ids []int64
		for i := range n {
			ids = append(ids, int64(5+7*i))
		}
		for parts := 1; parts <= 3; parts++ {
			ranges := targetRanges(ids, parts)
			if len(ranges) > min(n, parts) {
				t.Errorf("%d targets in %d parts: %d ranges %v", n, parts, len(ranges), ranges)
			}
			for _, id := range ids {
				var in int
				for _, r := range ranges {
					if r.first <= id && id <= r.last {
						in++
					}
				}
				if in != 1 {
					t.Errorf("%d targets in %d parts: target %d is in %d of the ranges %v", n, parts, id, in, ranges)
				}
			}
			for i := 1; i < len(ranges); i++ {
				if ranges[i].first <= ranges[i-1].last {
					t.Errorf("%d targets in %d parts: ranges %v overlap", n, parts, ranges)
				}
			}
		}
	}
}

// placeOf finds each run task's place whether the run's row ids lie close
// together (a dense table) or far apart (a map), and no place for others.
func TestTaskNamesPlaceOf(t *testing.T) {
	for _, ids := range [][]int64{{7, 8, 9, 10}, {10, 8, 9, 7}, {7, 9, 12}, {3, 1_000_000, 50}, {42}, {-(1 << 62), 1 << 62}} {
		var n runTaskNames
		n.index(ids)
		lo, hi := ids[0], ids[0]
		for _, id := range ids {
			lo, hi = min(lo, id), max(hi, id)
		}
		for want, id := range ids {
			if got, ok := n.placeOf(id); !ok || got != want {
				t.Errorf("ids %v: place of %d is %d (%v), want %d", ids, id, got, ok, want)
			}
		}
		for _, id := range []int64{lo - 1, hi + 1, 0, 8, 10, 11, 1 << 40} {
			if slices.Contains(ids, id) {
				continue
			}
			if _, ok := n.placeOf(id); ok {
				t.Errorf("ids %v: %d has a place", ids, id)
			}
		}
	}
}
