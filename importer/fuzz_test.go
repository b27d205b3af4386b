package importer

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"tribunal/checks"
	"tribunal/prompt"
	"tribunal/store"
)

// checkParse is the contract every parser keeps on any input: no panic, and
// either tasks that all pass Normalize with distinct ids, or no tasks and a
// non-empty Errors whose entries all say something.
func checkParse(t *testing.T, name string, data []byte, f Format) {
	// A slow input would only stall the fuzzer; panicking makes it a
	// recorded failure instead. Fuzz inputs are small, so 10s is a hang.
	watchdog := time.AfterFunc(10*time.Second, func() { panic("slow input") })
	tasks, err := Parse(name, data, f)
	watchdog.Stop()
	if err != nil {
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("err = %v (%T), want a non-empty Errors", err, err)
		}
		for _, e := range es {
			if e.Message == "" {
				t.Fatalf("error without a message: %#v", e)
			}
		}
		if tasks != nil {
			t.Fatalf("%d tasks returned with errors", len(tasks))
		}
		return
	}
	if len(tasks) == 0 {
		t.Fatal("no tasks and no error")
	}
	ids := map[string]bool{}
	for i, task := range tasks {
		again := task
		if err := again.Normalize(); err != nil {
			t.Fatalf("task %d fails Normalize: %v", i, err)
		}
		if !reflect.DeepEqual(again, task) {
			t.Fatalf("task %d is not normalized:\n%#v\n%#v", i, task, again)
		}
		if ids[task.TaskKey] {
			t.Fatalf("task_id %q repeats", task.TaskKey)
		}
		ids[task.TaskKey] = true
	}
}

// checkRead is the contract of Read on any input: its tasks line up with
// their row numbers, its counts stay within them, and it agrees with Parse.
func checkRead(t *testing.T, name string, data []byte, f Format) {
	r := Read(name, data, Options{Format: f})
	if len(r.Tasks) != len(r.RowNums) || r.Defaulted > len(r.Tasks) || r.GSM8K > len(r.Tasks) ||
		r.WithChecks() > len(r.Tasks) || r.BadRows() > len(r.Errors) || r.Skipped < 0 {
		t.Fatalf("inconsistent result: %d tasks, %d row numbers, %d defaulted, %d GSM8K, %d bad rows for %d errors",
			len(r.Tasks), len(r.RowNums), r.Defaulted, r.GSM8K, r.BadRows(), len(r.Errors))
	}
	for i := 1; i < len(r.RowNums); i++ {
		if r.RowNums[i] <= r.RowNums[i-1] {
			t.Fatalf("row numbers out of order: %v", r.RowNums)
		}
	}
	tasks, err := Parse(name, data, f)
	if (err == nil) != (len(r.Errors) == 0) || err == nil && !reflect.DeepEqual(tasks, r.Tasks) {
		t.Fatalf("Parse and Read disagree: %v vs %v", err, r.Errors)
	}
}

// FuzzGSM8K: whatever the reference, a recognised GSM8K answer leaves a
// reference the numeric check accepts, with no separators or marker left,
// keeps an excellent answer the row has, and adds one numeric check.
func FuzzGSM8K(f *testing.F) {
	for _, s := range []string{
		"Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day at the farmer’s market.\n#### 18",
		"#### 1,234", "#### -0.5", "a #### b #### 3", "#### 12,34", "<<<<>>>> #### 1", "####",
	} {
		f.Add(s, "")
	}
	f.Add("x\n#### 2", "own")
	f.Fuzz(func(t *testing.T, ref, excellent string) {
		task := store.TaskInput{Reference: ref, Excellent: excellent}
		if !gsm8k(&task) {
			if task.Reference != ref || task.Excellent != excellent || task.Checks != nil {
				t.Fatalf("an unrecognised reference changed the task: %+v", task)
			}
			return
		}
		if strings.ContainsAny(task.Reference, ", #") || checks.Validate(checks.Numeric, task.Reference) != nil {
			t.Fatalf("reference %q from %q", task.Reference, ref)
		}
		if excellent != "" && task.Excellent != excellent || len(task.Checks) != 1 || task.Checks[0].Type != checks.Numeric {
			t.Fatalf("excellent %q, checks %v from %q", task.Excellent, task.Checks, ref)
		}
	})
}

