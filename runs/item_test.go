package runs

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestItem: an item's detail holds its task, the answer, the judge's prompt
// (with the answer in it), raw reply and scores, its checks, an overall that
// agrees with the run's per-task overalls, and its place in a filtered list.
func TestItem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := newBench(t, st, 3, map[string]int{"good": 9, "bad": 2}, []store.Check{{Type: "contains", Value: "answer"}})
		run := b.run(t, store.RunInput{}, "good", "bad")
		page, err := st.RunItems(ctx, run.ID, store.ItemFilter{Model: "good"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 3 {
			t.Fatalf("%d items of good, want 3", len(page.Items))
		}
		first, second := page.Items[0], page.Items[1]
		d, err := b.svc.Item(ctx, first.ID, store.ItemFilter{Model: "good"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Task.TaskID != first.TaskID || d.Model != "good" || len(d.Turns) != 1 || d.Turns[0].Answer != "answer from good." {
			t.Fatalf("item: %+v", d)
		}
		if len(d.Judges) != 1 || !d.Judges[0].Judged || d.Judges[0].Score == nil || *d.Judges[0].Score != 9 {
			t.Fatalf("judges: %+v", d.Judges)
		}
		j := d.Judges[0]
		if len(j.Prompt) != 2 || !strings.Contains(j.Prompt[1].Content, "answer from good.") || !strings.Contains(j.Raw, `"score": 9`) {
			t.Fatalf("judge prompt and raw reply: %+v", j)
		}
		if d.Attempts.Answer != 1 || d.Attempts.Judge != 1 {
			t.Errorf("attempts: %+v", d.Attempts)
		}

		tasks, err := st.TaskOveralls(ctx, run.ID, ItemWeights(run))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, it := range page.Items {
			d, err := b.svc.Item(ctx, it.ID, store.ItemFilter{})
			if err != nil {
				t.Fatal(err)
			}
			want := (9.0 - 1) / (10 - 1) // the judge's 9 on 1–10
			if len(d.Checks) == 1 {
				checked++
				if d.Checks[0].Score != 1 || d.Checks[0].Weight != 1 {
					t.Errorf("check: %+v", d.Checks[0])
				}
				want = (want + 1) / 2
			}
			if d.Overall == nil || math.Abs(*d.Overall-want*100) > 1e-9 {
				t.Errorf("item %d overall %v, want %v", it.ID, d.Overall, want*100)
			}
			agrees := false // with the summary's own figure for this target's tasks
			for _, to := range tasks {
				agrees = agrees || to.RunTargetID == d.TargetID && d.Overall != nil && math.Abs(to.Overall*100-*d.Overall) < 1e-9
			}
			if !agrees {
				t.Errorf("item %d overall %v matches none of the run's task overalls %+v", it.ID, d.Overall, tasks)
			}
		}
		if checked != 1 {
			t.Errorf("%d items with a check, want 1", checked)
		}

		want := ItemPlace{Prev: 0, Next: second.ID, InList: true}
		if d.Place != want {
			t.Errorf("place in good's items: %+v, want %+v", d.Place, want)
		}
		d2, err := b.svc.Item(ctx, second.ID, store.ItemFilter{Model: "good"})
		if err != nil {
			t.Fatal(err)
		}
		if d2.Place.Prev != first.ID || d2.Place.Next != page.Items[2].ID || !d2.Place.InList {
			t.Errorf("second item's place: %+v", d2.Place)
		}
		d3, err := b.svc.Item(ctx, first.ID, store.ItemFilter{Status: store.ItemFailed})
		if err != nil {
			t.Fatal(err)
		}
		if d3.Place != (ItemPlace{}) {
			t.Errorf("place among failed items (none): %+v", d3.Place)
		}
		// A failure group's filter the item is not in.
		d4, err := b.svc.Item(ctx, first.ID, store.ItemFilter{Model: "good", Phase: store.PhaseJudging, Reason: "timeout"})
		if err != nil {
			t.Fatal(err)
		}
		if d4.Place != (ItemPlace{}) {
			t.Errorf("place in a failure group the item is not in: %+v", d4.Place)
		}

		var nf *store.NotFoundError
		if _, err := b.svc.Item(ctx, 1<<40, store.ItemFilter{}); !errors.As(err, &nf) {
			t.Errorf("missing item: %v, want NotFoundError", err)
		}
	})
}
