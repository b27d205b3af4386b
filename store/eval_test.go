package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestScoreUniqueness: a score is unique per (item, judge or check, metric),
// and a result write that would repeat one lands nothing.
func TestScoreUniqueness(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 1)
		claim := func(from, to store.ItemStatus) store.Item {
			items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: from, To: to, WorkerID: "w", Lease: 60e9, Limit: 1})
			if err != nil || len(items) != 1 {
				t.Fatalf("claim: %v %v", items, err)
			}
			return items[0]
		}
		it := claim(store.ItemNew, store.ItemInProgress)
		dup := []store.Score{{Source: "check:contains", Metric: "check_contains", Score: 1}, {Source: "check:contains", Metric: "check_contains", Score: 0}}
		if _, err := st.CompleteBenchmark(ctx, &it, store.BenchmarkResult{Request: "{}", Response: "a", Judged: true, Scores: dup}, nil); err == nil {
			t.Fatal("two scores for the same (item, source, metric) were accepted")
		}
		page, _ := st.RunItems(ctx, run.ID, store.ItemFilter{})
		if page.Items[0].Status != store.ItemInProgress {
			t.Fatalf("the item moved on although its scores were refused: %s", page.Items[0].Status)
		}
		ok := []store.Score{{Source: "check:contains", Metric: "check_contains", Score: 1}}
		if _, err := st.CompleteBenchmark(ctx, &it, store.BenchmarkResult{Request: "{}", Response: "a", Judged: true, Scores: ok}, nil); err != nil {
			t.Fatal(err)
		}
		judge := run.Judges[0]
		jt := claim(store.ItemWaitingForJudge, store.ItemJudging)
		v := store.Verdict{Overall: 6, Last: true, Scores: []store.Score{{RunJudgeID: &judge.ID, Source: judge.Source(), Metric: "score", Score: 6, Reasoning: "r"}}}
		if _, err := st.CompleteJudging(ctx, &jt, v, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CompleteJudging(ctx, &jt, v, nil); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("a second verdict for the same claim: %v", err)
		}
		scores, err := st.RunScores(ctx, run.ID, store.ScoreFilter{})
		if err != nil || scores.Total != 2 {
			t.Fatalf("scores %+v %v, want the check and the verdict", scores.Items, err)
		}
		page, _ = st.RunItems(ctx, run.ID, store.ItemFilter{})
		if it := page.Items[0]; it.Status != store.ItemCompleted || it.Score == nil || *it.Score != 6 {
			t.Fatalf("item %+v", it)
		}
	})
}

func TestGradesLastWriteWins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 1)
		page, _ := st.RunItems(ctx, run.ID, store.ItemFilter{})
		id := page.Items[0].ID
		var ve *store.ValidationError
		if _, err := st.SetGrade(ctx, id, store.GradeInput{Grade: "great"}); !errors.As(err, &ve) || ve.Field != "grade" {
			t.Fatalf("bad grade: %v", err)
		}
		if _, err := st.SetGrade(ctx, id+1000, store.GradeInput{Grade: "correct"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("grade of a missing item: %v", err)
		}
		for _, g := range []string{"wrong", "Partial", "correct"} {
			if _, err := st.SetGrade(ctx, id, store.GradeInput{Grade: g, Notes: "n-" + g}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := st.ItemGrade(ctx, id)
		if err != nil || g.Grade != "correct" || g.Notes != "n-correct" || g.RunID != run.ID {
			t.Fatalf("grade %+v %v", g, err)
		}
		page, _ = st.RunItems(ctx, run.ID, store.ItemFilter{})
		if page.Items[0].Grade == nil || *page.Items[0].Grade != "correct" {
			t.Fatalf("items list grade %v", page.Items[0].Grade)
		}
	})
}

