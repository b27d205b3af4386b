package runs

import (
	"context"
	"strings"
	"sync"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestTaskBenchStyleViolations runs the built-in TaskBench style end to end
// with the fake judge: a fixed reply scores 0.4·80 + 0.3·90 + 0.3·60 = 77,
// its violations are counted per model and category, and a malformed
// violations list still scores, with a note kept.
func TestTaskBenchStyleViolations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const tasks = 3
		var mu sync.Mutex
		var asked []string // the judge's system prompts
		b := newBenchWith(t, st, tasks, nil, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() {
				return llmtest.Reply{Content: "answer from " + r.Model + "."}
			}
			mu.Lock()
			asked = append(asked, r.Messages[0].Content)
			mu.Unlock()
			scores := `"accuracy": {"score": 80, "reasoning": "a"}, "format": {"score": 90, "reasoning": "f"}, "compliance": {"score": 60, "reasoning": "c"}`
			if strings.Contains(r.Last(), "answer from tidy.") {
				return llmtest.Reply{Content: `{` + scores + `, "violations": [{"category": "under_min", "detail": "12 words, 20 asked"},
					{"category": "format", "detail": "no list"}, {"category": "FORMAT", "detail": "no title"}, {"category": "tone", "detail": "curt"}]}`}
			}
			return llmtest.Reply{Content: `{` + scores + `, "violations": "none that I saw"}`}
		})
		styles, err := st.Styles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var style *store.JudgementStyle
		for i := range styles {
			if styles[i].Name == store.TaskBenchStyleName {
				style = &styles[i]
			}
		}
		if style == nil || !style.Builtin || style.ScaleMin != 0 || style.ScaleMax != 100 || !style.AsksViolations || len(style.Metrics) != 3 {
			t.Fatalf("built-in TaskBench style = %+v", style)
		}
		j, err := st.CreateJudge(ctx, store.JudgeInput{Name: "taskbench", ProviderID: b.provider, Model: "fake-judge", StyleID: style.ID})
		if err != nil {
			t.Fatal(err)
		}
		run := b.run(t, store.RunInput{JudgeIDs: []int64{j.ID}}, "tidy", "sloppy")
		prog, sum := b.summary(t, run)
		if run.Status != store.RunFinished || prog.Judged != 2*tasks || prog.Failed != 0 {
			t.Fatalf("run %s, progress %+v: a malformed violations list must not fail an item", run.Status, prog)
		}
		if len(asked) != 2*tasks {
			t.Fatalf("%d judge calls; want %d", len(asked), 2*tasks)
		}
		for _, p := range asked {
			if !strings.Contains(p, "- under_min: ") || !strings.Contains(p, `"violations": [{"category"`) {
				t.Fatalf("the judge was not asked for violations:\n%s", p)
			}
		}
		for _, model := range []string{"tidy", "sloppy"} {
			if m := overallOf(t, run, sum, model); m.Overall == nil || !near(*m.Overall, 77) {
				t.Errorf("%s overall = %v; want 77", model, m.Overall)
			}
		}

		if sum.Violations == nil {
			t.Fatal("no violations in the summary of a run whose judge lists them")
		}
		tidy, sloppy := overallOf(t, run, sum, "tidy").TargetID, overallOf(t, run, sum, "sloppy").TargetID
		byTarget := map[int64]ModelViolations{}
		for _, m := range sum.Violations.PerModel {
			byTarget[m.TargetID] = m
		}
		want := map[string]ViolationTally{
			rubric.ViolationUnderMin: {Violations: tasks, Items: tasks},
			rubric.ViolationFormat:   {Violations: 2 * tasks, Items: tasks},
			rubric.ViolationOther:    {Violations: tasks, Items: tasks},
		}
		got := byTarget[tidy]
		if len(got.ByCategory) != len(want) || got.Total != 4*tasks {
			t.Errorf("tidy's violations = %+v; want %+v", got, want)
		}
		for c, w := range want {
			if got.ByCategory[c] != w {
				t.Errorf("tidy %s = %+v; want %+v", c, got.ByCategory[c], w)
			}
		}
		if s := byTarget[sloppy]; s.Total != 0 || len(s.ByCategory) != 0 || sum.Violations.Total != 4*tasks {
			t.Errorf("sloppy's violations = %+v, total %d", s, sum.Violations.Total)
		}

		// The malformed list left its note on the verdict's overall score.
		page, err := b.svc.Items(ctx, run, store.ItemFilter{Model: "sloppy"})
		if err != nil || len(page.Items) != tasks {
			t.Fatalf("sloppy's items: %+v %v", page, err)
		}
		rows, err := st.ItemScoreRows(ctx, page.Items[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var note string
		for _, r := range rows {
			if r.Metric == rubric.Overall {
				note = r.Note
			}
		}
		if note != "the judge's violations were not a list; none were kept" {
			t.Errorf("note = %q", note)
		}
	})
}
