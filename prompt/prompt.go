// Package prompt builds the user prompt a task's model under test is sent
// (seed 004 §6, issue 16 §1). Build lays a task's parts out in this order,
// leaving out the empty ones:
//
//  1. the description or question (a multi-turn task's first turn);
//  2. "## Input data": the task's input (inline, or the file it named,
//     read at import);
//  3. "## Output format": the format, emphasised;
//  4. "## CRITICAL CONSTRAINTS": every constraint, one a line, with
//     min_words, max_words, required_fields and the like written out in words;
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
}

// Fields are what a prompt_template can read: .Question, .Input,
// .OutputFormat, .Constraints (the list, in words), .Examples and
// .FinalInstructions.
type Fields struct {
	Question          string
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
	if f.Input == "" && f.OutputFormat == "" && len(f.Constraints) == 0 && f.Examples == "" {
		return f.Question, nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(f.Question))
	section := func(title, body string) {
		if body != "" {
			fmt.Fprintf(&b, "\n\n## %s\n%s", title, body)
		}
	}
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
	return Fields{Question: q, Input: strings.TrimSpace(t.Input), OutputFormat: format, Constraints: cons,
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
	_, err := render(ctx, tmpl, fieldsOf(Task{Question: "Q", Input: "I", Constraints: "Output format: text\n\nmin_words: 1", Examples: "E"}))
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