func TestStylesAndJudges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		def, err := st.DefaultStyle(ctx)
		if err != nil || def.ScaleMin != 1 || def.ScaleMax != 10 || len(def.Metrics) != 1 || !def.Builtin {
			t.Fatalf("default style %+v %v", def, err)
		}
		if err := st.DeleteStyle(ctx, def.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("deleting a built-in style: %v", err)
		}
		for in, field := range map[*store.StyleInput]string{
			{Name: ""}:                            "name",
			{Name: "x", ScaleMin: 5, ScaleMax: 1}: "metrics",
			{Name: "x", Metrics: []store.Metric{{Name: "Bad Name"}}}:                                    "metrics",
			{Name: "x", PromptTemplate: "{{.Question}} without the answer"}:                             "prompt_template",
			{Name: "x", PromptTemplate: "{{.Response}} {{if}}"}:                                         "prompt_template",
			{Name: "x", PromptTemplate: "{{range 1000}}{{.}}{{range 1000}}{{end}}{{end}}{{.Response}}"}: "prompt_template",
		} {
			var ve *store.ValidationError
			if _, err := st.CreateStyle(ctx, *in); !errors.As(err, &ve) || ve.Field != field {
				t.Errorf("CreateStyle(%+v) = %v; want a %s error", *in, err, field)
			}
		}
		st1, err := st.CreateStyle(ctx, store.StyleInput{Name: "exam", ScaleMin: 0, ScaleMax: 100, Metrics: []store.Metric{{Name: "accuracy"}, {Name: "depth", Description: "goes deep", Weight: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		if st1.Version != 1 || !strings.Contains(st1.Metrics[0].Description, "correct") || st1.Metrics[0].Weight != 1 || st1.PromptTemplate == "" {
			t.Fatalf("style %+v: built-in description, default weight and template expected", st1)
		}
		if _, err := st.CreateStyle(ctx, store.StyleInput{Name: "exam"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate style name: %v", err)
		}
		v2, err := st.UpdateStyle(ctx, st1.ID, store.StyleInput{Name: "exam", ScaleMin: 0, ScaleMax: 10})
		if err != nil || v2.Version != 2 || v2.ID != st1.ID || v2.VersionID == st1.VersionID {
			t.Fatalf("new version %+v %v", v2, err)
		}
		versions, err := st.StyleVersions(ctx, st1.ID)
		if err != nil || len(versions) != 2 || versions[0].Version != 2 || versions[1].ScaleMax != 100 {
			t.Fatalf("versions %+v %v", versions, err)
		}
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		j, err := st.CreateJudge(ctx, store.JudgeInput{ProviderID: p.ID, Model: "m", PersonalityName: "Strict examiner"})
		if err != nil || j.Name != "m (Strict examiner)" || j.StyleID != def.ID || j.Version != 1 {
			t.Fatalf("judge %+v %v", j, err)
		}
		var ve *store.ValidationError
		if _, err := st.CreateJudge(ctx, store.JudgeInput{ProviderID: p.ID, Model: "m", StyleID: 999}); !errors.As(err, &ve) || ve.Field != "style_id" {
			t.Fatalf("judge with a missing style: %v", err)
		}
		j2, err := st.UpdateJudge(ctx, j.ID, store.JudgeInput{ProviderID: p.ID, Model: "m2", StyleID: st1.ID})
		if err != nil || j2.Version != 2 || j2.Model != "m2" {
			t.Fatalf("updated judge %+v %v", j2, err)
		}
		if err := st.DeleteStyle(ctx, st1.ID); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "m2") {
			t.Fatalf("deleting a style a judge uses: %v", err)
		}
		// Panels must share a scale.
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := st.CreateJudge(ctx, store.JudgeInput{ProviderID: p.ID, Model: "o"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.CreateRun(ctx, store.RunInput{JudgeIDs: []int64{j.ID, other.ID}, CollectionIDs: []int64{col.ID},
			Targets: []store.ModelRef{{ProviderID: p.ID, Model: "t"}}})
		if err == nil || !strings.Contains(err.Error(), "share a scoring scale") {
			t.Fatalf("mixed-scale panel: %v", err)
		}
	})
}

func TestUseCasesAndTagFilter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, in := range []store.TaskInput{
			{TaskKey: "a", Category: "math", UseCase: "school", Question: "q", Tags: []string{"Easy", "arith"}},
			{TaskKey: "b", Category: "math", UseCase: "school", Question: "q", Tags: []string{"easy-ish"}},
			{TaskKey: "c", Category: "poems", UseCase: "writing", Question: "q"},
			{TaskKey: "d", Category: "logic", Question: "q"},
		} {
			if _, err := st.CreateTask(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		ucs, err := st.UseCases(ctx)
		if err != nil || len(ucs) != 3 || ucs[1].Name != "school" || ucs[1].Tasks != 2 || ucs[1].Categories[0].Name != "math" || ucs[0].Name != "" {
			t.Fatalf("use cases %+v %v", ucs, err)
		}
		page, err := st.Tasks(ctx, store.TaskFilter{Tag: "easy"})
		if err != nil || page.Total != 1 || page.Items[0].TaskKey != "a" {
			t.Fatalf("tag filter: %+v %v (a whole tag, case-insensitive, not easy-ish)", page.Items, err)
		}
		page, err = st.Tasks(ctx, store.TaskFilter{UseCase: "school", Category: "math"})
		if err != nil || page.Total != 2 {
			t.Fatalf("use case filter: %d %v", page.Total, err)
		}
	})
}

func TestCollectionTrend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 2, 2)
		for _, it := range items(t, st, run.ID) {
			score := 4.0
			if it.Model == "m1" {
				score = 8
			}
			claimed, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w", Lease: 60e9, Limit: 1})
			if err != nil || len(claimed) != 1 {
				t.Fatal(err)
			}
			if _, err := st.CompleteBenchmark(ctx, &claimed[0], store.BenchmarkResult{Request: "{}", Response: "r", Judged: false,
				Scores: []store.Score{{Source: "check:contains", Metric: "check_contains", Score: score / 10}}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunFinished, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		pts, err := st.CollectionTrend(ctx, *run.Collections[0].CollectionID)
		if err != nil || len(pts) != 2 {
			t.Fatalf("trend %+v %v", pts, err)
		}
		// The run has a judge (scale 1–10): pass needs 5.5, which the 0–1 check scores never reach.
		if *pts[0].Score != 0.4 || pts[0].Model != "m0" || *pts[1].Score != 0.8 || *pts[1].PassRate != 0 {
			t.Errorf("trend points %+v %+v", pts[0], pts[1])
		}
	})
}

func items(t *testing.T, st *store.Store, runID int64) []store.ItemView {
	t.Helper()
	page, err := st.RunItems(context.Background(), runID, store.ItemFilter{PerPage: 500})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// TestSuccessorTakesThePlace: a result written with a successor claims one
// item in the same write, keeping the slot's count; a stale claim claims
// nothing; a lowered limit or a paused run gets no successor.
func TestSuccessorTakesThePlace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 6, 1)
		params := store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
			Lease: time.Minute, Limit: 5, SlotKey: "k", SlotLimit: 2}
		first, err := st.ClaimItems(ctx, params)
		if err != nil || len(first) != 2 {
			t.Fatalf("claimed %d (%v), want the slot's 2", len(first), err)
		}
		next := params
		check := []store.Score{{Source: "check:contains", Metric: "check_contains", Score: 1}}
		succ, err := st.CompleteBenchmark(ctx, &first[0], store.BenchmarkResult{Request: "{}", Response: "a", Judged: true, Scores: check}, &next)
		if err != nil || succ == nil {
			t.Fatalf("no successor: %v", err)
		}
		if succ.Status != store.ItemInProgress || succ.WorkerID != "w" || succ.ID == first[0].ID || succ.ID == first[1].ID {
			t.Fatalf("successor %+v", succ)
		}
		if n, _ := st.ClaimItems(ctx, params); len(n) != 0 {
			t.Fatalf("the slot grew: %d more claimed", len(n))
		}
		if again, err := st.CompleteBenchmark(ctx, &first[0], store.BenchmarkResult{Request: "{}", Response: "b"}, &next); !errors.Is(err, store.ErrLeaseLost) || again != nil {
			t.Fatalf("a stale claim wrote or claimed: %v %v", again, err)
		}
		lowered := params
		lowered.SlotLimit = 1
		if s, err := st.CompleteBenchmark(ctx, &first[1], store.BenchmarkResult{Request: "{}", Response: "c"}, &lowered); err != nil || s != nil {
			t.Fatalf("a slot over its lowered limit got a successor: %v %v", s, err)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunPaused, store.RunRunning); err != nil {
			t.Fatal(err)
		}
		if s, err := st.CompleteBenchmark(ctx, succ, store.BenchmarkResult{Request: "{}", Response: "d"}, &next); err != nil || s != nil {
			t.Fatalf("a paused run handed out a successor: %v %v", s, err)
		}
		prog, err := st.RunProgress(ctx, run.ID)
		if err != nil || prog.Count(store.ItemWaitingForJudge) != 1 || prog.Count(store.ItemCompleted) != 2 || prog.Count(store.ItemInProgress) != 0 || prog.Count(store.ItemNew) != 3 {
			t.Fatalf("progress %+v %v", prog.ByStatus, err)
		}
		scores, err := st.RunScores(ctx, run.ID, store.ScoreFilter{})
		if err != nil || scores.Total != 1 {
			t.Fatalf("scores %d %v, want the one check", scores.Total, err)
		}
	})
}

