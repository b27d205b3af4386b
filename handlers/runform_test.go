package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestNewRunFormOptions posts the new-run form with a judge panel, target
// settings, repeats, weights and checks, and reads the run it created.
func TestNewRunFormOptions(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "t", Category: "c", Question: "q", Reference: "r", Checks: []store.Check{{Type: "contains"}}})
	if err != nil {
		t.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	var judges []string
	for _, name := range []string{"A", "B"} {
		j, err := st.CreateJudge(ctx, store.JudgeInput{Name: name, ProviderID: p.ID, Model: "fake-judge"})
		if err != nil {
			t.Fatal(err)
		}
		judges = append(judges, fmt.Sprint(j.ID))
	}
	form := url.Values{"name": {"form run"}, "judge_ids": judges, "target_provider_id": {fmt.Sprint(p.ID)}, "target_model": {"fake-small"},
		"target_temperature": {"0.2"}, "target_max_tokens": {"64"}, "target_reasoning_effort": {"low"}, "target_system_prompt": {"Be terse."},
		"collection_ids": {fmt.Sprint(col.ID)}, "repeats": {"3"}, "weights": {"accuracy=2, check_contains=0.5"},
		"system_prompt": {"You are helpful."}, "metrics": {"check_contains"}}

	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad["weights"] = []string{"accuracy"}
	res, doc := a.post(t, "/runs", bad, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=new-run-form]").Text(), "metric=weight") {
		t.Fatalf("bad weights: status %d", res.StatusCode)
	}
	if v, _ := doc.Find("[data-testid=weights]").Attr("value"); v != "accuracy" {
		t.Errorf("the refused form lost the weights typed: %q", v)
	}

	res, _ = a.post(t, "/runs", form, nil)
	if res.StatusCode >= 400 {
		t.Fatalf("form run: status %d", res.StatusCode)
	}
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil || runs.Total != 1 {
		t.Fatalf("runs %d %v", runs.Total, err)
	}
	run, err := st.Run(ctx, runs.Items[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	tg := run.Targets[0].Settings
	if len(run.Judges) != 2 || run.Repeats != 3 || run.Options.Weights["accuracy"] != 2 || run.Options.Weights["check_contains"] != 0.5 ||
		run.Options.SystemPrompt != "You are helpful." || *tg.Temperature != 0.2 || *tg.MaxTokens != 64 || tg.ReasoningEffort != "low" ||
		tg.SystemPrompt != "Be terse." || len(run.Options.Metrics) != 1 {
		t.Errorf("run from the form: %+v / %+v / %+v", run.Options, run.Targets[0].Settings, run.Judges)
	}
}
