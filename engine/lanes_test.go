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

func TestJudgeSharesWhileGroupsAnswer(t *testing.T) {
	e := &Engine{cfg: Config{MaxInFlight: 4}, runs: map[int64]*runState{}, calls: map[string]int{}}
	rs := &runState{}
	e.runs[1] = rs
	check := func(step string, want map[string]int) {
		t.Helper()
		if got := rs.split.shares; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: shares %v, want %v", step, got, want)
		}
	}
	target, judge := []laneDemand{{"t", 4}}, []laneDemand{{"j", 4}}

	e.setShares(rs, target, judge, true)
	check("nothing answered", map[string]int{"t": 4})
	if got := e.room(rs, "j"); got != 2 {
		t.Errorf("an idle judge's room = %d, want the share it would have with work, 2", got)
	}
	e.markJudgeWork(1, 0)
	check("an answer waits", map[string]int{"t": 3, "j": 1})
	e.markJudgeWork(1, 0)
	e.markJudgeWork(1, 0)
	check("three answers wait", map[string]int{"t": 2, "j": 2})
	e.setShares(rs, target, judge, true)
	check("the next pass", map[string]int{"t": 2, "j": 2})

	marks := e.judgeMarks(rs, 0)
	e.calls["j"] = 2
	e.judgeClaimed(rs, 0, 2, 2, marks)
	check("a claim of two, one more waiting", map[string]int{"t": 2, "j": 2})
	e.judgeTook(1, 0)
	e.calls["j"] = 1
	e.setShares(rs, target, judge, true)
	check("a successor took the last", map[string]int{"t": 3, "j": 1})

	marks = e.judgeMarks(rs, 0)
	e.markJudgeWork(1, 0) // an answer stored while the claim ran
	e.judgeClaimed(rs, 0, 2, 0, marks)
	check("a claim that missed a new answer", map[string]int{"t": 2, "j": 2})
	e.calls["j"] = 0
	e.judgeClaimed(rs, 0, 2, 0, e.judgeMarks(rs, 0))
	check("a claim that found nothing", map[string]int{"t": 4})

	e.setShares(rs, nil, judge, false)
	check("judging", map[string]int{"j": 4})
	e.markJudgeWork(1, 0)
	e.judgeClaimed(rs, 0, 2, 0, e.judgeMarks(rs, 0))
	check("judging, whatever waits", map[string]int{"j": 4})
}
