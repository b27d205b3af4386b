package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"tribunal/langfuse"
	"tribunal/store"
)

// SourceImport is what POST /api/sources/{id}/import asks: a dataset run of
// the source, to be scored by judges (Judge, or the saved JudgeIDs) and/or
// reference checks.
type SourceImport struct {
	Dataset string `json:"dataset"`
	// Run names the dataset run; "latest" picks the newest.
	Run string `json:"run"`
	// Collection names the tasks' collection; the dataset's name by default.
	Collection string          `json:"collection"`
	Judge      *store.ModelRef `json:"judge"`
	JudgeIDs   []int64         `json:"judge_ids"`
	// Checks are given to every task of the dataset; one without a value
	// compares with the item's expected output.
	Checks []CheckSpec `json:"checks"`
	// Rejudge judges a dataset run already imported again, instead of 409.
	Rejudge bool     `json:"rejudge"`
	Name    string   `json:"name"`
	Tags    []string `json:"tags"`
	// TriggeredBy says who asked (the API, a schedule); not part of the body.
	TriggeredBy string `json:"-"`
	ScheduleID  *int64 `json:"-"`
}

// CheckSpec is a check as an import names it: its type alone ("contains"),
// or {"type", "value"}.
type CheckSpec store.Check

// UnmarshalJSON reads either form.
func (c *CheckSpec) UnmarshalJSON(b []byte) error {
	var typ string
	if json.Unmarshal(b, &typ) == nil {
		*c = CheckSpec{Type: typ}
		return nil
	}
	var full store.Check
	if err := json.Unmarshal(b, &full); err != nil {
		return fmt.Errorf("a check is a type (\"contains\") or {\"type\", \"value\"}")
	}
	*c = CheckSpec(full)
	return nil
}

// SourceImported is what an import did.
type SourceImported struct {
	RunID        int64  `json:"run_id"`
	CollectionID int64  `json:"collection_id"`
	TasksCreated int    `json:"tasks_created"`
	TasksUpdated int    `json:"tasks_updated"`
	Items        int    `json:"items"`
	Failed       int    `json:"failed"`
	Dataset      string `json:"dataset"`
	Run          string `json:"run"`
	// Rejudged says an earlier import's run was judged again instead.
	Rejudged bool `json:"rejudged,omitempty"`
}

