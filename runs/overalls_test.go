package runs

import (
	"context"
	"fmt"
	"math"
	"testing"

	"tribunal/analysis"
	"tribunal/store"
	"tribunal/store/storetest"
)

// overallsTasks is more tasks than a bootstrap interval is drawn over
// (analysis's bootstrapMax, 2,000), so that a model answering all of them
// has its interval from the database's sums.
const overallsTasks = 2100

// A model's overall and interval are the same whether its task overalls are
// summed in the database (many tasks) or read one by one (few): here
// "many" scores on all 2,100 tasks and "few" on about half, and both are
// checked against analysis.MeanCI over the task overalls themselves.
func TestOverallsFromSumsEqualTheTasks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "prov", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		ins := make([]store.TaskInput, overallsTasks)
		refs := make([]store.TaskRef, overallsTasks)
		for i := range ins {
			ins[i] = store.TaskInput{TaskKey: fmt.Sprintf("t-%05d", i), Category: "c", Question: "q"}
			refs[i] = store.TaskRef{Key: ins[i].TaskKey}
		}
		if err := st.CreateTasks(ctx, ins); err != nil {
			t.Fatal(err)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "all", TaskIDs: &refs})
		if err != nil {
			t.Fatal(err)
		}
		run, err := st.CreateRun(ctx, store.RunInput{Name: "r", CollectionIDs: []int64{col.ID},
			Judge:   &store.ModelRef{ProviderID: p.ID, Model: "judge"},
			Targets: []store.ModelRef{{ProviderID: p.ID, Model: "many"}, {ProviderID: p.ID, Model: "few"}}})
		if err != nil {
			t.Fatal(err)
		}
		weights := ItemWeights(run)
		// "few" fails on about half of its tasks before it is scored.
		storetest.Exec(t, st, `UPDATE items SET status = 'FAILED' WHERE run_target_id = ? AND id % 2 = 0`, run.Targets[1].ID)
		if _, err := st.CompleteSynthetic(ctx, run.ID, weights); err != nil {
			t.Fatal(err)
		}

		tasks, err := st.TaskOveralls(ctx, run.ID, weights)
		if err != nil {
			t.Fatal(err)
		}
		xs, scored := map[int64][]float64{}, map[int64]int64{}
		for _, o := range tasks {
			xs[o.RunTargetID] = append(xs[o.RunTargetID], o.Overall*100)
			scored[o.RunTargetID] += o.Items
		}
		few := run.Targets[1].ID
		only, err := st.TaskOveralls(ctx, run.ID, weights, few)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range only {
			if o.RunTargetID != few {
				t.Fatalf("the task overalls of target %d hold target %d's", few, o.RunTargetID)
			}
		}
		if len(only) != len(xs[few]) {
			t.Errorf("target %d: %d task overalls, want %d", few, len(only), len(xs[few]))
		}
		counts, err := st.RunProgress(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := overallsOf(ctx, st, run, counts.Total, weights)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range run.Targets {
			n := len(xs[tg.ID])
			if tg.Model == "many" && n <= 2000 || tg.Model == "few" && (n > 2000 || n < 100) {
				t.Fatalf("%s: %d tasks scored, not the case this test is about", tg.Model, n)
			}
			want := analysis.MeanCI(xs[tg.ID])
			o := got[tg.ID]
			if o.est == nil {
				t.Fatalf("%s: no overall", tg.Model)
			}
			if o.scored != scored[tg.ID] || o.est.N != want.N {
				t.Errorf("%s: %d items over %d tasks, want %d over %d", tg.Model, o.scored, o.est.N, scored[tg.ID], want.N)
			}
			for _, v := range [][2]float64{{o.est.Mean, want.Mean}, {o.est.Lo, want.Lo}, {o.est.Hi, want.Hi}} {
				if math.Abs(v[0]-v[1]) > 1e-9 {
					t.Errorf("%s: overall %.12f [%.12f, %.12f], want %.12f [%.12f, %.12f]", tg.Model,
						o.est.Mean, o.est.Lo, o.est.Hi, want.Mean, want.Lo, want.Hi)
					break
				}
			}
		}
	})
}
