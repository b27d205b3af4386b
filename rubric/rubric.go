// Package rubric is the contract between Tribunal and its judges: the
// metrics a judgement style scores, the prompt template that asks for them,
// the JSON schema the reply must fit, and the parser that enforces it.
package rubric

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// Metric is one scoring dimension of a style. Higher is always better, so
// metrics aggregate the same way (hallucination: the top score means none).
type Metric struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight"`
}

// Overall is the metric name of a verdict's overall score: the weighted mean
// of its metrics, or the only metric of a single-metric style.
const Overall = "score"

// BuiltinMetrics are the metrics of seed 003 §3.1, ready to pick.
var BuiltinMetrics = []Metric{
	{Name: "accuracy", Description: "Is the answer factually and logically correct and does it answer what was asked? The top score means fully correct.", Weight: 1},
	{Name: "hallucination", Description: "Does the answer avoid claims that are unsupported or invented? The top score means no hallucination at all.", Weight: 1},
	{Name: "truthfulness", Description: "Does the answer avoid common misconceptions and state uncertainty honestly? The top score means fully truthful.", Weight: 1},
	{Name: "coherence", Description: "Is the answer well organised, consistent and easy to follow? The top score means fully coherent.", Weight: 1},
	{Name: "subjective_quality", Description: "Overall helpfulness, tone and polish as an expert reader would judge it.", Weight: 1},
}

// DefaultTemplate lays out the task, references and answer for the judge,
// and an agent's tool calls when it made any. The answer and the tool calls
// sit between markers so text in them cannot pose as instructions.
const DefaultTemplate = `## Task
{{.Question}}
{{- if gt (len .Turns) 1}}

## Conversation
{{- range $i, $t := .Turns}}
### User (turn {{inc $i}})
{{$t}}
### Assistant (turn {{inc $i}})
<<<ANSWER
{{index $.Answers $i}}
ANSWER>>>
{{- end}}
{{- end}}
` + contextSections + `
{{- with .ToolCalls}}

## Tool calls the agent made
Each line is one call in order: the tool, its arguments, and what it returned (long results clipped).
<<<TOOL_CALLS
{{.}}
TOOL_CALLS>>>
{{- end}}
{{- if le (len .Turns) 1}}

## Answer to grade
<<<ANSWER
{{.Response}}
ANSWER>>>
{{- end}}

Grade the answer on each metric from {{.ScaleMin}} to {{.ScaleMax}}. Reply with the JSON object only.`

// contextSections show a task's use case, constraints, references and
// judge-only instructions, in every built-in prompt; empty ones are left out.
const contextSections = `{{- with .UseCase.Goal}}

## Goal of the use case
{{.}}
{{- end}}
{{- with .UseCase.Constraints}}

## Use-case constraints to respect
{{- range .}}
- {{.}}
{{- end}}
{{- end}}
{{- with .UseCase.Notes}}

## Use-case notes
{{.}}
{{- end}}
{{- with .Constraints}}

## Constraints to respect
{{.}}
{{- end}}
{{- with .Reference}}

## Reference answer
{{.}}
{{- end}}
{{- with .Excellent}}

## Reference: excellent answer
{{.}}
{{- end}}
{{- with .Good}}

## Reference: good answer
{{.}}
{{- end}}
{{- with .Pass}}

## Reference: pass answer
{{.}}
{{- end}}
{{- with .IncorrectAnswerDirection}}

## Incorrect answer direction
An answer that goes this way is wrong and must score low: {{.}}
{{- end}}
{{- with .JudgeInstructions}}

## Instructions for the judge
{{.}}
{{- end}}`

// Input is what a prompt template can use.
type Input struct {
	Question                 string
	Turns                    []string // user turns; one for a single-turn task
	Answers                  []string // the model's answer to each turn
	Response                 string   // the last answer
	Reference                string
	Excellent, Good, Pass    string
	IncorrectAnswerDirection string
	Constraints              string
	JudgeInstructions        string
	// ToolCalls is an agent's trajectory as the judge reads it
	// (trajectory.Calls.Compact: one line per call); empty for a model
	// target or an agent that called no tool. AgentTurns counts the agent's
	// model calls (0 for a model target).
	ToolCalls          string
	AgentTurns         int
	UseCase            UseCase
	Metrics            []Metric
	ScaleMin, ScaleMax int
}

