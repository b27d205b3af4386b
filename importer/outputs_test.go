package importer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"tribunal/store"
)

func i64(n int64) *int64         { return &n }
func f64(f float64) *float64     { return &f }
func errorsOf(o *Outputs) string { return o.Errors.Error() }

// Both formats read the same answers, with their measures exactly, and
// a row without a task_id gets an id made of its question alone.
func TestReadOutputs(t *testing.T) {
	want := []OutputRow{
		{Row: 1, TaskKey: "t1", KeyGiven: true, Question: "2+2?", Reference: "4", Category: "math", Model: "gpt-x", Response: "4",
			LatencyMs: i64(1200), InputTokens: i64(12), OutputTokens: i64(3), CostUSD: f64(0.0004)},
		{Row: 2, TaskKey: "t1", KeyGiven: true, Question: "2+2?", Model: "llama", Response: " four, I think"},
		{Row: 3, TaskKey: QuestionKey("Capital of France?"), Question: "Capital of France?", Model: "llama", Response: "=Paris"},
	}
	for _, tc := range []struct {
		name, data string
		lines      []int
		skipped    int
	}{
		{"out.csv", "task_id,question,reference,category,model,response,latency_ms,input_tokens,output_tokens,cost_usd,notes\n" +
			"t1,2+2?,4,math,gpt-x,4,1200,12,3,0.0004,ignored\n" +
			"t1,2+2?,,,llama,\" four, I think\",,,,,\n" +
			"\n" + // the CSV reader drops an empty line
			",Capital of France?,,,llama,'=Paris,,,,,\n", []int{2, 3, 5}, 0},
		{"out.jsonl", `{"task_id": "t1", "question": "2+2?", "reference": "4", "category": "math", "model": "gpt-x", "response": "4", "latency_ms": 1199.6, "input_tokens": 12, "output_tokens": "3", "cost_usd": 4e-4}
{"id": "t1", "prompt": "2+2?", "model": "llama", "output": " four, I think", "latency_ms": null}

{"question": "Capital of France?", "model": "llama", "completion": "=Paris"}
`, []int{1, 2, 4}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ReadOutputs(tc.name, []byte(tc.data), "")
			if len(o.Errors) > 0 {
				t.Fatal(o.Errors)
			}
			w := make([]OutputRow, len(want))
			copy(w, want)
			for i := range w {
				w[i].Line = tc.lines[i]
				w[i].Row = o.Rows[i].Row
			}
			if tc.name == "out.jsonl" {
				w[2].Response = "=Paris" // JSON is no spreadsheet: nothing to read back
			}
			if !reflect.DeepEqual(o.Rows, w) {
				t.Errorf("rows:\ngot  %+v\nwant %+v", o.Rows, w)
			}
			if o.Skipped != tc.skipped {
				t.Errorf("skipped %d, want %d", o.Skipped, tc.skipped)
			}
		})
	}
}

