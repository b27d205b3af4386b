package store

import (
	"fmt"
	"slices"
	"strings"
	"tribunal/checks"
)

// ModelRef picks a model of a provider, with the settings of its calls;
// as a run's target it may instead pick a saved agent (AgentID), whose own
// model, settings and tools then apply.
type ModelRef struct {
	AgentID    int64          `json:"agent_id,omitempty"`
	ProviderID int64          `json:"provider_id"`
	Model      string         `json:"model"`
	Settings   TargetSettings `json:"settings"`
	// Tags label a target (a model under test); judges ignore them.
	Tags []string `json:"tags,omitempty"`
	// Version names the model's version (free text); without it the run
	// records the model id the provider reports in its first reply.
	Version string `json:"version,omitempty"`
}

// RunInput is what a user sends to start a run.
type RunInput struct {
	Name string `json:"name"`
	// Judge is a single judge model with the default style; JudgeIDs a panel of saved judges.
	Judge         *ModelRef  `json:"judge"`
	JudgeIDs      []int64    `json:"judge_ids"`
	Targets       []ModelRef `json:"targets"`
	CollectionIDs []int64    `json:"collection_ids"`
	// UseCases and Categories pick tasks by what they are for, beside the
	// collections: a run draws on every task of its collections, of its use
	// cases and of its categories (each within its use case).
	UseCases   []string      `json:"usecases,omitempty"`
	Categories []CategoryRef `json:"categories,omitempty"`
	// Metrics lists the judge metrics and checks ("check_<type>") that are on; empty = all.
	Metrics []string           `json:"metrics"`
	Repeats int                `json:"repeats"`
	Weights map[string]float64 `json:"weights"`
	// SourceWeights weigh whole sources in an item's overall: "judge" (the
	// panel) and "check:<type>"; missing = 1.
	SourceWeights map[string]float64 `json:"source_weights,omitempty"`
	SystemPrompt  string             `json:"system_prompt"`
	TriggeredBy   string             `json:"-"`
	ScheduleID    *int64             `json:"-"`
	// Snapshot is filled by the engine: what decides the run's scores, as JSON.
	Snapshot string `json:"-"`
	// Pairwise asks the judges to compare the targets' answers in pairs
	// (both orders) and ranks the targets by Bradley–Terry, instead of
	// scoring each answer; it needs two targets or more and a judge.
	Pairwise bool `json:"pairwise,omitempty"`
	// Pipeline judges items as their answers come in, while other groups
	// still answer (see RunOptions.Pipeline); off: judging follows benchmarking.
	Pipeline bool `json:"pipeline,omitempty"`
	// Tags label the run.
	Tags []string `json:"tags,omitempty"`
	// TaskSelection picks N of the collections' tasks (top, bottom or
	// random with a seed); TaskIDs hand-picks them. Neither: all tasks.
	TaskSelection *TaskSelection `json:"task_selection,omitempty"`
	TaskIDs       []TaskRef      `json:"task_ids,omitempty"`

	// MaxCostUSD is the run's budget: when its spend reaches it, the engine
	// pauses the run ("budget reached"); nil = no budget.
	MaxCostUSD *float64 `json:"max_cost_usd,omitempty"`

	// Source makes a schedule's template pull a dataset run of a trace
	// source (an IMPORTED run) instead of asking targets; see runs.ImportSource.
	Source *SourcePull `json:"source,omitempty"`

	// imported holds an IMPORTED run's targets and answers (CreateImportedRun).
	imported *ImportedRun
}

// SourcePull is a dataset run of a trace source to import on a schedule:
// Run "latest" (the default) is the dataset's newest run when it fires.
type SourcePull struct {
	SourceID   int64   `json:"source_id"`
	Dataset    string  `json:"dataset"`
	Run        string  `json:"run"`
	Collection string  `json:"collection,omitempty"`
	Checks     []Check `json:"checks,omitempty"`
}

func (p *SourcePull) normalize() error {
	p.Dataset, p.Run = strings.TrimSpace(p.Dataset), strings.TrimSpace(p.Run)
	if p.Run == "" {
		p.Run = "latest"
	}
	switch {
	case p.SourceID <= 0:
		return invalid("source.source_id", "is required: the trace source to import from")
	case p.Dataset == "":
		return invalid("source.dataset", "is required: the name of a dataset of the source")
	}
	for i, c := range p.Checks {
		if err := checks.Validate(c.Type, c.Value); err != nil {
			return invalid(fmt.Sprintf("source.checks[%d]", i), "%v", err)
		}
	}
	return nil
}

// maxRepeats bounds repeat runs; pass@k needs a handful, not thousands.
const maxRepeats = 100