// UseCase is what the task's use case tells the judge: its goal, its
// constraints in words (one a line) and its notes; empty when the task has
// no saved use case.
type UseCase struct {
	Goal        string
	Constraints []string
	Notes       string
}

var funcs = template.FuncMap{"inc": func(i int) int { return i + 1 }}

// maxTemplate bounds a template's size; real ones are a few KB.
const maxTemplate = 64 << 10

// Parse compiles a prompt template and tries it on a sample, so a template
// that would fail at judging time, or outgrow the render bounds, is refused
// when it is saved.
func Parse(ctx context.Context, text string) (*template.Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("the prompt template is empty")
	}
	if len(text) > maxTemplate {
		return nil, fmt.Errorf("the prompt template is longer than %d bytes", maxTemplate)
	}
	t, err := template.New("judge").Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	if err := checkTree(t); err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	sample := Input{Question: "Q", Turns: []string{"Q", "Q2"}, Answers: []string{"A", "A2"}, Response: "A2",
		ToolCalls: `1. [turn 1] search({"q":"Q"}) → R`, AgentTurns: 2, Metrics: BuiltinMetrics, ScaleMin: 1, ScaleMax: 10,
		UseCase: UseCase{Goal: "G", Constraints: []string{"C"}, Notes: "N"}}
	if _, err := Render(ctx, t, sample); err != nil {
		return nil, err
	}
	single := sample
	single.Turns, single.Answers = []string{"Q"}, []string{"A"}
	if _, err := Render(ctx, t, single); err != nil {
		return nil, err
	}
	if !strings.Contains(text, ".Response") && !strings.Contains(text, ".Answers") {
		return nil, errors.New("prompt template: it never shows the answer ({{.Response}} or {{.Answers}})")
	}
	return t, nil
}

// Render fills a template for one answer, within MaxOutput and RenderTimeout.
func Render(ctx context.Context, t *template.Template, in Input) (string, error) {
	if len(in.Answers) < len(in.Turns) {
		in.Answers = append(in.Answers, make([]string, len(in.Turns)-len(in.Answers))...)
	}
	// An answer that writes the closing marker must not escape the markers.
	in.Response = defuse(in.Response)
	answers := make([]string, len(in.Answers))
	for i, a := range in.Answers {
		answers[i] = defuse(a)
	}
	in.Answers = answers
	in.ToolCalls = defuse(in.ToolCalls)
	out, err := render(ctx, t, in)
	if err != nil {
		return "", fmt.Errorf("prompt template: %w", err)
	}
	return out, nil
}

var markers = strings.NewReplacer("ANSWER>>>", "ANSWER> > >", "<<<ANSWER", "< < <ANSWER",
	"TOOL_CALLS>>>", "TOOL_CALLS> > >", "<<<TOOL_CALLS", "< < <TOOL_CALLS")

func defuse(s string) string { return markers.Replace(s) }

