package runs

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Each item keeps its overall as the engine writes its scores, equal to
// the one computed from them (store.ItemOverall, the SQL definition) after
// every path that writes an item's scores: the answer (its checks), the
// verdict, a retry of failed judging, and a rejudge, which leaves the
// overall unknown until the statistics next read it. A human grade writes
// no score and leaves the overall as it was.
func TestStoredOverallEqualsComputed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var judgeFails atomic.Bool
		judgeFails.Store(true)
		b := newBenchWith(t, st, 6, []store.Check{{Type: "contains", Value: "good"}}, func(r llmtest.ChatRequest) llmtest.Reply {
			if !r.IsJudge() {
				return llmtest.Reply{Content: "answer from " + r.Model + "."}
			}
			if strings.Contains(r.Last(), "answer from flaky.") && judgeFails.Load() {
				return llmtest.Reply{Content: "not a verdict"}
			}
			score := 2 + strings.Count(r.Last(), "o")%8 // differs by model
			return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "r"}`, score)}
		})
		run := b.run(t, store.RunInput{SourceWeights: map[string]float64{"judge": 3}}, "good", "flaky")
		checkStoredOveralls(t, st, run, 6, 0)

		judgeFails.Store(false)
		if _, err := b.svc.RetryFailed(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		run = b.waitEnded(t, run.ID)
		checkStoredOveralls(t, st, run, 12, 0)

		items, err := st.RunItems(ctx, run.ID, store.ItemFilter{})
		if err != nil || len(items.Items) == 0 {
			t.Fatalf("items: %v", err)
		}
		if _, err := st.SetGrade(ctx, items.Items[0].ID, store.GradeInput{Grade: store.GradeWrong}); err != nil {
			t.Fatal(err)
		}
		checkStoredOveralls(t, st, run, 12, 0)

		if _, err := b.svc.Rejudge(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		run = b.waitEnded(t, run.ID)
		checkStoredOveralls(t, st, run, 0, 12)
		if _, err := st.TaskOveralls(ctx, run.ID, ItemWeights(run)); err != nil {
			t.Fatal(err)
		}
		checkStoredOveralls(t, st, run, 12, 0)
	})
}

// checkStoredOveralls checks that the run's COMPLETED items number known +
// unknown, and that each known stored overall is the one computed from the
// item's scores.
func checkStoredOveralls(t *testing.T, st *store.Store, run *store.Run, known, unknown int) {
	t.Helper()
	ctx := context.Background()
	rows, err := storetest.DB(t, st).QueryContext(ctx, fmt.Sprintf(
		`SELECT id, overall_sum, overall_weight FROM items WHERE run_id = %d AND status = 'COMPLETED' ORDER BY id`, run.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var gotKnown, gotUnknown int
	for rows.Next() {
		var id int64
		var sum, weight sql.NullFloat64
		if err := rows.Scan(&id, &sum, &weight); err != nil {
			t.Fatal(err)
		}
		if !sum.Valid || !weight.Valid {
			gotUnknown++
			continue
		}
		gotKnown++
		want, err := st.ItemOverall(ctx, run.ID, id, ItemWeights(run))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == nil && weight.Float64 != 0:
			t.Errorf("item %d: stored overall %v / %v, want none", id, sum.Float64, weight.Float64)
		case want != nil && (weight.Float64 <= 0 || !near(sum.Float64/weight.Float64, *want)):
			t.Errorf("item %d: stored overall %v / %v, want %v", id, sum.Float64, weight.Float64, *want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if gotKnown != known || gotUnknown != unknown {
		t.Errorf("completed items with their overall known %d, unknown %d; want %d, %d", gotKnown, gotUnknown, known, unknown)
	}
}
