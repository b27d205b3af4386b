package importer

import (
	"strings"
	"testing"
)

// invalidTask is TaskBench's own tests/fixtures/invalid_task.yaml.
const invalidTask = `name: "invalid_task"
description: "This task is missing required fields"
input_type: "invalid_type"
output_format: "pdf"
# Missing evaluation_criteria
# Missing judge_instructions
`

func TestTaskBenchInvalidTask(t *testing.T) {
	_, err := Parse("invalid_task.yaml", []byte(invalidTask), "")
	need := "is required in a TaskBench task (one with input_type, output_format or evaluation_criteria)"
	wantErrors(t, err, Errors{
		{Row: 1, Line: 1, Column: 1, Field: "evaluation_criteria", Message: need},
		{Row: 1, Line: 1, Column: 1, Field: "judge_instructions", Message: need},
		{Row: 1, Line: 3, Column: 13, Field: "input_type", Message: `"invalid_type" is not one of transcript, text, csv, json`},
		{Row: 1, Line: 4, Column: 16, Field: "output_format", Message: `"pdf" is not one of csv, json, markdown`},
	})
	if s := err.Error(); !strings.Contains(s, "line 3, column 13: input_type:") {
		t.Errorf("message %q does not say where", s)
	}
}

// Every bad task of a file is listed, each with its own place; the good
// one between them is not.
func TestTaskBenchEveryBadTask(t *testing.T) {
	data := `- name: a
  description: d
  input_type: text
  output_format: json
  evaluation_criteria: [right]
  judge_instructions: j
  constraints:
    min_words: 100
    max_words: 10
- name: b
  description: d
  input_type: text
  output_format: json
  evaluation_criteria: [right]
  judge_instructions: j
- name: c
  description: d
  input_type: text
  output_format: yaml
  evaluation_criteria: right
  judge_instructions: j
  constraints: [short]
- name: d
  description: d
  input_type: text
  output_format: json
  evaluation_criteria: [right, ""]
  judge_instructions: j
  examples: [just text]
  constraints:
    items_min: 5.5
    items_max: 5
`
	r := Read("suite.yaml", []byte(data), Options{})
	if len(r.Tasks) != 1 || r.Tasks[0].TaskKey != "b" {
		t.Errorf("good tasks = %+v, want b alone", r.Tasks)
	}
	wantErrors(t, r.Errors, Errors{
		{Row: 1, Line: 8, Column: 16, Field: "constraints", Message: "min_words (100) is more than max_words (10): no answer can meet both"},
		{Row: 3, Line: 19, Column: 18, Field: "output_format", Message: `"yaml" is not one of csv, json, markdown`},
		{Row: 3, Line: 20, Column: 24, Field: "evaluation_criteria", Message: "must be a list of criteria, not text"},
		{Row: 3, Line: 22, Column: 16, Field: "constraints", Message: "must be a mapping of constraint: value (min_words: 100), not a list"},
		{Row: 4, Line: 27, Column: 32, Field: "evaluation_criteria", Message: "criterion 2 must be non-empty text"},
		{Row: 4, Line: 29, Column: 14, Field: "examples", Message: "example 1 must be a mapping (input, expected_output, …), not text"},
		{Row: 4, Line: 31, Column: 16, Field: "constraints", Message: "items_min (5.5) is more than items_max (5): no answer can meet both"},
	})
}

// TaskBench lets a task add constraints of its own: they import, with a
// warning that says what the model gets.
func TestTaskBenchFreeConstraintsWarn(t *testing.T) {
	r := Read("lecture_analysis.yaml", []byte(seed004), Options{})
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	want := Errors{
		{Row: 1, Line: 14, Column: 25, Field: "constraints", Message: `"required_csv_columns" is not a key Tribunal writes out in words ` +
			`(min_…, max_…, must_… and required_fields); the model gets it as "Required csv columns: concept, start_time, end_time"`},
		{Row: 1, Line: 15, Column: 21, Field: "constraints", Message: `"timestamp_format" is not a key Tribunal writes out in words ` +
			`(min_…, max_…, must_… and required_fields); the model gets it as "Timestamp format: HH:MM:SS"`},
	}
	wantErrors(t, r.Warnings, want)
}

// Tribunal's own YAML tasks are not TaskBench's: they need none of its fields.
func TestPlainYAMLIsNotTaskBench(t *testing.T) {
	mustParse(t, "plain.yaml", "task_id: a\nquestion: q\njudge_instructions: j\n", "")
}

// Contradictory bounds written as text (CSV, JSON lines) are refused by
// TaskInput.Normalize, on the row's line.
func TestBoundsInTextConstraints(t *testing.T) {
	_, err := Parse("t.csv", []byte("task_id,question,constraints\na,q,\"min_words: 100\nmax_words: 10\"\n"), "")
	wantErrors(t, err, Errors{{Row: 1, Line: 2, Column: 1, Field: "constraints", Message: "min_words (100) is more than max_words (10): no answer can meet both"}})
	mustParse(t, "t.csv", "task_id,question,constraints\na,q,\"min_words: 10\nmax_words: 10\"\n", "")
}
