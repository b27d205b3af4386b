package importer

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"tribunal/store"
)

// gsm8kSample is the first 5 lines of GSM8K's test split
// (openai/grade-school-math, grade_school_math/data/test.jsonl, MIT).
const gsm8kSample = "testdata/gsm8k_sample.jsonl"

func TestGSM8KSample(t *testing.T) {
	data, err := os.ReadFile(gsm8kSample)
	if err != nil {
		t.Fatal(err)
	}
	r := Read("gsm8k_sample.jsonl", data, Options{})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	if r.Format != FormatJSONL || len(r.Tasks) != 5 || r.GSM8K != 5 || r.Defaulted != 5 || r.DefaultCategory != "gsm8k_sample" {
		t.Fatalf("format %s, %d tasks, %d GSM8K, %d defaulted to %q", r.Format, len(r.Tasks), r.GSM8K, r.Defaulted, r.DefaultCategory)
	}
	sameTasks(t, r.Tasks[:1], []store.TaskInput{{
		TaskKey:   genID("gsm8k_sample", "", r.Tasks[0].Question),
		Category:  "gsm8k_sample",
		Question:  "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck egg. How much in dollars does she make every day at the farmers' market?",
		Reference: "18",
		Excellent: "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day at the farmer’s market.",
		Checks:    []store.Check{{Type: "numeric"}},
	}})
	var refs []string
	for _, task := range r.Tasks {
		refs = append(refs, task.Reference)
	}
	if want := []string{"18", "3", "70000", "540", "20"}; !reflect.DeepEqual(refs, want) {
		t.Errorf("references %q, want %q", refs, want)
	}
	if want := "So he made a profit of 200,000-130,000=$70,000"; !strings.HasSuffix(r.Tasks[2].Excellent, want) {
		t.Errorf("third rationale %q, want it to end with %q", r.Tasks[2].Excellent, want)
	}

	// The same rows as CSV, with the collection's name as the default category.
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"question", "answer"})
	for line := range strings.Lines(string(data)) {
		var rec struct{ Question, Answer string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		w.Write([]string{rec.Question, rec.Answer})
	}
	w.Flush()
	c := Read("gsm8k.csv", []byte(b.String()), Options{Category: "Grade school math"})
	if len(c.Errors) > 0 || len(c.Tasks) != 5 || c.GSM8K != 5 || c.DefaultCategory != "Grade school math" {
		t.Fatalf("csv: %v, %d tasks, %d GSM8K, default %q", c.Errors, len(c.Tasks), c.GSM8K, c.DefaultCategory)
	}
	for i := range c.Tasks {
		want := r.Tasks[i]
		want.Category, want.TaskKey = "Grade school math", genID("gsm8k", "", want.Question)
		if !reflect.DeepEqual(c.Tasks[i], want) {
			t.Errorf("csv task %d:\n%+v\nwant %+v", i, c.Tasks[i], want)
		}
	}
}

func TestGSM8KAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in, want  store.TaskInput
		recognise bool
	}{
		{"thousands", store.TaskInput{Reference: "2,000+125=<<2000+125=2125>>2,125\n#### 2,125"},
			store.TaskInput{Reference: "2125", Excellent: "2,000+125=2,125", Checks: []store.Check{{Type: "numeric"}}}, true},
		{"negative decimal, no rationale", store.TaskInput{Reference: "####  -3.5 "},
			store.TaskInput{Reference: "-3.5", Checks: []store.Check{{Type: "numeric"}}}, true},
		{"own excellent and numeric check", store.TaskInput{Reference: "a <<1+1=2>>2\n#### 2", Excellent: "mine",
			Checks: []store.Check{{Type: "numeric", Value: "2"}}},
			store.TaskInput{Reference: "2", Excellent: "mine", Metadata: map[string]string{"rationale": "a 2"},
				Checks: []store.Check{{Type: "numeric", Value: "2"}}}, true},
		{"rationale key taken", store.TaskInput{Reference: "x\n#### 2", Excellent: "mine", Metadata: map[string]string{"rationale": "own"}},
			store.TaskInput{Reference: "2", Excellent: "mine", Metadata: map[string]string{"rationale": "own"},
				Checks: []store.Check{{Type: "numeric"}}}, true},
		{"not a number", store.TaskInput{Reference: "#### eighteen"}, store.TaskInput{Reference: "#### eighteen"}, false},
		{"two numbers", store.TaskInput{Reference: "#### 18 or 19"}, store.TaskInput{Reference: "#### 18 or 19"}, false},
		{"bad grouping", store.TaskInput{Reference: "#### 12,34"}, store.TaskInput{Reference: "#### 12,34"}, false},
		{"no marker", store.TaskInput{Reference: "18"}, store.TaskInput{Reference: "18"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			if ok := gsm8k(&got); ok != tc.recognise || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("gsm8k = %v, %+v; want %v, %+v", ok, got, tc.recognise, tc.want)
			}
		})
	}
}

// A file that names categories refuses a row without one, in the task
// form's words; a file that names none takes the default.
func TestCategoryDefault(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"mixed.csv", "task_id,category,question\na,math,q1\nb,,q2\n"},
		{"mixed.jsonl", `{"task_id": "a", "category": "math", "question": "q1"}` + "\n" + `{"task_id": "b", "question": "q2"}` + "\n"},
		{"mixed.yaml", "- {task_id: a, category: math, question: q1}\n- {task_id: b, question: q2}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Read(tc.name, []byte(tc.data), Options{Category: "fallback"})
			form := (&store.TaskInput{TaskKey: "b", Question: "q2"}).Normalize().(*store.ValidationError)
			if len(r.Errors) != 1 || r.Errors[0].Row != 2 || r.Errors[0].Field != form.Field || r.Errors[0].Message != form.Message {
				t.Fatalf("errors %#v, want row 2 %s: %s", r.Errors, form.Field, form.Message)
			}
			if len(r.Tasks) != 1 || r.Tasks[0].Category != "math" || r.Defaulted != 0 || r.BadRows() != 1 {
				t.Errorf("tasks %+v, %d defaulted", r.Tasks, r.Defaulted)
			}
		})
	}
	r := Read("Data/GSM8K.jsonl", []byte(`{"question": "q1"}`+"\n\n"+`{"question": "q2", "category": ""}`+"\n"), Options{})
	if len(r.Errors) > 0 || r.Defaulted != 2 || r.Skipped != 1 || r.Tasks[0].Category != "gsm8k" || r.Tasks[1].Category != "gsm8k" ||
		!reflect.DeepEqual(r.RowNums, []int{1, 3}) {
		t.Errorf("no category in the file: %+v", r)
	}
	// promptfoo tests have no category field: each one without gets the default.
	r = Read("suite.yaml", []byte("prompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n    metadata: {category: x}\n  - vars: {q: b}\n"), Options{})
	if len(r.Errors) > 0 || r.Defaulted != 1 || r.Tasks[1].Category != "suite" {
		t.Errorf("promptfoo: %+v", r)
	}
}
