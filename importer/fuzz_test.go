package importer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"tribunal/checks"
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
