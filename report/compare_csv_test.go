package report_test

import (
	"bytes"
	"encoding/csv"
	"testing"

	"tribunal/analysis"
	"tribunal/report"
	"tribunal/runs"
	"tribunal/store"
)

// TestComparisonCSVDefusesFormulas: a comparison's CSV writes what models
// and users wrote (answers, task ids, categories, run, provider and model
// names) so that a spreadsheet shows it and never runs it.
func TestComparisonCSVDefusesFormulas(t *testing.T) {
	answer := `=HYPERLINK("http://evil.example","click")`
	score := 7.0
	c := &runs.Comparison{
		Entries: []analysis.EntryStats{{Entry: analysis.Entry{RunID: 1, RunName: "+run", Provider: "@prov", Model: "-m"}}},
		Tasks: store.Page[analysis.TaskAnswers]{Items: []analysis.TaskAnswers{{
			TaskRow: analysis.TaskRow{TaskID: "=t1", Category: "-cat", Results: []*store.TaskResult{{Score: &score, Scored: 1}}},
			Answers: []*string{&answer}}}},
	}
	var buf bytes.Buffer
	if err := report.WriteComparisonCSV(&buf, c); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	want := map[string]string{"task_id": "'=t1", "category": "'-cat", "run": "'+run", "provider": "'@prov", "model": "'-m", "answer": "'" + answer, "score": "7"}
	for i, name := range rows[0] {
		if w, ok := want[name]; ok && rows[1][i] != w {
			t.Errorf("%s = %q, want %q", name, rows[1][i], w)
		}
	}
}