// Every bad row is named with its line and field, and a file with one
// bad row gives no rows at all.
func TestReadOutputsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a.jsonl", `{"task_id": "t1", "model": "m", "response": "r"}
{"task_id": "t2", "model": "m", "response": "r", "latency_ms": "fast"}
{"model": "m", "response": "r"}
{"task_id": "t3", "response": "r"}
{"task_id": "t4", "model": "m", "response": "  "}
{"task_id": "t5", "model": "m", "response": "r", "cost_usd": -1, "input_tokens": 1.5}
{"task_id": "t1", "model": "m", "response": "again"}
{"task_id": "t6", "model": "m", "response": "r", "output_tokens": 1e400}
{"task_id": "t7", "model": "m", "response": "a\u0000b"}
{"task_id": "t8", "model": ["m"], "response": "r"}`,
			`line 2, column 64: latency_ms: not a number; line 3, column 1: task_id: a row needs a task_id or a question; line 4, column 1: model: is required; ` +
				`line 5, column 1: response: is required; line 6, column 62: cost_usd: must be 0 or more, not -1; line 6, column 82: input_tokens: not a whole number; ` +
				`line 7: model: "m" answers task "t1" again (line 1); one answer per task and model; line 8, column 67: output_tokens: 1e400 is too large; ` +
				`line 9, column 1: response: ` + store.NULMessage + `; line 10, column 28: model: must be text, not a list`},
		{"b.csv", "question,model,response,reference\nq,m1,r,4\nq,m2,r,5\n", `line 3: reference: differs from line 2, which gives task "q-` + QuestionKey("q")[2:] + `" too`},
		{"c.csv", "question,model,output\nq,m,r,extra\n", "line 2, column 1: has 4 fields, the header has 3"},
		{"d.csv", "question,response\nq,r\n", "line 1: model: no model column"},
		{"e.csv", "model,response\nm,r\n", "line 1: task_id: no task_id or question column"},
		{"f.csv", "question,model,output,completion\n", `line 1: response: columns 3 ("output") and 4 ("completion") are the same field`},
		{"g.csv", "question,model,response\n", "the file has no outputs"},
		{"h.txt", "just words", `cannot tell the format of "h.txt"; name it .csv or .jsonl`},
		{"i.jsonl", "{\"question\": \"q\", \"model\": \"m\", \"response\": \"r\"}\n{oops\n", "line 2: not valid JSON: invalid character 'o'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ReadOutputs(tc.name, []byte(tc.data), "")
			if len(o.Errors) == 0 || o.Rows != nil {
				t.Fatalf("want errors and no rows, got %d rows and %v", len(o.Rows), o.Errors)
			}
			if got := errorsOf(o); got != tc.want {
				t.Errorf("errors:\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// A file of outputs read back from Tribunal's own CSV export: its
// formula-defused cells lose their apostrophe, time_ms and tokens are the
// measures, and the columns it has beside them are ignored.
func TestReadOutputsFromExport(t *testing.T) {
	data := "task_id,category,question,reference,provider,model,status,score,response,error,time_ms,tokens,cost_usd\n" +
		"t1,c,q,'-1,Local,m,COMPLETED,7,'@sum,,800,9,0.01\n"
	o := ReadOutputs("results.csv", []byte(data), FormatCSV)
	if len(o.Errors) > 0 {
		t.Fatal(o.Errors)
	}
	r := o.Rows[0]
	if r.Reference != "-1" || r.Response != "@sum" || *r.LatencyMs != 800 || *r.OutputTokens != 9 || *r.CostUSD != 0.01 || r.InputTokens != nil {
		t.Errorf("row %+v", r)
	}
}

// checkOutputs is ReadOutputs' contract on any input: no panic, and either
// rows that each name a task, a model and an answer (one per task and
// model, measures finite and ≥ 0), or no rows and errors that all say
// something.
func checkOutputs(t *testing.T, name string, data []byte) {
	watchdog := time.AfterFunc(10*time.Second, func() { panic("slow input") })
	o := ReadOutputs(name, data, "")
	watchdog.Stop()
	if len(o.Errors) > 0 {
		if o.Rows != nil {
			t.Fatalf("%d rows returned with errors", len(o.Rows))
		}
		for _, e := range o.Errors {
			if e.Message == "" {
				t.Fatalf("error without a message: %#v", e)
			}
		}
		var es Errors
		if !errors.As(error(o.Errors), &es) {
			t.Fatal("Errors is no error")
		}
		return
	}
	if len(o.Rows) == 0 {
		t.Fatal("no rows and no error")
	}
	seen := map[[2]string]bool{}
	for _, r := range o.Rows {
		if r.TaskKey == "" || r.Model == "" || strings.TrimSpace(r.Response) == "" || !r.KeyGiven && r.Question == "" {
			t.Fatalf("incomplete row %+v", r)
		}
		if seen[[2]string{r.TaskKey, r.Model}] {
			t.Fatalf("task %q answered twice by %q", r.TaskKey, r.Model)
		}
		seen[[2]string{r.TaskKey, r.Model}] = true
		for _, n := range []*int64{r.LatencyMs, r.InputTokens, r.OutputTokens} {
			if n != nil && *n < 0 {
				t.Fatalf("negative measure in %+v", r)
			}
		}
		if r.CostUSD != nil && !(*r.CostUSD >= 0 && *r.CostUSD <= 1e15) {
			t.Fatalf("cost %v", *r.CostUSD)
		}
	}
}

func FuzzReadOutputs(f *testing.F) {
	for _, s := range []string{
		"task_id,model,response,latency_ms,input_tokens,output_tokens,cost_usd\nt,m,r,1.5,2,3,0.1\nt,m2,'=x,,,,\n",
		"\xEF\xBB\xBFsep=;\nquestion;model;output\r\n\"multi\r\nline\";m;\"a;b\"\r\n",
		`{"question": "q", "model": "m", "response": {"structured": [1, 2]}, "cost_usd": "1e-3"}` + "\n" + `{"task_id": 7, "model": "m", "response": "x", "reference": "y"}`,
		`[{"question": "q", "model": "m", "response": "r"}, {"question": "q", "model": "m", "response": "r"}]`,
		"{\"task_id\": \"t\", \"model\": \"m\", \"response\": \"r\", \"latency_ms\": -0}\n{bad",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkOutputs(t, "fuzz.csv", data)
		checkOutputs(t, "fuzz.jsonl", data)
	})
}
