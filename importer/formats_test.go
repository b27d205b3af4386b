package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"tribunal/store"
)

// genID is the id a task without one gets, computed independently of the
// package: the file stem and 12 hex digits of sha256(system, 0, turn, 0, turn…).
func genID(stem, system string, turns ...string) string {
	sum := sha256.Sum256([]byte(system + "\x00" + strings.Join(turns, "\x00")))
	return stem + "-" + hex.EncodeToString(sum[:])[:12]
}

func mustParse(t *testing.T, name, data string, f Format) []store.TaskInput {
	t.Helper()
	got, err := Parse(name, []byte(data), f)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return got
}

// sameTasks compares with want as Normalize leaves it (tags as an empty
// list, one turn as none), so the tests state what the importer builds.
func sameTasks(t *testing.T, got, want []store.TaskInput) {
	t.Helper()
	for i := range want {
		if err := want[i].Normalize(); err != nil {
			t.Fatalf("want[%d] is not valid: %v", i, err)
		}
	}
	if reflect.DeepEqual(got, want) {
		return
	}
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	t.Fatalf("tasks differ\ngot:  %s\nwant: %s", g, w)
}

func TestCSV(t *testing.T) {
	// Seed 000 columns plus seed 001's expected answer / comments / tags,
	// headers written loosely, one unknown column, a blank row, one row
	// without id, a multi-line cell.
	data := `Task ID,Category,Sub-Category,Question,Excellent,Good,Pass,Incorrect Answer Direction,Expected_Answer,Comments,Tags,Difficulty
t1,math,arith,What is 2+2?,4 with reasoning,4,four,says 5,4,easy one,"a, b; c ,a",easy
,,,,,,,,,,,
,math,,"Name two
primes.",,,,,,,,,,
`
	got := mustParse(t, "Seed Tasks.csv", data, FormatCSV)
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: "t1", Category: "math", Subcategory: "arith", Question: "What is 2+2?",
			Excellent: "4 with reasoning", Good: "4", Pass: "four", IncorrectAnswerDirection: "says 5",
			Reference: "4", Comments: "easy one", Tags: []string{"a", "b", "c"},
			Metadata: map[string]string{"Difficulty": "easy"}},
		{TaskKey: genID("seed-tasks", "", "Name two\nprimes."), Category: "math", Question: "Name two\nprimes."},
	})
}

func TestCSVLooseHeadersAndDelimiters(t *testing.T) {
	want := []store.TaskInput{{TaskKey: "x1", Category: "c", Question: "q?", Reference: "r",
		SystemPrompt: "be brief", Tags: []string{"t"}, Checks: []store.Check{{Type: "exact_match"}, {Type: "contains"}}}}
	for _, tc := range []struct{ name, data string }{
		{"aliases.csv", "ID,CATEGORY,prompt,answer,System,tag,checks\nx1,c,q?,r,be brief,t,exact_match; contains\n"},
		{"aliases2.csv", "task-id,category ,Query Text,ground truth,system_prompt,Tags,Checks\nx1,c,q?,r,be brief,t,\"[\"\"exact-match\"\",{\"\"type\"\":\"\"contains\"\"}]\"\n"},
		{"semicolon.csv", "id;category;input;ideal;system;tags;checks\nx1;c;q?;r;be brief;t;exact_match,contains\n"},
		{"excel.csv", "sep=;\nid;category;input;ideal;system;tags;checks\nx1;c;q?;r;be brief;t;exact_match,contains\n"},
		{"tabs.tsv", "id\tcategory\tinput\tideal\tsystem\ttags\tchecks\nx1\tc\tq?\tr\tbe brief\tt\texact_match,contains\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameTasks(t, mustParse(t, tc.name, tc.data, ""), want)
		})
	}
}

