package runs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"tribunal/checks"
	"tribunal/importer"
	"tribunal/store"
)

// ImportedProvider names, for people, where an imported model's answers
// came from: a file of outputs, not a provider Tribunal called.
const ImportedProvider = "imported"

// OutputsOptions say how a file of outputs is scored and where its tasks go.
type OutputsOptions struct {
	// Judge is one judge model with the default style; JudgeIDs a panel of
	// saved judges. Checks are check types each task gets without a value,
	// so that they compare with the row's reference. At least one of them.
	Judge    *store.ModelRef
	JudgeIDs []int64
	Checks   []string
	// Collection is where the tasks go; "" is "Imported outputs <date>".
	Collection  string
	Name        string
	Tags        []string
	TriggeredBy string
}

// OutputsImport is what importing a file of outputs made.
type OutputsImport struct {
	RunID        int64 `json:"run_id"`
	CollectionID int64 `json:"collection_id"`
	TasksCreated int   `json:"tasks_created"`
	TasksUpdated int   `json:"tasks_updated"`
	Items        int   `json:"items"`
	Models       int   `json:"models"`
}

// ImportOutputs turns answers that exist already — a file of outputs, read
// by importer.ReadOutputs — into an IMPORTED run with one target per model,
// whose items hold the answers and go straight to checks and judges. Tasks
// are matched by task_id (updated with the row's question, reference and
// category when it gives them, never duplicated) or created from the
// question. All or nothing: a row that names a task that does not exist
// without giving its question is an importer.Errors naming its line, and
// nothing is written.
func (s *Service) ImportOutputs(ctx context.Context, rows []importer.OutputRow, o OutputsOptions) (*OutputsImport, error) {
	checkTypes, err := outputChecks(o)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, &store.ValidationError{Field: "file", Message: "the file has no outputs"}
	}
	collection := strings.TrimSpace(o.Collection)
	if collection == "" {
		collection = "Imported outputs " + s.now().Format("2006-01-02")
	}
	tasks, errs, err := s.outputTasks(ctx, rows, checkTypes, collection)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var imported store.ImportedRun
	target := map[string]int{}
	var models []string
	for _, r := range rows {
		i, ok := target[r.Model]
		if !ok {
			i = len(imported.Targets)
			target[r.Model] = i
			models = append(models, r.Model)
			imported.Targets = append(imported.Targets, store.ImportedTarget{Provider: ImportedProvider, Model: r.Model})
		}
		response := r.Response
		imported.Answers = append(imported.Answers, store.ImportedAnswer{TaskKey: r.TaskKey, Target: i, Response: &response,
			TimeMs: r.LatencyMs, PromptTokens: r.InputTokens, CompletionTokens: r.OutputTokens, CostUSD: r.CostUSD})
	}
	in := store.RunInput{Name: o.Name, Judge: o.Judge, JudgeIDs: o.JudgeIDs, Tags: o.Tags, TriggeredBy: o.TriggeredBy}
	if strings.TrimSpace(in.Name) == "" {
		in.Name = outputsRunName(models)
	}
	// The checks asked for are the ones that count; a judge still scores
	// all its metrics (engine.newPanelJudge).
	for _, c := range checkTypes {
		in.Metrics = append(in.Metrics, "check_"+c)
	}
	run, res, err := s.engine.StartImported(ctx, in, store.ImportInput{Tasks: tasks, Collection: collection}, imported)
	if err != nil {
		return nil, err
	}
	return &OutputsImport{RunID: run.ID, CollectionID: res.Collection.ID, TasksCreated: res.Created, TasksUpdated: res.Updated,
		Items: len(imported.Answers), Models: len(imported.Targets)}, nil
}

