package engine

import (
	"fmt"
	"testing"

	"tribunal/store"
)

// TestAnswersPerTurn: an item's answers pair with its task's turns; a lone
// answer to a conversation (an imported one) answers the last turn, which
// the judges, the item page and the grading page all show so.
func TestAnswersPerTurn(t *testing.T) {
	text := func(s string) *string { return &s }
	conversation := store.RunTask{Question: "q1", TaskFields: store.TaskFields{Turns: []string{"q1", "q2", "q3"}}}
	for _, c := range []struct {
		name string
		w    store.WorkItem
		want string
	}{
		{"one turn", store.WorkItem{Task: store.RunTask{Question: "q"}, Item: store.Item{Response: text("a")}}, `["a"]`},
		{"each turn answered", store.WorkItem{Task: conversation, Item: store.Item{Response: text("a3"), Answers: text(`["a1","a2","a3"]`)}}, `["a1" "a2" "a3"]`},
		{"a lone answer to a conversation", store.WorkItem{Task: conversation, Item: store.Item{Response: text("final")}}, `["" "" "final"]`},
		{"not answered", store.WorkItem{Task: conversation}, `[""]`},
	} {
		if got := fmt.Sprintf("%q", answers(&c.w)); got != c.want {
			t.Errorf("%s: answers %s, want %s", c.name, got, c.want)
		}
	}
}
