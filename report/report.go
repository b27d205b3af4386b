// Package report exports runs: a JSON document with everything about a run
// (the settings snapshot, targets, judges, frozen tasks, every item with its
// scores and grade, and the aggregates), and a self-contained HTML report of
// one run or a comparison of several — one file with inline CSS and SVG
// charts that opens from disk and loads nothing from the network.
//
// Both stream the items from the store in batches, so memory stays flat
// however large a run is (the HTML lists at most Options.MaxItems of them).
package report

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"tribunal/runs"
	"tribunal/store"
)

// JSON format names, so readers can tell exports apart and evolve with them.
const (
	FormatRun  = "tribunal.run/v1"
	FormatRuns = "tribunal.runs/v1"
)

// Data is what an export says about one run besides its items.
type Data struct {
	Run *store.Run
	// Settings is the run's snapshot: how it was asked for and the engine
	// constants that shaped its calls (JSON).
	Settings json.RawMessage
	Judges   []Judge
	Progress runs.Progress
	Summary  *runs.Summary
	Metrics  *store.RunMetrics
	Tasks    []Task
}

// Judge is a run's frozen judge with its prompt template.
type Judge struct {
	store.RunJudge
	PromptTemplate string `json:"prompt_template"`
}

// Task is a run's frozen copy of a task.
type Task struct {
	ID                       int64         `json:"id"`
	TaskID                   string        `json:"task_id"`
	Category                 string        `json:"category"`
	Subcategory              string        `json:"subcategory,omitempty"`
	Question                 string        `json:"question"`
	Turns                    []string      `json:"turns,omitempty"`
	SystemPrompt             string        `json:"system_prompt,omitempty"`
	Reference                string        `json:"reference,omitempty"`
	Excellent                string        `json:"excellent,omitempty"`
	Good                     string        `json:"good,omitempty"`
	Pass                     string        `json:"pass,omitempty"`
	IncorrectAnswerDirection string        `json:"incorrect_answer_direction,omitempty"`
	UseCase                  string        `json:"usecase,omitempty"`
	Tags                     []string      `json:"tags,omitempty"`
	Constraints              string        `json:"constraints,omitempty"`
	Examples                 string        `json:"examples,omitempty"`
	JudgeInstructions        string        `json:"judge_instructions,omitempty"`
	Comments                 string        `json:"comments,omitempty"`
	Checks                   []store.Check `json:"checks,omitempty"`
}

// Item is one (task, target, repeat) with its answer (an agent's with what
// it did, as the API shows it), scores and grade.
type Item struct {
	runs.ItemRow
	Scores []Score `json:"scores"`
	// Violations are what the judges said the answer violated, when their
	// styles ask (store.ViolationView: judge, category, detail).
	Violations []store.ViolationView `json:"violations"`
	// GradeNotes accompany the human grade (ItemView.Grade).
	GradeNotes string `json:"grade_notes,omitempty"`
}

// Score is one metric value from one judge or check.
type Score struct {
	Judge     string  `json:"judge"`
	Metric    string  `json:"metric"`
	Score     float64 `json:"score"`
	Reasoning string  `json:"reasoning,omitempty"`
}

// Load reads everything about a run except its items.
func Load(ctx context.Context, svc *runs.Service, runID int64) (*Data, error) {
	d, err := loadHead(ctx, svc, runID)
	if err != nil {
		return nil, err
	}
	tasks, err := svc.Store().RunTaskList(ctx, runID)
	if err != nil {
		return nil, err
	}
	d.Tasks = make([]Task, len(tasks))
	for i := range tasks {
		d.Tasks[i] = taskOf(&tasks[i])
	}
	return d, nil
}

// taskOf is a run's frozen task as the exports show it.
func taskOf(t *store.RunTask) Task {
	return Task{ID: t.ID, TaskID: t.TaskKey, Category: t.Category, Subcategory: t.Subcategory, Question: t.Question,
		Turns: t.Turns, SystemPrompt: t.SystemPrompt, Reference: t.Reference, Excellent: t.Excellent, Good: t.Good,
		Pass: t.Pass, IncorrectAnswerDirection: t.IncorrectAnswerDirection, UseCase: t.UseCase, Tags: t.Tags,
		Constraints: t.Constraints, Examples: t.Examples, JudgeInstructions: t.JudgeInstructions, Comments: t.Comments,
		Checks: t.Checks}
}