// ValidateMetrics checks a style's metrics and scale.
func ValidateMetrics(metrics []Metric, scaleMin, scaleMax int) error {
	if scaleMax <= scaleMin {
		return fmt.Errorf("the scale %d–%d is empty: scale_max must exceed scale_min", scaleMin, scaleMax)
	}
	if scaleMin < -1000 || scaleMax > 1000 {
		return errors.New("the scale must lie within -1000…1000")
	}
	if len(metrics) == 0 {
		return errors.New("name at least one metric")
	}
	if len(metrics) > 20 {
		return errors.New("a style scores at most 20 metrics")
	}
	seen := map[string]bool{}
	for i, m := range metrics {
		if !metricName.MatchString(m.Name) {
			return fmt.Errorf("metrics[%d]: name %q must be lower-case letters, digits and _ (up to 40)", i, m.Name)
		}
		if m.Name == Overall && len(metrics) > 1 {
			return fmt.Errorf("metrics[%d]: %q is the overall score of several metrics; name the metric otherwise", i, m.Name)
		}
		if m.Name == violationsKey {
			return fmt.Errorf("metrics[%d]: %q is the judge's list of violations; name the metric otherwise", i, m.Name)
		}
		if strings.HasPrefix(m.Name, "check_") {
			return fmt.Errorf("metrics[%d]: names starting with check_ belong to reference checks", i)
		}
		if seen[m.Name] {
			return fmt.Errorf("metrics[%d]: %q is listed twice", i, m.Name)
		}
		seen[m.Name] = true
		if m.Weight < 0 || m.Weight > 1000 {
			return fmt.Errorf("metrics[%d]: weight must be within 0…1000", i)
		}
	}
	return nil
}

var metricName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// Schema is the JSON schema of a verdict: {score, reasoning} for a single
// metric, else an object per metric; with violations, a "violations" list
// beside them.
func Schema(metrics []Metric, scaleMin, scaleMax int, violations bool) json.RawMessage {
	one := func() map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"score":     map[string]any{"type": "integer", "minimum": scaleMin, "maximum": scaleMax},
				"reasoning": map[string]any{"type": "string"},
			},
			"required":             []string{"score", "reasoning"},
			"additionalProperties": false,
		}
	}
	top := one()
	if len(metrics) > 1 {
		props := map[string]any{}
		names := make([]string, len(metrics))
		for i, m := range metrics {
			props[m.Name] = one()
			names[i] = m.Name
		}
		top = map[string]any{"type": "object", "properties": props, "required": names, "additionalProperties": false}
	}
	if violations {
		top["properties"].(map[string]any)[violationsKey] = violationsSchema()
		top["required"] = append(top["required"].([]string), violationsKey)
	}
	b, _ := json.Marshal(top)
	return b
}

// SystemPrompt tells the judge who it is and how to answer; with
// violations it also asks for the violations list and explains its categories.
func SystemPrompt(personalityName, personalityDescription string, metrics []Metric, scaleMin, scaleMax int, violations bool) string {
	var b strings.Builder
	b.WriteString("You are an impartial expert judge grading an AI model's answer to a task.\n")
	if personalityName != "" || personalityDescription != "" {
		fmt.Fprintf(&b, "Your personality: %s. %s\n", strings.TrimSpace(personalityName), strings.TrimSpace(personalityDescription))
	}
	b.WriteString("Compare the answer with the references when they are given. Grade correctness first, then completeness and clarity. Do not reward length.\n")
	fmt.Fprintf(&b, "Score on a scale from %d (worst) to %d (best), whole numbers only; higher is always better.\n", scaleMin, scaleMax)
	if len(metrics) == 1 {
		if d := strings.TrimSpace(metrics[0].Description); d != "" {
			fmt.Fprintf(&b, "What the score measures: %s\n", d)
		}
		if violations {
			b.WriteString(violationsPrompt())
		}
		fmt.Fprintf(&b, `Reply with JSON only, exactly: {"score": <integer %d-%d>, "reasoning": "<one short paragraph>"`, scaleMin, scaleMax)
		if violations {
			b.WriteString(", " + violationsExample)
		}
		b.WriteString("}")
		return b.String()
	}
	b.WriteString("Metrics:\n")
	for _, m := range metrics {
		fmt.Fprintf(&b, "- %s: %s\n", m.Name, strings.TrimSpace(m.Description))
	}
	if violations {
		b.WriteString(violationsPrompt())
	}
	b.WriteString("Reply with JSON only, one object per metric, exactly: {")
	for i, m := range metrics {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"%s": {"score": <integer %d-%d>, "reasoning": "<one or two sentences>"}`, m.Name, scaleMin, scaleMax)
	}
	if violations {
		b.WriteString(", " + violationsExample)
	}
	b.WriteString("}")
	return b.String()
}