// outputChecks checks the scoring options and returns the check types,
// normalised and without repeats.
func outputChecks(o OutputsOptions) ([]string, error) {
	var out []string
	for _, c := range o.Checks {
		c = importer.CheckType(c)
		switch {
		case c == "" || slices.Contains(out, c):
			continue
		case !slices.Contains(store.CheckTypes, c):
			return nil, &store.ValidationError{Field: "checks", Message: fmt.Sprintf("unknown check %q (want one of %s)", c, strings.Join(TextChecks(), ", "))}
		case checks.Trajectory(c):
			return nil, &store.ValidationError{Field: "checks", Message: fmt.Sprintf("%s scores an agent's tool calls, which imported outputs do not have", c)}
		}
		out = append(out, c)
	}
	if o.Judge == nil && len(o.JudgeIDs) == 0 && len(out) == 0 {
		return nil, &store.ValidationError{Field: "judge", Message: "pick a judge or checks to score the outputs with"}
	}
	return out, nil
}

// TextChecks are the checks that score an answer's text: the ones an import of outputs may ask for.
func TextChecks() []string {
	var out []string
	for _, c := range store.CheckTypes {
		if !checks.Trajectory(c) {
			out = append(out, c)
		}
	}
	return out
}

// outputTasks makes the tasks the rows answer, in the order they first
// appear: a stored task with what the row gives laid over it, or a new one
// from the row's question. Each gets the checks asked for.
func (s *Service) outputTasks(ctx context.Context, rows []importer.OutputRow, checkTypes []string, collection string) ([]store.TaskInput, importer.Errors, error) {
	var keys []string
	first := map[string]importer.OutputRow{}
	for _, r := range rows {
		if _, ok := first[r.TaskKey]; !ok {
			first[r.TaskKey] = r
			keys = append(keys, r.TaskKey)
		}
	}
	stored, err := s.store.TasksByKey(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	var errs importer.Errors
	bad := func(r importer.OutputRow, field, format string, args ...any) {
		errs = append(errs, importer.RowError{Row: r.Row, Line: r.Line, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	tasks := make([]store.TaskInput, 0, len(keys))
	for _, key := range keys {
		r := first[key]
		var in store.TaskInput
		if t, ok := stored[key]; ok {
			in = t.Input()
			if r.Question != "" && r.Question != in.Question {
				in.Question = r.Question
				if len(in.Turns) > 0 {
					in.Turns = append([]string{r.Question}, in.Turns[1:]...)
				}
			}
			in.Reference = cmp.Or(r.Reference, in.Reference)
			in.Category = cmp.Or(r.Category, in.Category)
		} else {
			if r.Question == "" {
				bad(r, "task_id", "no task %q exists; give the row its question to create it", key)
				continue
			}
			in = store.TaskInput{TaskKey: key, Question: r.Question, Reference: r.Reference, Category: cmp.Or(r.Category, collection)}
		}
		for _, c := range checkTypes {
			if !slices.ContainsFunc(in.Checks, func(have store.Check) bool { return have.Type == c }) {
				in.Checks = append(in.Checks, store.Check{Type: c})
			}
		}
		if missing := needReference(in); missing != "" {
			bad(r, "reference", "the %s check compares with a reference; give the task one", missing)
			continue
		}
		if err := in.Normalize(); err != nil {
			var ve *store.ValidationError
			if !errors.As(err, &ve) {
				return nil, nil, err
			}
			bad(r, ve.Field, "%s", ve.Message)
			continue
		}
		tasks = append(tasks, in)
	}
	return tasks, errs, nil
}

// needReference names a check of the task that has nothing to compare with.
func needReference(in store.TaskInput) string {
	for _, c := range in.Checks {
		if c.Type != checks.JSONValid && !checks.Trajectory(c.Type) && strings.TrimSpace(checks.Ref(c.Type, c.Value, in.Reference)) == "" {
			return c.Type
		}
	}
	return ""
}

// outputsRunName names an import's run after its models.
func outputsRunName(models []string) string {
	name := "Imported outputs: " + strings.Join(models, ", ")
	if len(name) > 200 {
		name = fmt.Sprintf("Imported outputs of %d models", len(models))
	}
	return name
}
