package engine

import (
	"fmt"
	"testing"
)

func TestFairShares(t *testing.T) {
	tests := []struct {
		slots int
		lanes []laneDemand
		want  map[string]int
	}{
		// Room for everyone: each lane gets its provider's concurrency.
		{64, []laneDemand{{"a", 4}, {"b", 8}, {"c", 16}}, map[string]int{"a": 4, "b": 8, "c": 16}},
		// Too few slots: equal shares, and what a small lane leaves goes to the others.
		{8, []laneDemand{{"a", 2}, {"b", 10}, {"c", 0}}, map[string]int{"a": 2, "b": 3, "c": 3}},
		{2, []laneDemand{{"a", 2}, {"b", 2}}, map[string]int{"a": 1, "b": 1}},
		// More lanes than slots: every lane may still hold one.
		{2, []laneDemand{{"a", 4}, {"b", 4}, {"c", 4}}, map[string]int{"a": 1, "b": 1, "c": 1}},
		// A judge on a target's (provider, model) adds to its share.
		{64, []laneDemand{{"a", 4}, {"a", 4}}, map[string]int{"a": 8}},
	}
	for _, tt := range tests {
		got := fairShares(tt.slots, tt.lanes)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("fairShares(%d, %v) = %v, want %v", tt.slots, tt.lanes, got, tt.want)
		}
	}
}