func TestCSVHeaderProblems(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"id,category,answer\n1,c,x\n", "line 1: question: no question column"},
		{"question,prompt\na,b\n", `line 1: question: columns 1 ("question") and 2 ("prompt") are the same field`},
		{"question,note,note\na,b,c\n", `line 1: note: columns 2 ("note") and 3 ("note") are the same field`},
		{"question,Answer,ideal\na,b,c\n", `line 1: reference: columns 2 ("Answer") and 3 ("ideal") are the same field`},
	} {
		_, err := Parse("x.csv", []byte(tc.data), FormatCSV)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestJSONL(t *testing.T) {
	data := `{"question": "Janet has 3 eggs. How many?", "answer": "She has 3.\n#### 3", "category": "gsm"}

{"id": 7, "category": "chat", "turns": ["Hi", "Now in French"], "system_prompt": "Be kind.", "tags": ["x", "y"],
 "checks": [{"type": "contains", "value": "Bonjour"}, "rouge_l"], "expected": "Salut", "metadata": {"source": "me", "n": 2}, "difficulty": {"level": 3}}
`
	// The second record spans two lines: JSONL is one record per line.
	_, err := Parse("gsm.jsonl", []byte(data), FormatJSONL)
	if err == nil || !strings.Contains(err.Error(), "line 3: not valid JSON") || !strings.Contains(err.Error(), "line 4: not valid JSON") {
		t.Fatalf("err = %v", err)
	}
	data = strings.Replace(data, "\"y\"],\n", "\"y\"],", 1)
	got := mustParse(t, "gsm.jsonl", data, FormatJSONL)
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: genID("gsm", "", "Janet has 3 eggs. How many?"), Category: "gsm", Question: "Janet has 3 eggs. How many?",
			Reference: "3", Excellent: "She has 3.", Checks: []store.Check{{Type: "numeric"}}},
		{TaskKey: "7", Category: "chat", Question: "Hi", Turns: []string{"Hi", "Now in French"}, SystemPrompt: "Be kind.",
			Tags: []string{"x", "y"}, Checks: []store.Check{{Type: "contains", Value: "Bonjour"}, {Type: "rouge_l"}}, Reference: "Salut",
			Metadata: map[string]string{"source": "me", "n": "2", "difficulty": `{"level":3}`}},
	})
}

func TestJSONArrayFile(t *testing.T) {
	data := "[\n  {\"task_id\": \"a\", \"question\": \"q1\", \"category\": \"k\"},\n  {\"task_id\": \"b\", \"question\": \"q2\", \"category\": \"k\"}\n]\n"
	got := mustParse(t, "tasks.json", data, "")
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: "a", Category: "k", Question: "q1"},
		{TaskKey: "b", Category: "k", Question: "q2"},
	})
	_, err := Parse("tasks.json", []byte(strings.Replace(data, `"q2"`, `""`, 1)), "")
	want := Errors{{Row: 2, Line: 3, Column: 3, Field: "question", Message: "is required"}}
	if !reflect.DeepEqual(err, want) {
		t.Fatalf("err = %#v, want %#v", err, want)
	}
}

// seed004 is TaskBench's task shape (seed 004), as its example tasks write it.
const seed004 = `name: "lecture_concept_extraction"
description: "Extract teaching concepts from lecture transcripts with precise timestamps"

input_type: "transcript"
output_format: "csv"

evaluation_criteria:
  - "Concept count (target: 20-24 for 3-hour lecture)"
  - "No overlapping time ranges"

constraints:
  min_duration_minutes: 2
  max_duration_minutes: 7
  required_csv_columns: ["concept", "start_time", "end_time"]
  timestamp_format: "HH:MM:SS"

examples:
  - input: "Sample transcript snippet..."
    expected_output: "01_Teaching_Concept,00:20:06,00:23:15"
    quality_score: 95

judge_instructions: |
  Evaluate the model's output.

  Count violations.
`

func TestYAMLSeed004(t *testing.T) {
	got := mustParse(t, "lecture_analysis.yaml", seed004, "")
	sameTasks(t, got, []store.TaskInput{{
		TaskKey:  "lecture_concept_extraction",
		Category: "lecture_analysis",
		Question: "Extract teaching concepts from lecture transcripts with precise timestamps",
		Constraints: "Output format: csv\n\nmin_duration_minutes: 2\nmax_duration_minutes: 7\n" +
			"required_csv_columns: concept, start_time, end_time\ntimestamp_format: HH:MM:SS",
		Examples: "Example 1:\ninput: Sample transcript snippet...\nexpected_output: 01_Teaching_Concept,00:20:06,00:23:15\nquality_score: 95",
		JudgeInstructions: "Evaluation criteria:\n- Concept count (target: 20-24 for 3-hour lecture)\n- No overlapping time ranges\n\n" +
			"Evaluate the model's output.\n\nCount violations.",
		Metadata: map[string]string{"input_type": "transcript"},
	}})
}

func TestYAMLTaskList(t *testing.T) {
	data := `# defaults for every task sit next to tasks:
name: Geography suite
category: geo
tags: [capitals]
tasks:
  - task_id: 007
    question: Capital of France?
    reference: Paris
    checks:
      - type: exact_match
      - {type: json_schema, value: {type: object}}
  - name: de
    description: Capital of Germany?
    question: What is the capital of Germany?
    category: europe
    turns:
      - What is the capital of Germany?
      - And of Austria?
---
- id: third
  category: geo
  prompt: |
    Multi-line
    prompt
`
	got := mustParse(t, "geo.yml", data, "")
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: "007", Category: "geo", Question: "Capital of France?", Reference: "Paris", Tags: []string{"capitals"},
			Checks:   []store.Check{{Type: "exact_match"}, {Type: "json_schema", Value: `{"type":"object"}`}},
			Metadata: map[string]string{"suite_name": "Geography suite"}},
		{TaskKey: "de", Category: "europe", Question: "What is the capital of Germany?", Tags: []string{"capitals"},
			Turns:    []string{"What is the capital of Germany?", "And of Austria?"},
			Metadata: map[string]string{"description": "Capital of Germany?", "suite_name": "Geography suite"}},
		{TaskKey: "third", Category: "geo", Question: "Multi-line\nprompt"},
	})
}