// TestCompleteAllBatch: a batch writes every outcome whose claim holds,
// claims a successor for each written one within the slot's limit, and a
// bad outcome fails alone.
func TestCompleteAllBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 8, 1)
		params := store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
			Lease: time.Minute, Limit: 4, SlotKey: "k", SlotLimit: 4}
		claimed, err := st.ClaimItems(ctx, params)
		if err != nil || len(claimed) != 4 {
			t.Fatalf("claimed %d (%v)", len(claimed), err)
		}
		stale := claimed[1]
		stale.Attempts++ // not this claim's token
		dup := []store.Score{{Source: "check:contains", Metric: "check_contains", Score: 1}, {Source: "check:contains", Metric: "check_contains", Score: 0}}
		result := func(scores []store.Score) store.BenchmarkResult {
			return store.BenchmarkResult{Request: "{}", Response: "a", Judged: true, Scores: scores}
		}
		cs := []*store.Completion{
			store.BenchmarkCompletion(&claimed[0], result(nil)),
			store.BenchmarkCompletion(&stale, result(nil)),
			store.BenchmarkCompletion(&claimed[2], result(dup)),
			store.BenchmarkCompletion(&claimed[3], result([]store.Score{{Source: "check:contains", Metric: "check_contains", Score: 1}})),
		}
		for _, c := range cs {
			c.Next = true
		}
		st.CompleteAll(ctx, cs, &params)
		if cs[0].Err != nil || cs[3].Err != nil {
			t.Fatalf("good outcomes not written: %v, %v", cs[0].Err, cs[3].Err)
		}
		if !errors.Is(cs[1].Err, store.ErrLeaseLost) {
			t.Fatalf("a stale claim: %v", cs[1].Err)
		}
		if cs[2].Err == nil || errors.Is(cs[2].Err, store.ErrLeaseLost) {
			t.Fatalf("duplicate scores: %v", cs[2].Err)
		}
		got := map[int64]bool{}
		for i, c := range cs {
			if (c.Successor != nil) != (i == 0 || i == 3) {
				t.Fatalf("completion %d: successor %v", i, c.Successor)
			}
			if c.Successor != nil {
				if c.Successor.Status != store.ItemInProgress || got[c.Successor.ID] {
					t.Fatalf("successor %+v", c.Successor)
				}
				got[c.Successor.ID] = true
			}
		}
		prog, err := st.RunProgress(ctx, run.ID)
		if err != nil || prog.Count(store.ItemInProgress) != 4 || prog.Count(store.ItemWaitingForJudge) != 2 {
			t.Fatalf("progress %+v %v, want the slot's 4 in progress and 2 written", prog.ByStatus, err)
		}
	})
}

