package importer

import (
	"errors"
	"reflect"
	"testing"
	"time"
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

func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{
		"task_id,category,question,reference,tags,checks,extra\nt1,c,q?,r,\"a,b\",exact_match,x\n,,q2,,,,\n",
		"\xEF\xBB\xBFquestion;answer\r\n\"multi\r\nline\";4\r\n",
		"sep=\t\nprompt\tturns\nhi\t[\"hi\",\"more\"]\n",
		"id,question\na,x\na,y\n,,\n",
		"question,checks,metadata\nq,\"[{\"\"type\"\":\"\"regex\"\",\"\"value\"\":\"\"a+\"\"}]\",\"{\"\"k\"\":1}\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, "fuzz.csv", data, FormatCSV)
	})
}

func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{
		`{"question": "q", "answer": "a"}` + "\n" + `{"id": 1, "turns": ["a", "b"], "checks": ["f1"], "metadata": {"k": [1]}}`,
		`{"question_id": 81, "category": "writing", "turns": ["a", "b"], "reference": ["x", "y"]}`,
		`{"input": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "u"}]}], "ideal": ["a"]}`,
		`[{"question": "q"}, {"question": "q"}]`,
		"{\"question\": \"a\"}\r\n\r\n{bad",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatJSONL, FormatMTBench, FormatOpenAIEvals} {
			checkParse(t, "fuzz.jsonl", data, format)
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