func TestYAMLAnchors(t *testing.T) {
	data := `base: &base
  category: shared
  reference: same
tasks:
  - <<: *base
    task_id: a
    question: one
  - <<: *base
    task_id: b
    question: two
    reference: own
`
	got := mustParse(t, "anchors.yaml", data, FormatYAML)
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: "a", Category: "shared", Question: "one", Reference: "same",
			Metadata: map[string]string{"base": `{"category":"shared","reference":"same"}`}},
		{TaskKey: "b", Category: "shared", Question: "two", Reference: "own",
			Metadata: map[string]string{"base": `{"category":"shared","reference":"same"}`}},
	})
}

const promptfooConfig = `description: Translation checks
prompts:
  - "Translate to {{ language }}: {{text}}"
providers: [openai:gpt-4o-mini]
defaultTest:
  assert:
    - type: llm-rubric
      value: The translation is natural.
tests:
  - description: greeting
    vars:
      language: French
      text: Hello
      expected: Bonjour
    metadata:
      category: translation
      difficulty: easy
    assert:
      - type: equals
        value: Bonjour
      - type: icontains
        value: bonjour
      - type: contains-all
        value: [Bon, jour]
      - type: regex
        value: "^B"
      - type: starts-with
        value: "Bon."
      - type: is-json
      - type: contains-json
        value: {type: object}
      - type: similar
        value: Bonjour!
        threshold: 0.8
      - type: not-contains
        value: Hello
  - vars:
      language: [German, Spanish]
      text: Thanks
`

func TestPromptfoo(t *testing.T) {
	got := mustParse(t, "promptfooconfig.yaml", promptfooConfig, "")
	judge := "The translation is natural."
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: genID("promptfooconfig", "", "Translate to French: Hello"), Category: "translation",
			Question: "Translate to French: Hello", Reference: "Bonjour",
			Checks: []store.Check{
				{Type: "exact_match", Value: "Bonjour"}, {Type: "contains", Value: "bonjour"},
				{Type: "regex", Value: "^B"}, {Type: "json_valid"}, {Type: "json_schema", Value: `{"type":"object"}`},
			},
			JudgeInstructions: judge + "\n\nAlso check (from promptfoo assertions):\n- contains: Bon\n- contains: jour\n" +
				"- starts-with: Bon.\n- similar: Bonjour! (threshold 0.8)\n- not-contains: Hello",
			Metadata: map[string]string{"description": "greeting", "difficulty": "easy"}},
		{TaskKey: genID("promptfooconfig", "", "Translate to German: Thanks"), Category: "promptfoo",
			Question: "Translate to German: Thanks", JudgeInstructions: judge},
		{TaskKey: genID("promptfooconfig", "", "Translate to Spanish: Thanks"), Category: "promptfoo",
			Question: "Translate to Spanish: Thanks", JudgeInstructions: judge},
	})
}

func TestPromptfooWithoutPrompts(t *testing.T) {
	data := `{"tests": [
  {"vars": {"question": "What's 2+2?", "answer": "4", "topic": "math"}, "assert": [{"type": "equals", "value": 4}]},
  {"vars": {"prompt": "[{\"role\": \"system\", \"content\": \"Terse.\"}, {\"role\": \"user\", \"content\": \"Hi\"}]"}}
]}`
	got := mustParse(t, "suite.json", data, "")
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: genID("suite", "", "What's 2+2?"), Category: "suite", Question: "What's 2+2?", Reference: "4",
			Checks: []store.Check{{Type: "exact_match", Value: "4"}}, Metadata: map[string]string{"topic": "math"}},
		{TaskKey: genID("suite", "", `[{"role": "system", "content": "Terse."}, {"role": "user", "content": "Hi"}]`), Category: "suite",
			Question: `[{"role": "system", "content": "Terse."}, {"role": "user", "content": "Hi"}]`},
	})
}

