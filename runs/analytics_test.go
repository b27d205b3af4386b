package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// A model's token spread comes out exactly (mean, the median of an even
// count as the mean of the middle two, the population std), and its time
// spread is over its answered items.
func TestModelSpreads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		// Task i's answer reports 100·(i+1) completion tokens: 100, 200, 300, 400.
		b := newBenchWith(t, st, 4, nil, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 7, "reasoning": "fine"}`}
			}
			var i int
			if _, err := fmt.Sscanf(r.Last(), "What is %d+", &i); err != nil {
				return llmtest.Reply{Content: "ready"} // the warm-up
			}
			return llmtest.Reply{Content: "answer", Tokens: int64(100 * (i + 1))}
		})
		run := b.run(t, store.RunInput{}, "m")
		_, sum := b.summary(t, run)
		if len(sum.Models) != 1 {
			t.Fatalf("models %+v", sum.Models)
		}
		m := sum.Models[0]
		want := Spread{Mean: 250, Median: 250, Std: math.Sqrt(12500), Min: 100, Max: 400, N: 4}
		if m.Tokens == nil || !near(m.Tokens.Mean, want.Mean) || !near(m.Tokens.Median, want.Median) || !near(m.Tokens.Std, want.Std) ||
			m.Tokens.Min != want.Min || m.Tokens.Max != want.Max || m.Tokens.N != want.N {
			t.Errorf("tokens %+v, want %+v", m.Tokens, want)
		}
		if tm := m.TimeMs; tm == nil || tm.N != 4 || tm.Min > tm.Median || tm.Median > tm.Max || tm.Std < 0 {
			t.Errorf("time %+v: want 4 answers, min ≤ median ≤ max", tm)
		}
		if m.PromptTokens == nil || m.PromptTokens.N != 4 || m.PromptTokens.Min <= 0 {
			t.Errorf("prompt tokens %+v", m.PromptTokens)
		}
	})
}

// spreadOf and gradesOf: nothing measured or graded reads nil, not zero.
func TestSpreadAndGradesOfNothing(t *testing.T) {
	if s := spreadOf(store.Moments{}); s != nil {
		t.Errorf("spread of nothing %+v", s)
	}
	g := gradesOf(store.TargetGrades{}, 3)
	if g.Ungraded != 3 || g.Accuracy != nil || g.Weighted != nil {
		t.Errorf("grades of nothing %+v", g)
	}
	// Equal values: E[x²] − mean² may round below zero; the std is 0, not NaN.
	if s := spreadOf(store.Moments{N: 3, Sum: 0.3, SumSq: 0.03, Min: 0.1, Max: 0.1, Median: 0.1}); s == nil || s.Std != 0 {
		t.Errorf("spread of equal values %+v", s)
	}
}

// A grade of an ended run's item shows on the next view of its summary, in
// this process and another, and the stored snapshot is restamped with it.
func TestGradesRefreshTheSnapshot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, 4, map[string]int{"good": 9, "bad": 2}, nil)
		run := b.run(t, store.RunInput{}, "good", "bad")
		other := New(st, nil) // another process, which has read the snapshot before the grades
		if _, sum, err := other.Results(ctx, run); err != nil || sum.Models[0].Grades.Ungraded != 4 || sum.Models[0].Grades.Accuracy != nil {
			t.Fatalf("before grading: %+v, %v", sum.Models[0].Grades, err)
		}
		_, sum := b.summary(t, run)
		good := sum.Models[0].TargetID
		page, err := st.RunItems(ctx, run.ID, store.ItemFilter{Model: "good"})
		if err != nil || len(page.Items) != 4 {
			t.Fatalf("items %+v, %v", page.Items, err)
		}
		for i, g := range []string{store.GradeCorrect, store.GradePartial, store.GradeWrong} {
			if _, err := st.SetGrade(ctx, page.Items[i].ID, store.GradeInput{Grade: g}); err != nil {
				t.Fatal(err)
			}
		}
		check := func(who string, sum *Summary) {
			t.Helper()
			for _, m := range sum.Models {
				g := m.Grades
				if m.TargetID != good {
					if g.Correct+g.Partial+g.Wrong != 0 || g.Ungraded != 4 {
						t.Errorf("%s: the ungraded model's grades %+v", who, g)
					}
					continue
				}
				if g.Correct != 1 || g.Partial != 1 || g.Wrong != 1 || g.Ungraded != 1 ||
					g.Accuracy == nil || !near(*g.Accuracy, 1.0/3) || g.Weighted == nil || !near(*g.Weighted, 0.5) {
					t.Errorf("%s: grades %+v (accuracy %v, weighted %v), want 1/1/1 of 4, accuracy 1/3, weighted 0.5", who, g, g.Accuracy, g.Weighted)
				}
			}
		}
		_, sum = b.summary(t, run)
		check("this process", sum)
		_, sum, err = other.Results(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		check("another process", sum)
		stamp, body, err := st.SummarySnapshot(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		grades, err := st.GradeStamp(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, g := splitStamp(stamp); g != grades {
			t.Errorf("snapshot stamped %q, want the grades %q", stamp, grades)
		}
		snap := snapshot{Summary: &Summary{}}
		if err := json.Unmarshal(body, &snap); err != nil {
			t.Fatal(err)
		}
		check("the snapshot", snap.Summary)
	})
}
