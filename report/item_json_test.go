package report

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"tribunal/runs"
	"tribunal/store"
)

// trickyStrings are texts json.Marshal escapes in every way it has.
var trickyStrings = []string{"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "line\nbreak\r\ttab\b\f",
	"\x00\x01\x1f\x7f", "é中文🙂", "\u2028 and \u2029", "bad utf-8 \xff\xfe end", "\xe2\x80", "=SUM(A1)"}

// TestAppendItemJSONMatchesMarshal: the export's hand-written item
// encoder writes what json.Marshal writes, for items of every shape.
func TestAppendItemJSONMatchesMarshal(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	s := func(v string) *string { return &v }
	floats := []*float64{nil, f(0), f(math.Copysign(0, -1)), f(7), f(123.456), f(1e-7), f(0.000001), f(1e20), f(1e21), f(-2.5e-9), f(math.MaxFloat64)}
	at := time.Date(2026, 11, 27, 2, 3, 4, 567890000, time.UTC)
	var items []Item
	for i, text := range trickyStrings {
		v := store.ItemView{ID: int64(i + 1), TaskID: text, Category: text, Subcategory: text, Question: text, Reference: text,
			Provider: text, Model: text, Status: store.ItemStatus(text), RepeatIndex: i, Score: floats[i%len(floats)],
			Judge: text, Reasoning: text, Error: text, TokensPerS: floats[(i+3)%len(floats)], CostUSD: floats[(i+5)%len(floats)],
			CostSource: store.CostSource(text), JudgeCostSource: store.CostSource(text), AnswerAttempts: i, JudgeAttempts: -i,
			FailedPhase: text, UpdatedAt: at.Add(time.Duration(i) * time.Hour).In(time.FixedZone("x", 3600*(i-5)))}
		if i%2 == 0 {
			v.Response, v.TimeMs, v.PromptTokens, v.CompletionTokens, v.Grade = s(text), n(int64(i)), n(-1), n(1<<40), s(text)
		}
		it := Item{ItemRow: runs.ItemRow{ItemView: v}, GradeNotes: text}
		switch i % 3 {
		case 0:
			it.Scores, it.Violations = []Score{}, []store.ViolationView{}
		case 1:
			it.Scores = []Score{{Judge: text, Metric: "score", Score: 3.25, Reasoning: text}, {Judge: "j", Metric: text, Score: 1e-9}}
			it.Violations = []store.ViolationView{{ItemID: 9, Judge: text, Category: "format", Detail: text}}
		}
		items = append(items, it)
	}
	turns := 3
	agent := Item{ItemRow: runs.ItemRow{ItemView: store.ItemView{ID: 99, UpdatedAt: at}, Agent: &runs.AgentTrace{Name: "<a>", Turns: &turns}, Turns: &turns},
		Scores: []Score{}, Violations: []store.ViolationView{}}
	items = append(items, agent)
	for i := range items {
		want, err := json.Marshal(&items[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := appendItemJSON([]byte("prefix"), &items[i]); string(got) != "prefix"+string(want) {
			t.Errorf("item %d:\ngot  %s\nwant prefix%s", i, got, want)
		}
	}
}
