package report_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"tribunal/report"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestJSONExportItemsMatchPerItemReads: on a mixed run of more than one
// export batch — judged, checked and failed items, grades with notes,
// violations, text that needs escaping — every item line of the JSON
// export is json.Marshal of the item as the per-item reads give it: the
// items page's row, ItemScores, ItemViolations and ItemGrade. The batched
// reads and the hand-written encoder must change nothing.
func TestJSONExportItemsMatchPerItemReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		const tasks = 1100 // × 2 models: more than one batch of the export
		keys := make([]string, tasks)
		ins := make([]store.TaskInput, tasks)
		var results []storetest.ItemResult
		for i := range keys {
			keys[i] = fmt.Sprintf("t%04d", i)
			ins[i] = store.TaskInput{TaskKey: keys[i], Category: "c", Question: fmt.Sprintf("q <%d> & \"quoted\"\n\u2028", i)}
			if i < 250 && i%5 != 0 { // FixedRun judges within its first page of 500 items; the rest stay NEW
				results = append(results, storetest.ItemResult{Model: "a", Task: keys[i], Overall: float64(i%10) / 10, TimeMs: int64(i)})
			}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		run := storetest.FixedRun(t, st, "mixed", p.ID, []string{"a", "b"}, keys, results)
		var ids []int64
		err = st.EachRunItem(ctx, run.ID, func(v *store.ItemView) error { ids = append(ids, v.ID); return nil })
		if err != nil || len(ids) != 2*tasks {
			t.Fatalf("%d items, %v", len(ids), err)
		}
		judge := run.Judges[0].ID
		for k, id := range ids {
			switch k % 7 {
			case 1:
				storetest.Exec(t, st, `UPDATE items SET response = ?, error = ? WHERE id = ?`, "=1+1, \"a\"\n<b>", "", id)
				storetest.Exec(t, st, `UPDATE scores SET reasoning = ? WHERE item_id = ?`, "why <&> é\u2029", id)
			case 2:
				storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, source, metric, score, created_at)
					SELECT run_id, id, run_target_id, 'check:contains', 'contains', 1e-7, CURRENT_TIMESTAMP FROM items WHERE run_id = ? AND id = ?`, run.ID, id)
			case 3:
				storetest.Exec(t, st, `UPDATE items SET status = 'FAILED', failed_phase = 'judge', error = ? WHERE id = ?`, "-boom\nline two", id)
			case 4:
				if _, err := st.SetGrade(ctx, id, store.GradeInput{Grade: "partial", Notes: "close, \"but\" <no>"}); err != nil {
					t.Fatal(err)
				}
			case 5:
				for _, c := range []string{"format", "under_min"} {
					storetest.Exec(t, st, `INSERT INTO violations (run_id, item_id, run_judge_id, category, detail, created_at) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)`,
						run.ID, id, judge, c, "detail, <"+c+">")
				}
			}
		}
		var buf bytes.Buffer
		if err := report.WriteJSON(ctx, &buf, runs.New(st, nil), run.ID); err != nil {
			t.Fatal(err)
		}
		got := itemLines(t, buf.Bytes())
		want := perItemLines(t, st, run.ID)
		if len(got) != len(want) || len(got) != 2*tasks {
			t.Fatalf("%d item lines, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("item %d:\nexport   %s\nper item %s", i, got[i], want[i])
			}
		}
	})
}

// itemLines are the JSON export's item lines, without their separators.
func itemLines(t *testing.T, doc []byte) []string {
	t.Helper()
	var out []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == `"items":[`:
			in = true
		case in && line != "]}":
			out = append(out, string(bytes.TrimSuffix([]byte(line), []byte(","))))
		}
	}
	return out
}

// perItemLines encodes each item of a run from the per-item reads.
func perItemLines(t *testing.T, st *store.Store, runID int64) []string {
	t.Helper()
	ctx := context.Background()
	judges, err := st.RunJudges(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int64]string{}
	for _, j := range judges {
		names[j.ID] = j.Name
	}
	var out []string
	f := store.ItemFilter{PerPage: 500}
	for {
		page, err := st.RunItems(ctx, runID, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == 0 {
			return out
		}
		for i := range page.Items {
			v := &page.Items[i]
			it := report.Item{ItemRow: runs.RowOf(v), Scores: []report.Score{}, Violations: []store.ViolationView{}}
			scores, err := st.ItemScores(ctx, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range scores {
				it.Scores = append(it.Scores, report.Score{Judge: s.Judge, Metric: s.Metric, Score: s.Score, Reasoning: s.Reasoning})
			}
			vs, err := st.ItemViolations(ctx, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range vs {
				it.Violations = append(it.Violations, store.ViolationView{Judge: names[x.RunJudgeID], Category: x.Category, Detail: x.Detail})
			}
			if g, err := st.ItemGrade(ctx, v.ID); err == nil && g != nil {
				it.GradeNotes = g.Notes
			}
			line, err := json.Marshal(&it)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(line))
		}
		f.AfterID = page.Items[len(page.Items)-1].ID
	}
}
