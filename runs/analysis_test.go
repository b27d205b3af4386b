package runs

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"tribunal/analysis"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// A page never waits for the statistics: without compute it gets the cached
// ones or none, and once computed they stay fresh while the run stands still.
func TestAnalysisCachedByStamp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, 5, map[string]int{"good": 8, "bad": 4}, nil)
		run := b.run(t, store.RunInput{}, "good", "bad")
		prog, err := b.svc.Progress(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if _, fresh, ok, err := b.svc.Analysis(ctx, run, prog, false); err != nil || fresh || ok {
			t.Fatalf("before computing: fresh %v ok %v err %v", fresh, ok, err)
		}
		a, fresh, ok, err := b.svc.Analysis(ctx, run, prog, true)
		if err != nil || !fresh || !ok || len(a.Report.Entries) != 2 || len(a.Report.PairTests) != 1 {
			t.Fatalf("computed: fresh %v ok %v err %v report %+v", fresh, ok, err, a.Report)
		}
		again, fresh, ok, err := b.svc.Analysis(ctx, run, prog, false)
		if err != nil || !fresh || !ok || again.Report != a.Report {
			t.Errorf("cached: fresh %v ok %v err %v, same report %v", fresh, ok, err, again.Report == a.Report)
		}
		untrusted, err := b.svc.UntrustedJudges(ctx, run)
		if err != nil || untrusted == nil {
			t.Errorf("untrusted judges %v, %v", untrusted, err)
		}
	})
}

// Compare lines up two runs' models against a baseline run, pages the task
// rows with each entry's answer, and diffs two of those answers.
func TestCompareTwoRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, 5, map[string]int{"good": 8, "bad": 4}, nil)
		r1 := b.run(t, store.RunInput{}, "good", "bad")
		r2 := b.run(t, store.RunInput{}, "good", "bad")
		c, err := b.svc.Compare(ctx, []int64{r1.ID, r2.ID}, r1.ID, analysis.TaskFilter{}, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Runs) != 2 || len(c.Entries) != 4 || len(c.Baselines) != 4 || len(c.PairTests) != 6 ||
			len(c.Categories) != 1 || len(c.Grid) != 4 || c.Grid[0][0] == nil {
			t.Fatalf("comparison %+v", c)
		}
		if c.Tasks.Total != 5 || c.Tasks.Page != 2 || len(c.Tasks.Items) != 2 {
			t.Fatalf("page 2 of 3 rows: %+v", c.Tasks)
		}
		row := c.Tasks.Items[0]
		if row.Question == "" || len(row.Answers) != 4 || row.Answers[0] == nil || row.ItemIDs[0] == 0 || row.ItemIDs[1] == 0 {
			t.Fatalf("task row %+v", row)
		}
		again, err := b.svc.Compare(ctx, []int64{r1.ID, r2.ID}, r1.ID, analysis.TaskFilter{}, 1, 50)
		if err != nil || &again.Entries[0] != &c.Entries[0] {
			t.Errorf("statistics computed again for unchanged runs (err %v)", err)
		}
		d, err := b.svc.Diff(ctx, row.ItemIDs[0], row.ItemIDs[1])
		if err != nil || d.TaskID != row.TaskID || len(d.Ops) == 0 || d.Truncated {
			t.Errorf("diff %+v, %v", d, err)
		}
	})
}

// The run report reads its task results one target at a time: its entries,
// distributions and consistency are those computed over all the rows at
// once, as the report computed them before it streamed.
func TestRunTasksPerTargetEqualsWhole(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var calls atomic.Int64
		b := newBenchWith(t, st, 12, nil, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				// Scores vary by call, so repeats disagree and some tasks are flaky.
				return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "varied"}`, 1+calls.Add(1)*7%10)}
			}
			return llmtest.Reply{Content: "answer from " + r.Model + "."}
		})
		run := b.run(t, store.RunInput{Repeats: 3}, "m1", "m2", "m3")
		results, err := st.TaskResults(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != 3*12 {
			t.Fatalf("%d task results, want %d", len(results), 3*12)
		}
		pass := store.PassThreshold(run.Judges)
		want := runTasks{entries: analysis.Entries(run, pass, results), distributions: map[int64][]float64{},
			consistency: analysis.Consistency(run, results)}
		for _, r := range results {
			if r.Score != nil {
				want.distributions[r.RunTargetID] = append(want.distributions[r.RunTargetID], *r.Score)
			}
		}
		got, err := readRunTasks(ctx, st, run)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("per target:\n%+v\nwhole:\n%+v", got, want)
		}
		var flaky int
		for _, c := range got.consistency {
			flaky += c.Inconsistent
		}
		if flaky == 0 {
			t.Errorf("no flaky task: the test compares nothing that varies (%+v)", got.consistency)
		}
	})
}