// ImportSource reads a dataset run of a trace source — the dataset's items
// and each run item's trace — and saves, in one transaction, one task per
// dataset item (by its id: updated, never duplicated) and an IMPORTED run
// whose items hold the traces' outputs, latency, tokens and cost; the
// engine then scores them with the checks and judges, and KPIs and alerts
// follow as for any run. An item without a trace, or whose trace Langfuse
// does not have, is a FAILED item saying so. A dataset run imported before
// is a conflict naming its run, unless Rejudge asks to judge it again.
func (s *Service) ImportSource(ctx context.Context, sourceID int64, in SourceImport) (*SourceImported, error) {
	in.Dataset, in.Run = strings.TrimSpace(in.Dataset), strings.TrimSpace(in.Run)
	switch {
	case in.Dataset == "":
		return nil, &store.ValidationError{Field: "dataset", Message: "is required: the name of a Langfuse dataset"}
	case in.Run == "":
		return nil, &store.ValidationError{Field: "run", Message: "is required: the name of one of the dataset's runs, or \"latest\""}
	}
	src, err := s.store.SourceWithSecret(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	lf := langfuse.New(src.BaseURL, src.PublicKey, src.SecretKey, s.engine.HTTPClient())
	dataset, err := lf.Dataset(ctx, in.Dataset)
	if err != nil {
		return nil, sourceError(src, err)
	}
	var run *langfuse.DatasetRun
	if in.Run == "latest" {
		run, err = lf.LatestRun(ctx, dataset.Name)
	} else {
		run, err = lf.DatasetRun(ctx, dataset.Name, in.Run)
	}
	if err != nil {
		return nil, sourceError(src, err)
	}
	origin := store.RunSource{SourceID: src.ID, Dataset: dataset.Name, Run: run.Name, SourceName: src.Name}
	if held, err := s.store.ImportedRunOf(ctx, origin); err != nil || held != 0 {
		if err == nil {
			err = s.rejudgeOrRefuse(ctx, held, origin, in.Rejudge)
		}
		if err != nil {
			return nil, err
		}
		return &SourceImported{RunID: held, Dataset: origin.Dataset, Run: origin.Run, Rejudged: true}, nil
	}

	items, err := lf.DatasetItems(ctx, dataset.Name)
	if err != nil {
		return nil, sourceError(src, err)
	}
	runItems := run.Items
	if len(runItems) == 0 {
		if runItems, err = lf.DatasetRunItems(ctx, dataset.ID, run.Name); err != nil {
			return nil, sourceError(src, err)
		}
	}
	traceOf := make(map[string]string, len(runItems))
	var traceIDs []string
	for _, ri := range runItems {
		if ri.TraceID != "" && traceOf[ri.DatasetItemID] == "" {
			traceOf[ri.DatasetItemID] = ri.TraceID
			traceIDs = append(traceIDs, ri.TraceID)
		}
	}
	traces := make(map[string]*langfuse.Trace, len(traceIDs))
	missing := map[string]bool{}
	err = lf.Traces(ctx, traceIDs, func(id string, t *langfuse.Trace, err error) {
		switch {
		case err == nil:
			traces[id] = t
		case errors.Is(err, langfuse.ErrNotFound):
			missing[id] = true
		}
	})
	if err != nil {
		return nil, sourceError(src, err)
	}

	tasks, imported := datasetImport(origin, items, traceOf, traces, missing, in)
	if len(tasks.Tasks) == 0 {
		return nil, &store.ValidationError{Field: "dataset", Message: fmt.Sprintf("dataset %q has no active items", dataset.Name)}
	}
	runIn := store.RunInput{Name: cmp.Or(strings.TrimSpace(in.Name), fmt.Sprintf("%s / %s", dataset.Name, run.Name)),
		Judge: in.Judge, JudgeIDs: in.JudgeIDs, Tags: in.Tags, TriggeredBy: cmp.Or(in.TriggeredBy, "API"), ScheduleID: in.ScheduleID}
	if in.Judge == nil && len(in.JudgeIDs) == 0 {
		for _, c := range in.Checks {
			runIn.Metrics = append(runIn.Metrics, "check_"+c.Type)
		}
	}
	r, res, err := s.engine.StartImported(ctx, runIn, tasks, imported)
	if err != nil {
		return nil, err
	}
	out := &SourceImported{RunID: r.ID, CollectionID: res.Collection.ID, TasksCreated: res.Created, TasksUpdated: res.Updated,
		Items: len(imported.Answers), Dataset: origin.Dataset, Run: origin.Run}
	for _, a := range imported.Answers {
		if a.Response == nil {
			out.Failed++
		}
	}
	return out, nil
}

// rejudgeOrRefuse answers a dataset run imported before: judged again on
// request, else a conflict naming the run that holds it.
func (s *Service) rejudgeOrRefuse(ctx context.Context, runID int64, origin store.RunSource, rejudge bool) error {
	if !rejudge {
		return &store.AlreadyImportedError{RunID: runID, Source: origin}
	}
	_, err := s.engine.Rejudge(ctx, runID)
	return err
}

// sourceError says which source failed; Langfuse's own answer is kept.
func sourceError(src *store.Source, err error) error {
	var ae *langfuse.APIError
	if errors.As(err, &ae) && ae.Status == 404 {
		return &store.ValidationError{Field: "dataset", Message: fmt.Sprintf("source %q: %v", src.Name, err)}
	}
	return &SourceError{Source: src.Name, Err: err}
}

// SourceError is a trace source that could not be read (502).
type SourceError struct {
	Source string
	Err    error
}

func (e *SourceError) Error() string { return fmt.Sprintf("source %q: %v", e.Source, e.Err) }
func (e *SourceError) Unwrap() error { return e.Err }

// datasetImport turns a dataset run into the tasks and answers to save.
func datasetImport(origin store.RunSource, items []langfuse.DatasetItem, traceOf map[string]string,
	traces map[string]*langfuse.Trace, missing map[string]bool, in SourceImport) (store.ImportInput, store.ImportedRun) {
	tasks := store.ImportInput{Collection: cmp.Or(strings.TrimSpace(in.Collection), origin.Dataset)}
	imported := store.ImportedRun{Targets: []store.ImportedTarget{{Provider: "Langfuse", Model: origin.Dataset + " / " + origin.Run, Source: &origin}}}
	checks := make([]store.Check, len(in.Checks))
	for i, c := range in.Checks {
		checks[i] = store.Check(c)
	}
	for _, it := range items {
		if it.Status == "ARCHIVED" {
			continue
		}
		meta := metadataOf(it.Metadata)
		meta["langfuse_dataset"], meta["langfuse_dataset_item_id"] = origin.Dataset, it.ID
		tasks.Tasks = append(tasks.Tasks, store.TaskInput{TaskKey: it.ID, Category: cmp.Or(meta["category"], origin.Dataset),
			Question: cmp.Or(langfuse.Text(it.Input), "(the dataset item has no input)"), Reference: langfuse.Text(it.ExpectedOutput),
			Checks: checks, Metadata: meta})
		a := store.ImportedAnswer{TaskKey: it.ID}
		traceID := traceOf[it.ID]
		t := traces[traceID]
		switch {
		case traceID == "":
			a.Error = fmt.Sprintf("the dataset item has no trace in run %q", origin.Run)
		case missing[traceID] || t == nil:
			a.Error = fmt.Sprintf("trace %s: not found in Langfuse (404)", traceID)
		case string(t.Output) == "null":
			a.Error = fmt.Sprintf("trace %s has no output", traceID)
		default:
			out := langfuse.Text(t.Output)
			ms := int64(t.LatencySeconds * 1000)
			a.Response, a.TimeMs = &out, &ms
			if t.InputTokens > 0 || t.OutputTokens > 0 {
				a.PromptTokens, a.CompletionTokens = &t.InputTokens, &t.OutputTokens
			}
			if t.TotalCost > 0 {
				cost := t.TotalCost
				a.CostUSD = &cost
			}
		}
		imported.Answers = append(imported.Answers, a)
	}
	return tasks, imported
}

// metadataOf flattens a dataset item's metadata into a task's: each key of
// an object, its value as text (strings as they are, the rest as JSON).
func metadataOf(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
			out["metadata"] = s
		}
		return out
	}
	for k, v := range obj {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out
}
