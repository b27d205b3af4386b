// Package prompt builds the user prompt a task's model under test is sent
// (seed 004 §6, issue 16 §1). Build lays a task's parts out in this order,
// leaving out the empty ones:
//
//  1. the description or question (a multi-turn task's first turn);
//     then "## Goal": its use case's goal;
//  2. "## Input data": the task's input (inline, or the file it named,
//     read at import);
//  3. "## Output format": the format, emphasised;
//  4. "## CRITICAL CONSTRAINTS": every constraint, one a line, with
//     min_words, max_words, required_fields and the like written out in words;
//     the task's own first, then its use case's (chunk_min: 500 → "Chunk: at
//     least 500.");
//  5. "## Examples of good outputs";
//  6. "## Final instructions": a fixed closing paragraph.
//
// Evaluation criteria, references and judge-only instructions are never
// part of it: they are for the judge. A task with none of parts 2–5 gets
// exactly its question, so plain tasks are sent as they always were.
//
// A task may replace the layout with its own prompt_template (Go
// text/template over Fields), rendered within the bounds of a judge's
// prompt template (package rubric: 256 KB, 200 ms, bounded loops).
package prompt

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"tribunal/rubric"
)

// MaxInput bounds a task's input data (inline or read from its input_file).
const MaxInput = 256 << 10

// outputFormatPrefix is how the importer records a TaskBench output_format
// as the first paragraph of a task's constraints (importer/yaml.go).
const outputFormatPrefix = "Output format:"

// finalInstructions closes a prompt that has any part beyond the question.
const finalInstructions = "Answer the task above. Follow the output format exactly and respect every critical constraint: " +
	"an answer that breaks one fails, however good it is otherwise. Reply with the output only, without commentary."

// Task is what a prompt is built from.
type Task struct {
	Question       string   // the description or question
	Turns          []string // a multi-turn task's user turns; the prompt is the first
	Input          string   // input data
	Constraints    string   // "Output format: x" first paragraph, then one constraint a line
	Examples       string   // examples of good outputs
	PromptTemplate string   // a task's own layout; "" uses the built-in one
	UseCase        UseCase  // what the task's use case adds
}

// UseCase is what a task's use case adds to the prompts of its model and its
// judges (seed 004 §11): the goal, notes for the judge, and the constraints
// every task of the use case shares. A run freezes it with its tasks.
type UseCase struct {
	Goal  string `json:"goal,omitempty"`
	Notes string `json:"notes,omitempty"`
	// Constraints are scalars by key: numbers, booleans and text.
	Constraints map[string]any `json:"constraints,omitempty"`
}

// ConstraintWords writes a use case's constraints out in words, one a line,
// by key: NAME_min and NAME_max as bounds, booleans as required or not,
// anything else as "Key: value".
func (u UseCase) ConstraintWords() []string {
	keys := make([]string, 0, len(u.Constraints))
	for k := range u.Constraints {
		keys = append(keys, k)
	}
	// A NAME_min reads before its NAME_max.
	order := func(k string) string {
		if base, ok := strings.CutSuffix(k, "_min"); ok {
			return base + "\x00"
		}
		if base, ok := strings.CutSuffix(k, "_max"); ok {
			return base + "\x01"
		}
		return k
	}
	sort.Slice(keys, func(i, j int) bool { return order(keys[i]) < order(keys[j]) })
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, constraintInWords(k, u.Constraints[k]))
	}
	return out
}