// TestCompleteAllMixedKinds: outcomes that set different columns (an
// answer handed to the judges, one scored by its checks alone) share a
// batch: each is written, with its scores and its successor.
func TestCompleteAllMixedKinds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 4, 1)
		params := store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
			Lease: time.Minute, Limit: 2, SlotKey: "k", SlotLimit: 2}
		claimed, err := st.ClaimItems(ctx, params)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %d (%v)", len(claimed), err)
		}
		check := []store.Score{{Source: "check:contains", Metric: "check_contains", Score: 1}}
		cs := []*store.Completion{
			store.BenchmarkCompletion(&claimed[0], store.BenchmarkResult{Request: "{}", Response: "a", Judged: true}),
			store.BenchmarkCompletion(&claimed[1], store.BenchmarkResult{Request: "{}", Response: "b", Scores: check}),
		}
		for _, c := range cs {
			c.Next = true
		}
		st.CompleteAll(ctx, cs, &params)
		for i, c := range cs {
			if c.Err != nil || c.Successor == nil {
				t.Fatalf("completion %d: %v, successor %v", i, c.Err, c.Successor)
			}
		}
		if cs[0].Successor.ID == cs[1].Successor.ID {
			t.Fatalf("one successor given twice: %d", cs[0].Successor.ID)
		}
		prog, err := st.RunProgress(ctx, run.ID)
		if err != nil || prog.Count(store.ItemWaitingForJudge) != 1 || prog.Count(store.ItemCompleted) != 1 || prog.Count(store.ItemInProgress) != 2 {
			t.Fatalf("progress %+v %v", prog.ByStatus, err)
		}
		scores, err := st.RunScores(ctx, run.ID, store.ScoreFilter{})
		if err != nil || scores.Total != 1 {
			t.Fatalf("scores %d %v, want the one check", scores.Total, err)
		}
	})
}