func TestPromptfooChatPromptAndErrors(t *testing.T) {
	data := `prompts:
  - label: chat
    raw: '[{"role": "system", "content": "You translate."}, {"role": "user", "content": "{{text}}"}]'
tests:
  - vars: {text: Hello}
  - vars: {other: x}
  - file://more_tests.yaml
  - vars: {text: Hi}
    assert:
      - type: contains
      - type: python
        value: file://check.py
`
	_, err := Parse("p.yaml", []byte(data), "")
	want := Errors{
		{Row: 2, Line: 6, Column: 5, Field: "vars", Message: "prompt chat uses {{text}}, which the test does not set"},
		{Row: 3, Line: 7, Column: 5, Field: "tests", Message: `loading tests from "file://more_tests.yaml" is not supported; write them in the config`},
		{Row: 4, Line: 10, Column: 9, Field: "assert", Message: "assert 1 (contains) has no value"},
		{Row: 4, Line: 12, Column: 16, Field: "assert", Message: `assert 2 (python) loads its value from "file://check.py", which is not supported`},
	}
	if !reflect.DeepEqual(err, want) {
		t.Fatalf("err = %#v\nwant %#v", err, want)
	}
	got := mustParse(t, "p.yaml", strings.SplitN(data, "  - vars: {other", 2)[0], "")
	sameTasks(t, got, []store.TaskInput{{TaskKey: genID("p", "You translate.", "Hello"), Category: "p",
		SystemPrompt: "You translate.", Question: "Hello"}})
}

func TestMTBench(t *testing.T) {
	data := `{"question_id": 81, "category": "writing", "turns": ["Compose a travel blog post.", "Rewrite it starting every sentence with A."]}
{"question_id": 111, "category": "math", "turns": ["Area of the triangle?", "Area of the circle?"], "reference": ["Area is 3", "5pi"]}
`
	got := mustParse(t, "question.jsonl", data, "")
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: "mtbench-81", Category: "writing", Question: "Compose a travel blog post.",
			Turns: []string{"Compose a travel blog post.", "Rewrite it starting every sentence with A."}},
		{TaskKey: "mtbench-111", Category: "math", Question: "Area of the triangle?",
			Turns: []string{"Area of the triangle?", "Area of the circle?"}, Reference: "Area is 3",
			Metadata: map[string]string{"references": `["Area is 3","5pi"]`}},
	})
}

func TestOpenAIEvals(t *testing.T) {
	data := `{"input": [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "2+2?"}], "ideal": "4"}
{"input": [{"role": "system", "content": "Be terse."}, {"role": "system", "name": "example_user", "content": "1+1?"}, {"role": "system", "name": "example_assistant", "content": "2"}, {"role": "user", "content": [{"type": "text", "text": "3+3?"}]}], "ideal": ["6", "six"]}
{"input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}, {"role": "user", "content": "Really bye"}], "ideal": "ok", "extra": true}
{"input": "Plain text prompt", "ideal": "x"}
`
	got := mustParse(t, "arith.jsonl", data, "")
	sameTasks(t, got, []store.TaskInput{
		{TaskKey: genID("arith", "Answer with a number.", "2+2?"), Category: "arith", SystemPrompt: "Answer with a number.",
			Question: "2+2?", Reference: "4"},
		{TaskKey: genID("arith", "Be terse.", "3+3?"), Category: "arith", SystemPrompt: "Be terse.", Question: "3+3?",
			Examples: "User: 1+1?\n\nAssistant: 2", Reference: "6", Metadata: map[string]string{"references": `["6","six"]`}},
		{TaskKey: genID("arith", "", "Bye", "Really bye"), Category: "arith", Question: "Bye", Turns: []string{"Bye", "Really bye"},
			Examples: "User: Hi\n\nAssistant: Hello!", Reference: "ok", Metadata: map[string]string{"extra": "true"}},
		{TaskKey: genID("arith", "", "Plain text prompt"), Category: "arith", Question: "Plain text prompt", Reference: "x"},
	})
	_, err := Parse("e.jsonl", []byte(`{"input": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}], "ideal": "x"}`), FormatOpenAIEvals)
	want := Errors{{Row: 1, Line: 1, Column: 12, Field: "input", Message: `message 1: content part of type "image_url" is not supported (only text)`}}
	if !reflect.DeepEqual(err, want) {
		t.Fatalf("err = %#v", err)
	}
}

// Asserts a check cannot hold go to the judge instead of failing the import.
func TestPromptfooAssertFallbacks(t *testing.T) {
	data := `tests:
  - vars: {question: "Spell it"}
    assert:
      - {type: regex, value: "(?<=a)b"}
      - {type: equals, value: abc, transform: output.trim()}
      - {type: regex, value: "^a"}
      - {type: regex, value: "b$"}
      - {type: contains-any, value: [a, b]}
`
	got := mustParse(t, "spell.yaml", data, "")
	sameTasks(t, got, []store.TaskInput{{TaskKey: genID("spell", "", "Spell it"), Category: "spell", Question: "Spell it",
		Checks: []store.Check{{Type: "regex", Value: "^a"}},
		JudgeInstructions: "Also check (from promptfoo assertions):\n- regex: (?<=a)b\n- transformed equals: abc\n- regex: b$\n" +
			"- contains-any: a, b"}})
}