// ConstraintValue writes a use-case constraint's value as a user types it:
// numbers without trailing zeros, true/false, text trimmed.
func ConstraintValue(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

func constraintInWords(key string, v any) string {
	var val string
	switch x := v.(type) {
	case bool:
		name := key
		if base, ok := strings.CutSuffix(key, "_required"); ok && base != "" {
			name = base
		}
		if x {
			return words(name) + ": required."
		}
		return words(name) + ": not required."
	default:
		val = ConstraintValue(x)
	}
	switch base, isMin := strings.CutSuffix(key, "_min"); {
	case isMin && base != "":
		return words(base) + ": at least " + val + "."
	case strings.HasSuffix(key, "_max") && len(key) > 4:
		return words(strings.TrimSuffix(key, "_max")) + ": at most " + val + "."
	}
	return inWords(key + ": " + val)
}

// Fields are what a prompt_template can read: .Question, .Goal (the use
// case's), .Input, .OutputFormat, .Constraints (the list, in words, the use
// case's included), .Examples and .FinalInstructions.
type Fields struct {
	Question          string
	Goal              string
	Input             string
	OutputFormat      string
	Constraints       []string
	Examples          string
	FinalInstructions string
}

// Build is the first user message a task's model is sent; see the package
// doc for its parts and their order.
func Build(ctx context.Context, t Task) (string, error) {
	f := fieldsOf(t)
	if strings.TrimSpace(t.PromptTemplate) != "" {
		return render(ctx, t.PromptTemplate, f)
	}
	if f.Goal == "" && f.Input == "" && f.OutputFormat == "" && len(f.Constraints) == 0 && f.Examples == "" {
		return f.Question, nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(f.Question))
	section := func(title, body string) {
		if body != "" {
			fmt.Fprintf(&b, "\n\n## %s\n%s", title, body)
		}
	}
	section("Goal", f.Goal)
	section("Input data", f.Input)
	if f.OutputFormat != "" {
		section("Output format", "**Your output MUST be in this format: "+f.OutputFormat+"**")
	}
	if len(f.Constraints) > 0 {
		section("CRITICAL CONSTRAINTS", "**Every one of these must hold:**\n- "+strings.Join(f.Constraints, "\n- "))
	}
	section("Examples of good outputs", f.Examples)
	section("Final instructions", f.FinalInstructions)
	return b.String(), nil
}

func fieldsOf(t Task) Fields {
	q := t.Question
	if len(t.Turns) > 0 {
		q = t.Turns[0]
	}
	format, rest := splitFormat(t.Constraints)
	var cons []string
	for _, line := range strings.Split(rest, "\n") {
		if line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- ")); line != "" {
			cons = append(cons, inWords(line))
		}
	}
	cons = append(cons, t.UseCase.ConstraintWords()...)
	return Fields{Question: q, Goal: strings.TrimSpace(t.UseCase.Goal), Input: strings.TrimSpace(t.Input), OutputFormat: format, Constraints: cons,
		Examples: strings.TrimSpace(t.Examples), FinalInstructions: finalInstructions}
}

// splitFormat takes an "Output format: x" first paragraph off constraints.
func splitFormat(constraints string) (format, rest string) {
	c := strings.TrimSpace(constraints)
	if !strings.HasPrefix(c, outputFormatPrefix) {
		return "", c
	}
	first, rest, _ := strings.Cut(c, "\n\n")
	return strings.TrimSpace(strings.TrimPrefix(first, outputFormatPrefix)), rest
}

// inWords writes a "key: value" constraint out as a sentence: min_ and max_
// keys as bounds ("min_words: 100" → "at least 100 words"), required_fields
// as a list to include; any other line stays as it is.
func inWords(line string) string {
	s, _ := sentence(line)
	return s
}

// sentence is inWords, and whether the key is one it writes out as a
// sentence (see WordedKeys) rather than passing on as written.
func sentence(line string) (string, bool) {
	key, val, ok := strings.Cut(line, ":")
	val = strings.TrimSpace(val)
	if !ok || val == "" || strings.ContainsAny(key, " \t") {
		return line, false
	}
	val = strings.Trim(val, "[]")
	switch {
	case key == "required_fields":
		return "Include every one of these fields: " + val + ".", true
	case strings.HasPrefix(key, "min_"):
		return "At least " + val + " " + strings.ReplaceAll(strings.TrimPrefix(key, "min_"), "_", " ") + ".", true
	case strings.HasPrefix(key, "max_"):
		return "At most " + val + " " + strings.ReplaceAll(strings.TrimPrefix(key, "max_"), "_", " ") + ".", true
	case strings.HasPrefix(key, "must_"):
		return words(key) + ": " + val + ".", true
	}
	return words(key) + ": " + val, false
}

func words(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// Check parses a prompt_template and renders it on a sample task, as a save
// or an import does before it keeps one.
func Check(ctx context.Context, tmpl string) error {
	if strings.TrimSpace(tmpl) == "" {
		return nil
	}
	_, err := render(ctx, tmpl, fieldsOf(Task{Question: "Q", Input: "I", Constraints: "Output format: text\n\nmin_words: 1", Examples: "E",
		UseCase: UseCase{Goal: "G", Constraints: map[string]any{"chunk_min": 1.0}}}))
	return err
}

// render runs a prompt_template within rubric's bounds (256 KB, 200 ms).
func render(ctx context.Context, tmpl string, f Fields) (string, error) {
	t, err := rubric.ParseBounded("prompt", tmpl)
	if err != nil {
		return "", fmt.Errorf("prompt_template: %w", err)
	}
	out, err := rubric.RenderBounded(ctx, t, f)
	if err != nil {
		return "", fmt.Errorf("prompt_template: %w", err)
	}
	return out, nil
}