// TestEndRunWaitsForWork: a run ends only while none of its items is left
// to do, so work sent back at the last moment keeps it running.
func TestEndRunWaitsForWork(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 1, 1)
		closing := func() *store.RunLog { return &store.RunLog{RunID: run.ID, Kind: "run", Message: "the end"} }
		if ended, err := st.EndRun(ctx, run.ID, store.RunFinished, "", closing()); err != nil || ended {
			t.Fatalf("a run with a NEW item ended: %v %v", ended, err)
		}
		items, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w", Lease: time.Minute, Limit: 1})
		if err != nil || len(items) != 1 {
			t.Fatal(err)
		}
		if err := st.FailItem(ctx, &items[0], store.PhaseBenchmarking, "boom", true); err != nil {
			t.Fatal(err)
		}
		if logs, _ := st.RunLogs(ctx, run.ID, 0, 10); len(logs) != 0 {
			t.Fatalf("a refused end wrote its log entry: %+v", logs)
		}
		if ended, err := st.EndRun(ctx, run.ID, store.RunFailed, "all failed", closing()); err != nil || !ended {
			t.Fatalf("a run with every item done did not end: %v %v", ended, err)
		}
		if r, _ := st.Run(ctx, run.ID); r.Status != store.RunFailed || r.Error != "all failed" || r.FinishedAt == nil {
			t.Fatalf("ended run %+v", r)
		}
		if logs, _ := st.RunLogs(ctx, run.ID, 0, 10); len(logs) != 1 || logs[0].Message != "the end" {
			t.Fatalf("closing entry %+v", logs)
		}
	})
}