func (in *RunInput) normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	if len(in.Name) > 255 {
		return invalid("name", "is longer than 255 characters")
	}
	if in.TriggeredBy == "" {
		in.TriggeredBy = "API"
	}
	if in.Snapshot == "" {
		in.Snapshot = "{}"
	}
	if in.Repeats == 0 {
		in.Repeats = 1
	}
	if err := in.normalizeSelection(); err != nil {
		return err
	}
	if in.Repeats < 1 || in.Repeats > maxRepeats {
		return invalid("repeats", "must be within 1…%d", maxRepeats)
	}
	if in.Judge != nil && len(in.JudgeIDs) > 0 {
		return invalid("judge_ids", "send either judge or judge_ids, not both")
	}
	if in.Judge != nil {
		if in.Judge.AgentID != 0 {
			return invalid("judge.agent_id", "a judge is a model, not an agent")
		}
		if in.Judge.ProviderID == 0 {
			return invalid("judge.provider_id", "is required")
		}
		in.Judge.Model = strings.TrimSpace(in.Judge.Model)
		if in.Judge.Model == "" {
			return invalid("judge.model", "is required")
		}
		if err := in.Judge.Settings.Validate("judge.settings"); err != nil {
			return err
		}
	}
	if len(in.JudgeIDs) > 10 {
		return invalid("judge_ids", "a panel has at most 10 judges")
	}
	for i, id := range in.JudgeIDs {
		for _, prev := range in.JudgeIDs[:i] {
			if prev == id {
				return invalid("judge_ids", "judge %d is listed twice", id)
			}
		}
	}
	in.SystemPrompt = strings.TrimSpace(in.SystemPrompt)
	if len(in.SystemPrompt) > 100_000 {
		return invalid("system_prompt", "is longer than 100,000 characters")
	}
	if len(in.Metrics) > 100 {
		return invalid("metrics", "at most 100 metrics")
	}
	for name, w := range in.Weights {
		if w < 0 || w > 1000 || w != w {
			return invalid("weights", "the weight of %q must be within 0…1000", name)
		}
	}
	for name, w := range in.SourceWeights {
		if name != "judge" && !strings.HasPrefix(name, "check:") {
			return invalid("source_weights", "%q is not a source; use \"judge\" or \"check:<type>\"", name)
		}
		if w < 0 || w > 1000 || w != w {
			return invalid("source_weights", "the weight of %q must be within 0…1000", name)
		}
	}
	if err := ValidBudget("max_cost_usd", in.MaxCostUSD); err != nil {
		return err
	}
	if in.imported != nil {
		return in.imported.validate()
	}
	if in.Source != nil {
		if len(in.Targets) > 0 || in.hasPool() {
			return invalid("source", "a template that imports a dataset run names no targets or collections: they come from the dataset")
		}
		if err := in.Source.normalize(); err != nil {
			return err
		}
		if in.Judge == nil && len(in.JudgeIDs) == 0 && len(in.Source.Checks) == 0 {
			return invalid("source.checks", "pick a judge (judge or judge_ids) or reference checks to score the imported answers")
		}
		return nil
	}
	if len(in.Targets) == 0 {
		return invalid("targets", "pick at least one model or agent to benchmark")
	}
	if len(in.Targets) > 50 {
		return invalid("targets", "a run has at most 50 targets")
	}
	type key struct {
		agent    int64
		provider int64
		model    string
	}
	seen := map[key]bool{}
	for i := range in.Targets {
		t := &in.Targets[i]
		t.Model = strings.TrimSpace(t.Model)
		field := fmt.Sprintf("targets[%d]", i)
		if t.AgentID != 0 {
			switch {
			case t.AgentID < 0:
				return invalid(field+".agent_id", "must be an agent's id")
			case t.ProviderID != 0 || t.Model != "":
				return invalid(field, "send either agent_id or provider_id and model: an agent brings its own model")
			case t.Settings != (TargetSettings{}):
				return invalid(field+".settings", "an agent's settings are part of its config: edit the agent")
			case t.Version != "":
				return invalid(field+".version", "an agent target's version is the agent's own")
			}
			if seen[key{agent: t.AgentID}] {
				return invalid(field, "agent %d is listed twice", t.AgentID)
			}
			seen[key{agent: t.AgentID}] = true
			continue
		}
		if t.ProviderID == 0 {
			return invalid(field+".provider_id", "is required (or agent_id, to benchmark an agent)")
		}
		if t.Model == "" {
			return invalid(field+".model", "is required")
		}
		if t.Version = strings.TrimSpace(t.Version); len(t.Version) > 255 {
			return invalid(field+".version", "is longer than 255 characters")
		}
		if err := t.Settings.Validate(field + ".settings"); err != nil {
			return err
		}
		k := key{provider: t.ProviderID, model: t.Model}
		if seen[k] {
			return invalid(field, "model %q of provider %d is listed twice", t.Model, t.ProviderID)
		}
		seen[k] = true
	}
	if in.Pairwise && len(in.Targets) < 2 {
		return invalid("targets", "pairwise judging compares models: pick at least two")
	}
	if in.Pairwise && in.Judge == nil && len(in.JudgeIDs) == 0 {
		return invalid("judge.provider_id", "pairwise judging needs a judge or a panel (judge_ids)")
	}
	if !in.hasPool() {
		return invalid("collection_ids", "pick at least one collection, use case or category")
	}
	return nil
}

// MeasuredMetrics can be stored as scores of every answer (source
// "measure") when a run names them in its metrics; they are off unless named.
var MeasuredMetrics = []string{"latency_ms", "tokens", "tokens_per_s", "cost_usd"}

// checksOnly reports whether the run's metrics name reference checks alone,
// so it needs no judge.
func (in *RunInput) checksOnly() bool {
	if len(in.Metrics) == 0 {
		return false
	}
	for _, m := range in.Metrics {
		if !strings.HasPrefix(m, "check_") && !slices.Contains(MeasuredMetrics, m) {
			return false
		}
	}
	return true
}