func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{
		"task_id,category,question,reference,tags,checks,extra\nt1,c,q?,r,\"a,b\",exact_match,x\n,,q2,,,,\n",
		"\xEF\xBB\xBFquestion;answer\r\n\"multi\r\nline\";4\r\n",
		"sep=\t\nprompt\tturns\nhi\t[\"hi\",\"more\"]\n",
		"id,question\na,x\na,y\n,,\n",
		"question,checks,metadata\nq,\"[{\"\"type\"\":\"\"regex\"\",\"\"value\"\":\"\"a+\"\"}]\",\"{\"\"k\"\":1}\"\n",
		"question,answer,excellent,checks\nq,\"2,000+1=<<2000+1=2001>>2,001\n#### 2,001\",mine,numeric\n,,,\nq2,#### -1.5,,\n",
		"category,question,answer\nmath,q,#### 18\n,q2,x #### 7\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, "fuzz.csv", data, FormatCSV)
		checkRead(t, "fuzz.csv", data, FormatCSV)
	})
}

func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{
		`{"question": "q", "answer": "a"}` + "\n" + `{"id": 1, "turns": ["a", "b"], "checks": ["f1"], "metadata": {"k": [1]}}`,
		`{"question_id": 81, "category": "writing", "turns": ["a", "b"], "reference": ["x", "y"]}`,
		`{"input": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "u"}]}], "ideal": ["a"]}`,
		`[{"question": "q"}, {"question": "q"}]`,
		"{\"question\": \"a\"}\r\n\r\n{bad",
		`{"question": "Janet’s ducks lay 16 eggs per day.", "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n#### 18"}`,
		`{"question": "q", "answer": "#### 1,234", "metadata": {"rationale": "r"}, "excellent": "e"}` + "\n" + `{"question": "q2", "category": "c", "answer": "#### x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatJSONL, FormatMTBench, FormatOpenAIEvals} {
			checkParse(t, "fuzz.jsonl", data, format)
			checkRead(t, "fuzz.jsonl", data, format)
		}
	})
}

func FuzzParseYAML(f *testing.F) {
	for _, s := range []string{
		seed004,
		promptfooConfig,
		"category: c\ntasks:\n  - task_id: 007\n    question: q\n    checks: [{type: json_schema, value: {type: object}}]\n---\n- id: x\n  prompt: p\n",
		"base: &b {category: c}\ntasks:\n  - <<: *b\n    question: q\n  - *b\n",
		"prompts: ['{{q}} {{ r }}']\ntests:\n  - vars: {q: [a, b], r: x}\n    assert: [{type: regex, value: '(?=x)'}]\n",
		`{"tests": [{"vars": {"question": "q"}, "assert": [{"type": "equals", "value": 4}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatYAML, FormatPromptfoo} {
			checkParse(t, "fuzz.yaml", data, format)
		}
	})
}

// FuzzTaskBenchYAML: on any YAML, TaskBench's schema check keeps the
// parsers' contract, every problem and warning is placed inside the file,
// warnings never stop an import, and no imported task has a minimum above
// its maximum.
func FuzzTaskBenchYAML(f *testing.F) {
	for _, s := range []string{
		invalidTask,
		seed004,
		"- name: a\n  description: d\n  input_type: text\n  output_format: json\n  evaluation_criteria: [x]\n  judge_instructions: j\n  constraints: {min_words: 100, max_words: 10, x_min: 1, x_max: 2}\n",
		"input_type: [csv]\noutput_format: {a: b}\nevaluation_criteria: [[x]]\nexamples: x\nconstraints: [min_a]\n",
		"name: n\ndescription: d\ninput_type: json\noutput_format: markdown\nevaluation_criteria: [c]\njudge_instructions: j\nconstraints:\n  min_items: 1e3\n  max_items: .inf\n  tone: &t formal\n  style: *t\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, "fuzz.yaml", data, FormatYAML)
		checkRead(t, "fuzz.yaml", data, FormatYAML)
		r := Read("fuzz.yaml", data, Options{Format: FormatYAML})
		// YAML breaks lines at LF, CR LF and a lone CR.
		lines := strings.Count(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") + strings.Count(string(data), "\r") -
			strings.Count(string(data), "\r\n") + 1
		for _, e := range append(append(Errors{}, r.Errors...), r.Warnings...) {
			if e.Line < 0 || e.Line > lines || e.Column < 0 || e.Column > 0 && e.Line == 0 {
				t.Fatalf("%#v is not a place in a file of %d lines", e, lines)
			}
		}
		if len(r.Errors) == 0 && len(r.Tasks) == 0 {
			t.Fatal("no tasks and no error")
		}
		for _, task := range r.Tasks {
			if bc := prompt.BoundConflicts(prompt.ConstraintsOf(task.Constraints)); len(bc) > 0 {
				t.Fatalf("task %s imported with %s", task.TaskKey, bc[0].Message)
			}
		}
	})
}

// FuzzExportRoundTrip: whatever the text, every export format reads back
// to the same task (as an import trims and normalizes it).
func FuzzExportRoundTrip(f *testing.F) {
	f.Add("Solve:\n  2x = 4", "a\tb\n- c: d", "2", "k: ey", "v\n", "  spaced ", "tag")
	f.Add("\"quoted\" # not a comment", "---\n...", "~", "", "null", "multi\nline\n\n", "with, comma")
	f.Add("x\u2028y\u00a0z\x7f😀", "\uFEFFbom", "true", "[a]", "{}", "\\", "[wip]")
	f.Add("=HYPERLINK(\"http://x\")", "+1", "-2", "@k", "'=v", "''=x", "-tag")
	f.Fuzz(func(t *testing.T, question, input, reference, metaKey, metaVal, checkValue, tag string) {
		in := store.TaskInput{TaskKey: "t", Category: "c", Question: question, Input: input, Reference: reference,
			Metadata: map[string]string{}, Tags: []string{tag}}
		if strings.TrimSpace(metaKey) != "" && strings.TrimSpace(metaVal) != "" {
			in.Metadata[strings.TrimSpace(metaKey)] = metaVal
		}
		if checkValue != "" {
			in.Checks = []store.Check{{Type: "contains", Value: checkValue}}
		}
		texts := []string{question, input, reference, metaKey, metaVal, checkValue, tag}
		carried := !slices.ContainsFunc(texts, func(s string) bool { return strings.ContainsRune(s, '\r') || !utf8.ValidString(s) })
		for _, f := range ExportFormats {
			want := in
			want.Metadata = maps.Clone(in.Metadata)
			for k, v := range want.Metadata {
				want.Metadata[k] = strings.TrimSpace(v)
			}
			want.Tags = slices.Clone(in.Tags)
			for _, s := range []*string{&want.Question, &want.Input, &want.Reference} {
				*s = strings.TrimSpace(*s)
			}
			if want.Normalize() != nil || store.NULField(&want) != "" || gsm8k(&store.TaskInput{Reference: want.Reference}) ||
				!carried {
				return // not a task a store holds (which is UTF-8), or text a file cannot carry exactly (CR)
			}
			var buf bytes.Buffer
			w, _ := NewTaskWriter(&buf, f)
			if err := w.Write(want); err != nil {
				t.Fatal(err)
			}
			w.Close()
			_, ext := ExportMedia(f)
			got, err := Parse("t"+ext, buf.Bytes(), "")
			if err != nil || len(got) != 1 {
				t.Fatalf("%s: %v\n%s", f, err, buf.String())
			}
			if !sameTask(got[0], want) {
				t.Fatalf("%s:\ngot  %#v\nwant %#v\n%s", f, got[0], want, buf.String())
			}
		}
	})
}

// sameTask is reflect.DeepEqual with empty lists and maps the same as none.
func sameTask(a, b store.TaskInput) bool {
	for _, t := range []*store.TaskInput{&a, &b} {
		if len(t.Tags) == 0 {
			t.Tags = nil
		}
		if len(t.Turns) == 0 {
			t.Turns = nil
		}
		if len(t.Checks) == 0 {
			t.Checks = nil
		}
		if len(t.Metadata) == 0 {
			t.Metadata = nil
		}
	}
	return reflect.DeepEqual(a, b)
}