// TestScoresNameTheirTarget: every score a completion writes names its
// item's target and the length of the answer it scored (in characters, as
// the database counts them), which the means by model and the judges'
// length bias read without the items: a check's score written with the
// answer, and a judge's written later.
func TestScoresNameTheirTarget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 2)
		claimed, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemNew, To: store.ItemInProgress, WorkerID: "w",
			Lease: time.Minute, Limit: 10})
		if err != nil || len(claimed) != 6 {
			t.Fatalf("claimed %d (%v)", len(claimed), err)
		}
		want := map[int64]float64{} // target: sum of its check scores
		var cs []*store.Completion
		for i := range claimed {
			score := float64(i + 1)
			want[claimed[i].RunTargetID] += score
			cs = append(cs, store.BenchmarkCompletion(&claimed[i], store.BenchmarkResult{Request: "{}",
				Response: strings.Repeat("é✓ ", i) + "a", Judged: true,
				Scores: []store.Score{{Source: "check:contains", Metric: "check_contains", Score: score}}}))
		}
		st.CompleteAll(ctx, cs, nil)
		judging, err := st.ClaimItems(ctx, store.ClaimParams{RunID: run.ID, From: store.ItemWaitingForJudge, To: store.ItemJudging, WorkerID: "w",
			Lease: time.Minute, Limit: 10})
		if err != nil || len(judging) != 6 {
			t.Fatalf("claimed %d to judge (%v)", len(judging), err)
		}
		for i := range judging {
			cs = append(cs, store.JudgingCompletion(&judging[i], store.Verdict{Overall: 5, Last: true,
				Scores: []store.Score{{RunJudgeID: &run.Judges[0].ID, Source: run.Judges[0].Source(), Metric: "score", Score: 5}}}))
		}
		st.CompleteAll(ctx, cs[6:], nil)
		for _, c := range cs {
			if c.Err != nil {
				t.Fatal(c.Err)
			}
		}
		var n, wrong int64
		err = storetest.DB(t, st).QueryRow(fmt.Sprintf(`SELECT COUNT(*), COUNT(CASE WHEN sc.run_target_id IS NULL OR sc.run_target_id <> i.run_target_id
				OR sc.answer_length IS NULL OR sc.answer_length <> LENGTH(i.response) THEN 1 END)
			FROM scores sc JOIN items i ON i.id = sc.item_id WHERE sc.run_id = %d`, run.ID)).Scan(&n, &wrong)
		if err != nil {
			t.Fatal(err)
		}
		if n != 12 || wrong != 0 {
			t.Errorf("%d of %d scores name another target or answer length than their item's", wrong, n)
		}
		var lengths []int64
		probe, err := st.JudgeProbes(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range probe.Lengths {
			lengths = append(lengths, l.Length)
		}
		if fmt.Sprint(lengths) != "[1 4 7 10 13 16]" {
			t.Errorf("the judge's answer lengths %v, want [1 4 7 10 13 16]", lengths)
		}
		means, err := st.RunMetricMeans(ctx, run.ID)
		if err != nil || len(means) != 4 {
			t.Fatalf("means %+v (%v), want two per target", means, err)
		}
		for _, m := range means {
			if m.Metric == "check_contains" && (m.N != 3 || m.Mean*3 != want[m.RunTargetID]) {
				t.Errorf("target %d: mean %g of %d, want %g of 3", m.RunTargetID, m.Mean, m.N, want[m.RunTargetID]/3)
			}
		}
	})
}

// TestSyntheticFillWithoutWeights: a bulk fill of a run none of whose
// scores weigh completes its items; before, computing their overalls from
// an empty list of weights was an SQL syntax error.
func TestSyntheticFillWithoutWeights(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 3, 2)
		n, err := st.CompleteSynthetic(ctx, run.ID, nil)
		if err != nil || n != 6 {
			t.Fatalf("filled %d items (%v), want 6", n, err)
		}
	})
}
