package runs

import (
	"context"
	"fmt"
	"strings"

	"tribunal/analysis"
	"tribunal/store"
)

// MaxCompareRuns bounds a comparison; each run adds a query and its models.
const MaxCompareRuns = 10

// Comparison is several runs side by side: per model and per category,
// paired tests between every two models, and the tasks with each answer.
type Comparison struct {
	Runs        []*store.Run                     `json:"runs"`
	BaselineRun int64                            `json:"baseline_run_id,omitempty"`
	Entries     []analysis.EntryStats            `json:"entries"`
	Baselines   []int                            `json:"baselines"` // per entry, the index of its baseline entry (-1: none)
	PairTests   []analysis.PairTest              `json:"pair_tests"`
	Categories  []string                         `json:"categories"`
	Grid        [][]*float64                     `json:"category_scores"` // per entry, per category
	Tasks       store.Page[analysis.TaskAnswers] `json:"tasks"`
}

// cachedComparison is the statistics of a comparison, cached by its runs,
// baseline and the runs' item counts: the bootstrap dominates its cost.
type cachedComparison struct {
	entries []analysis.EntryStats
	tests   []analysis.PairTest
}

// Compare builds the comparison of runs ids against the baseline run (0:
// none), with one page of the task rows that pass f.
func (s *Service) Compare(ctx context.Context, ids []int64, baseline int64, f analysis.TaskFilter, page, perPage int) (*Comparison, error) {
	out := &Comparison{BaselineRun: baseline, Runs: []*store.Run{}, Entries: []analysis.EntryStats{}, PairTests: []analysis.PairTest{}}
	var entries []analysis.Entry
	for _, id := range ids {
		run, err := s.store.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		results, err := s.store.TaskResults(ctx, id)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, run)
		entries = append(entries, analysis.Entries(run, store.PassThreshold(run.Judges), results)...)
	}
	out.Baselines = analysis.Baselines(entries, baseline)
	// The statistics move only when the runs' items do.
	var stamp strings.Builder
	for _, run := range out.Runs {
		prog, err := s.store.RunProgress(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		stamp.WriteString(fmt.Sprint(prog.ByStatus))
	}
	cacheKey := fmt.Sprint(ids, baseline)
	cached, fresh, _ := s.comparisons.get(cacheKey, stamp.String())
	if !fresh {
		cached = cachedComparison{entries: analysis.Summarise(entries, out.Baselines), tests: analysis.PairTests(entries)}
		s.comparisons.put(cacheKey, stamp.String(), cached)
	}
	out.Entries, out.PairTests = cached.entries, cached.tests
	if out.PairTests == nil {
		out.PairTests = []analysis.PairTest{}
	}
	out.Categories, out.Grid = categoryGrid(entries)
	rows := analysis.TaskRows(entries, out.Baselines, f)
	page, perPage = max(page, 1), min(max(perPage, 1), 200)
	out.Tasks = store.Page[analysis.TaskAnswers]{Page: page, PerPage: perPage, Total: int64(len(rows))}
	from := min((page-1)*perPage, len(rows))
	shown := rows[from:min(from+perPage, len(rows))]
	items, err := s.taskAnswers(ctx, out.Runs, entries, shown)
	if err != nil {
		return nil, err
	}
	out.Tasks.Items = items
	return out, nil
}

// categoryGrid is each entry's mean per category, nil where it has no score.
func categoryGrid(entries []analysis.Entry) ([]string, [][]*float64) {
	cats, grid := analysis.CategoryGrid(entries)
	out := make([][]*float64, len(grid))
	for i, row := range grid {
		out[i] = make([]*float64, len(row))
		for j, v := range row {
			if v == v { // NaN: no score in that category
				out[i][j] = &v
			}
		}
	}
	return cats, out
}

// taskAnswers adds each entry's answer to the shown rows, loading the
// answers of those tasks only, run by run.
func (s *Service) taskAnswers(ctx context.Context, runs []*store.Run, entries []analysis.Entry, shown []analysis.TaskRow) ([]analysis.TaskAnswers, error) {
	keys := make([]string, len(shown))
	for i, r := range shown {
		keys[i] = r.TaskID
	}
	type key struct {
		run, target int64
		task        string
	}
	answers := map[key]store.Answer{}
	questions := map[string]string{}
	for _, run := range runs {
		list, err := s.store.Answers(ctx, run.ID, keys)
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			answers[key{run.ID, a.RunTargetID, a.TaskKey}] = a
			questions[a.TaskKey] = a.Question
		}
	}
	out := make([]analysis.TaskAnswers, 0, len(shown))
	for _, r := range shown {
		ct := analysis.TaskAnswers{TaskRow: r, Question: questions[r.TaskID], Answers: make([]*string, len(entries)), ItemIDs: make([]int64, len(entries))}
		for i, e := range entries {
			if a, ok := answers[key{e.RunID, e.TargetID, r.TaskID}]; ok {
				ct.Answers[i], ct.ItemIDs[i] = a.Response, a.ItemID
			}
		}
		out = append(out, ct)
	}
	return out, nil
}

// AnswerDiff is a word diff of two answers to one task.
type AnswerDiff struct {
	TaskID    string            `json:"task_id"`
	A         int64             `json:"a_item_id"`
	B         int64             `json:"b_item_id"`
	Ops       []analysis.DiffOp `json:"ops"`
	Truncated bool              `json:"truncated"`
	// Sides name whose answers they are: item a's, then item b's.
	Sides [2]DiffSide `json:"sides"`
}

// DiffSide is one answer of a diff: its run, model and score.
type DiffSide struct {
	ItemID   int64    `json:"item_id"`
	RunID    int64    `json:"run_id"`
	RunName  string   `json:"run"`
	Model    string   `json:"model"`
	Provider string   `json:"provider"`
	Score    *float64 `json:"score"` // the item's score, nil until judged
}

// Diff diffs the answers of items a and b word by word.
func (s *Service) Diff(ctx context.Context, a, b int64) (*AnswerDiff, error) {
	var answers [2]*store.Answer
	out := &AnswerDiff{A: a, B: b}
	for i, id := range []int64{a, b} {
		ans, err := s.store.ItemAnswer(ctx, id)
		if err != nil {
			return nil, err
		}
		run, err := s.store.Run(ctx, ans.RunID)
		if err != nil {
			return nil, err
		}
		side := DiffSide{ItemID: id, RunID: run.ID, RunName: run.Name, Score: ans.Score}
		for _, t := range run.Targets {
			if t.ID == ans.RunTargetID {
				side.Model, side.Provider = t.Model, t.ProviderName
				if t.IsAgent() {
					side.Model = t.Label()
				}
			}
		}
		answers[i], out.Sides[i] = ans, side
	}
	text := func(a *store.Answer) string {
		if a.Response == nil {
			return ""
		}
		return *a.Response
	}
	out.TaskID = answers[0].TaskKey
	out.Ops, out.Truncated = analysis.WordDiff(text(answers[0]), text(answers[1]))
	return out, nil
}
