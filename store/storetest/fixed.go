package storetest

import (
	"context"
	"testing"

	"tribunal/store"
)

// ItemResult is what one item of a fixed run holds once judged: its
// overall (0–1, given as every judge metric's normalised score, so it is the
// item's overall whatever the metrics' weights), time, cost and speed.
type ItemResult struct {
	Model, Task string // the target's model and the task's key
	Overall     float64
	TimeMs      int64
	CostUSD     *float64
	TokensPerS  float64
}

// FixedRun creates a run of the tasks (by key, in one new collection named
// after the run) over the provider's models, judged by the provider's model
// "judge" with the default style, and finishes it with exactly the results
// given, for tests that check figures computed from runs. Items without a
// result stay NEW (never answered). Make fixed runs before starting an
// engine on the store, or it may claim their items.
func FixedRun(t testing.TB, st *store.Store, name string, provider int64, models, tasks []string, results []ItemResult) *store.Run {
	t.Helper()
	ctx := context.Background()
	refs := make([]store.TaskRef, len(tasks))
	for i, k := range tasks {
		refs[i] = store.TaskRef{Key: k}
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "run " + name, TaskIDs: &refs})
	if err != nil {
		t.Fatal(err)
	}
	in := store.RunInput{Name: name, Judge: &store.ModelRef{ProviderID: provider, Model: "judge"}, CollectionIDs: []int64{col.ID}}
	for _, m := range models {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: provider, Model: m})
	}
	run, err := st.CreateRun(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.RunItems(ctx, run.ID, store.ItemFilter{PerPage: 1000})
	if err != nil {
		t.Fatal(err)
	}
	items := map[[2]string]int64{}
	for _, it := range page.Items {
		items[[2]string{it.Model, it.TaskID}] = it.ID
	}
	j := run.Judges[0]
	metrics := []string{"score"}
	for _, m := range j.Metrics {
		if m.Name != "score" {
			metrics = append(metrics, m.Name)
		}
	}
	for _, r := range results {
		id, ok := items[[2]string{r.Model, r.Task}]
		if !ok {
			t.Fatalf("run %q has no item of %s on %s", name, r.Model, r.Task)
		}
		exec(t, st, `UPDATE items SET status = ?, time_ms = ?, cost_usd = ?, tokens_per_s = ? WHERE id = ?`,
			string(store.ItemCompleted), r.TimeMs, r.CostUSD, r.TokensPerS, id)
		score := float64(j.ScaleMin) + r.Overall*float64(j.ScaleMax-j.ScaleMin)
		for _, m := range metrics {
			exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, created_at)
				SELECT ?, ?, run_target_id, LENGTH(COALESCE(response, '')), ?, ?, ?, ?, CURRENT_TIMESTAMP FROM items WHERE id = ?`,
				run.ID, id, j.ID, j.Source(), m, score, id)
		}
	}
	// Set at once: a running engine could start the run between two steps.
	exec(t, st, `UPDATE runs SET status = ?, started_at = CURRENT_TIMESTAMP, finished_at = CURRENT_TIMESTAMP WHERE id = ?`,
		string(store.RunFinished), run.ID)
	if run, err = st.Run(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	return run
}