// loadHead is Load without the tasks, which the JSON export streams.
func loadHead(ctx context.Context, svc *runs.Service, runID int64) (*Data, error) {
	st := svc.Store()
	run, err := st.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	d := &Data{Run: run, Settings: json.RawMessage(`{}`)}
	if run.Snapshot != "" && json.Valid([]byte(run.Snapshot)) {
		d.Settings = json.RawMessage(run.Snapshot)
	}
	judges, err := st.RunJudges(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, j := range judges {
		d.Judges = append(d.Judges, Judge{RunJudge: j, PromptTemplate: j.PromptTemplate})
	}
	if d.Progress, d.Summary, err = svc.Results(ctx, run); err != nil {
		return nil, err
	}
	d.Metrics = runs.MetricsOf(run, d.Summary)
	return d, nil
}

// EachItem streams a run's items in id order with their scores,
// violations and grade notes. The item passed to fn, and its slices, are
// valid only during the call: one Item is reused, so a million-item run
// costs no allocation per item beyond its own fields.
func EachItem(ctx context.Context, st *store.Store, runID int64, fn func(*Item) error) error {
	var it Item
	return st.EachExportItem(ctx, runID, func(e *store.ExportItem) error {
		scores := it.Scores[:0]
		if scores == nil {
			scores = make([]Score, 0, 4) // [] in the JSON for an item without scores, not null
		}
		for _, s := range e.Scores {
			scores = append(scores, Score{Judge: s.Judge, Metric: s.Metric, Score: s.Score, Reasoning: s.Reasoning})
		}
		it = Item{ItemRow: runs.RowOf(&e.ItemView), Scores: scores, Violations: e.Violations, GradeNotes: e.GradeNotes}
		if it.Violations == nil {
			it.Violations = []store.ViolationView{}
		}
		return fn(&it)
	})
}

// WriteJSON writes the JSON export of one run (an object of format
// FormatRun) or of several (FormatRuns: {"runs": [...]}), streaming items.
func WriteJSON(ctx context.Context, w io.Writer, svc *runs.Service, runIDs ...int64) error {
	if len(runIDs) == 0 {
		return fmt.Errorf("report: no run to export")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(runIDs) == 1 {
		if err := writeRunJSON(ctx, bw, svc, runIDs[0]); err != nil {
			return err
		}
		bw.WriteString("\n")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "{\"format\":%q,\"exported_at\":%s,\"runs\":[\n", FormatRuns, mustJSON(time.Now().UTC().Truncate(time.Second)))
	for i, id := range runIDs {
		if i > 0 {
			bw.WriteString(",\n")
		}
		if err := writeRunJSON(ctx, bw, svc, id); err != nil {
			return err
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("report: encode %T: %v", v, err)) // plain data always encodes
	}
	return b
}

func writeRunJSON(ctx context.Context, w *bufio.Writer, svc *runs.Service, runID int64) error {
	d, err := loadHead(ctx, svc, runID)
	if err != nil {
		return err
	}
	head := []struct {
		key string
		val any
	}{
		{"format", FormatRun}, {"exported_at", time.Now().UTC().Truncate(time.Second)},
		{"run", d.Run}, {"settings", d.Settings}, {"judges", d.Judges}, {"progress", d.Progress},
		{"summary", d.Summary}, {"metrics", d.Metrics},
	}
	w.WriteString("{")
	for i, h := range head {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, "\n%q:", h.key)
		w.Write(mustJSON(h.val))
	}
	w.WriteString(",\n\"tasks\":[")
	n := 0
	err = svc.Store().EachRunTask(ctx, runID, func(t *store.RunTask) error {
		if n > 0 {
			w.WriteString(",")
		}
		n++
		_, err := w.Write(mustJSON(taskOf(t)))
		return err
	})
	if err != nil {
		return err
	}
	w.WriteString("],\n\"items\":[")
	n = 0
	var line []byte
	err = EachItem(ctx, svc.Store(), runID, func(it *Item) error {
		line = line[:0]
		if n > 0 {
			line = append(line, ',')
		}
		n++
		line = appendItemJSON(append(line, '\n'), it)
		_, err := w.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	w.WriteString("\n]}")
	return nil
}
