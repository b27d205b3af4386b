package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestWatchKPIValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 1)
		col := *run.Collections[0].CollectionID
		k, err := st.CreateKPI(ctx, store.KPIInput{Name: "Quality", Formula: "WEIGHTED_SUM(accuracy:0.5, coherence:0.5) * pass_rate", CollectionID: &col})
		if err != nil || k.Revision != 1 {
			t.Fatalf("create: %+v %v", k, err)
		}
		missing := int64(999)
		for _, tt := range []struct {
			in         store.KPIInput
			field, msg string
		}{
			{store.KPIInput{Name: "x", Formula: "accuracy +"}, "formula", "column 11: expected a value after '+'"},
			{store.KPIInput{Name: "x", Formula: "acuracy * 2"}, "formula", `column 1: unknown metric "acuracy"`},
			{store.KPIInput{Name: "x", Formula: "MIN() + bogus"}, "formula", "and 1 more problem"},
			{store.KPIInput{Name: "x", Formula: " "}, "formula", "is required"},
			{store.KPIInput{Name: "", Formula: "score"}, "name", "is required"},
			{store.KPIInput{Name: "x", Formula: "score", CollectionID: &col, ScheduleID: &col}, "schedule_id", "not both"},
			{store.KPIInput{Name: "x", Formula: "score", CollectionID: &missing}, "collection_id", "no collection with id 999"},
		} {
			_, err := st.CreateKPI(ctx, tt.in)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Message, tt.msg) {
				t.Errorf("%+v: %v, want %s …%s…", tt.in, err, tt.field, tt.msg)
			}
		}
		if _, err := st.CreateKPI(ctx, store.KPIInput{Name: "Quality", Formula: "score"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate: %v", err)
		}
		// A style's metric becomes a known name.
		if v, _ := st.ValidateFormula(ctx, "helpfulness"); v.OK {
			t.Fatalf("helpfulness known before any style has it")
		}
		if _, err := st.CreateStyle(ctx, store.StyleInput{Name: "Help", ScaleMin: 1, ScaleMax: 5,
			Metrics: []store.Metric{{Name: "helpfulness", Weight: 1}}, PromptTemplate: "{{.Question}} {{.Response}}"}); err != nil {
			t.Fatal(err)
		}
		if v, _ := st.ValidateFormula(ctx, "HELPFULNESS / 5 + check_exact_match + error_rate"); !v.OK {
			t.Errorf("custom metric, check and built-in: %+v", v)
		}
	})
}

// TestWatchKPIScopeAndValues: KPIs apply to every run, a collection's or a
// schedule's runs; stored values come back by run; editing a formula
// drops the values to recompute.
func TestWatchKPIScopeAndValues(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 2)
		col := *run.Collections[0].CollectionID
		other, _ := st.CreateCollection(ctx, store.CollectionInput{Name: "other"})
		global, _ := st.CreateKPI(ctx, store.KPIInput{Name: "G", Formula: "score"})
		mine, _ := st.CreateKPI(ctx, store.KPIInput{Name: "Mine", Formula: "score * 2", CollectionID: &col})
		if _, err := st.CreateKPI(ctx, store.KPIInput{Name: "Theirs", Formula: "score", CollectionID: &other.ID}); err != nil {
			t.Fatal(err)
		}
		ks, err := st.KPIsForRun(ctx, run)
		if err != nil || len(ks) != 2 || ks[0].ID != global.ID || ks[1].ID != mine.ID {
			t.Fatalf("KPIs for the run: %+v %v", ks, err)
		}
		v := 7.0
		metrics := []store.RunMetric{{Metric: "score", Value: 7}, {Model: "p / m0", ModelName: "m0", Metric: "score", Value: 7}}
		values := []store.KPIValue{{KPIID: global.ID, Value: &v}, {KPIID: global.ID, Model: "p / m0", ModelName: "m0", Error: `missing metric "x"`},
			{KPIID: mine.ID, Value: &v}}
		if err := st.SaveRunEvaluation(ctx, run.ID, metrics, values); err != nil {
			t.Fatal(err)
		}
		if err := st.SaveRunEvaluation(ctx, run.ID, metrics, values); err != nil { // replaces, does not duplicate
			t.Fatal(err)
		}
		got, err := st.RunKPIValues(ctx, run.ID)
		if err != nil || len(got) != 2 || got[0].Name != "G" || *got[0].Value != 7 || len(got[0].PerModel) != 1 ||
			got[0].PerModel[0].Error == "" || got[1].Name != "Mine" {
			t.Fatalf("run KPI values: %+v %v", got, err)
		}
		ids, err := st.KPIRuns(ctx, mine)
		if err != nil || len(ids) != 1 || ids[0] != run.ID {
			t.Fatalf("KPI runs: %v %v", ids, err)
		}
		if trend, _ := st.KPITrend(ctx, global.ID, 10); len(trend) != 2 || trend[0].RunName == "" {
			t.Errorf("trend: %+v", trend)
		}
		latest, _ := st.LatestKPIValues(ctx)
		if latest[global.ID].RunID != run.ID || *latest[global.ID].Value != 7 {
			t.Errorf("latest: %+v", latest)
		}
		k, recomputed, err := st.UpdateKPI(ctx, mine.ID, store.KPIInput{Name: "Mine", Formula: "score * 3", CollectionID: &col})
		if err != nil || !recomputed || k.Revision != 2 {
			t.Fatalf("update: %+v %v %v", k, recomputed, err)
		}
		if got, _ := st.RunKPIValues(ctx, run.ID); len(got) != 1 {
			t.Errorf("values of the old formula kept: %+v", got)
		}
		if _, recomputed, _ := st.UpdateKPI(ctx, mine.ID, store.KPIInput{Name: "Mine!", Formula: "score * 3", CollectionID: &col}); recomputed {
			t.Errorf("a rename recomputed the values")
		}
	})
}

// TestWatchEvaluationClaims: each ended run is claimed for evaluation once
// per time it finishes; an expired claim is taken over.
func TestWatchEvaluationClaims(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 1)
		now := time.Now()
		claim := func(worker string, at time.Time) []store.EvalTask {
			t.Helper()
			ts, err := st.ClaimEvaluations(ctx, worker, time.Minute, 10, at, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			return ts
		}
		if ts := claim("a", now); len(ts) != 0 {
			t.Fatalf("claimed a running run: %+v", ts)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunFinished, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		ts := claim("a", now)
		if len(ts) != 1 || ts[0].RunID != run.ID || ts[0].Status != store.RunFinished {
			t.Fatalf("claim: %+v", ts)
		}
		if ts := claim("b", now); len(ts) != 0 {
			t.Fatalf("claimed twice: %+v", ts)
		}
		if ts := claim("b", now.Add(2*time.Minute)); len(ts) != 1 {
			t.Fatalf("an expired claim was not taken over: %+v", ts)
		}
		if err := st.FinishEvaluation(ctx, run.ID, "a", "", now); err != nil { // a's claim was taken: no effect
			t.Fatal(err)
		}
		if err := st.FinishEvaluation(ctx, run.ID, "b", "", now.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if ts := claim("c", now.Add(time.Hour)); len(ts) != 0 {
			t.Fatalf("evaluated twice: %+v", ts)
		}
		// Judging retried: the run finishes again and is evaluated again.
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunRunning, store.RunFinished); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // finished_at must differ from the first
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunFinished, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		if ts := claim("c", now.Add(time.Hour)); len(ts) != 1 {
			t.Fatalf("a run that finished again was not claimed: %+v", ts)
		}
	})
}
