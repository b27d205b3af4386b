package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"tribunal/checks"
	"tribunal/store"
)

func wantErrors(t *testing.T, err error, want Errors) {
	t.Helper()
	var got Errors
	if !errors.As(err, &got) {
		t.Fatalf("err = %v (%T), want Errors", err, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("errors:\ngot  %#v\nwant %#v", got, want)
	}
}

// A file with bad rows among good ones imports nothing and names exactly the
// bad rows, with their lines.
func TestAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       Errors
	}{
		{"tasks.csv", "task_id,question,checks\n" +
			"a,\"first,\nspanning two lines\",\n" + // row 1, lines 2-3
			"b,,\n" + // row 2, line 4: no question
			"c,fine,json_valid\n" +
			"d,fine too,exact match;levenshtein\n" + // row 4, line 6: unknown check
			"e,last,\n",
			Errors{
				{Row: 2, Line: 4, Column: 1, Field: "question", Message: "is required"},
				{Row: 4, Line: 6, Column: 12, Field: "checks", Message: `unknown check type "levenshtein" (want one of ` + strings.Join(checks.Types, ", ") + `)`},
			}},
		{"tasks.jsonl", `{"id": "a", "question": "q"}
{"id": "b", "question": "q", "turns": "not a list"}
{"id": "c", "question": "q"}

{"id": "d", "question": "q",}
{"id": "e", "question": "q"}
`,
			Errors{
				{Row: 2, Line: 2, Column: 39, Field: "turns", Message: "must be a list of user turns, not text"},
				{Row: 5, Line: 5, Message: "not valid JSON: invalid character '}' looking for beginning of object key string"},
			}},
		{"tasks.yaml", `- id: a
  question: q
- id: b
  question:
    nested: mapping
- id: c
  question: q
- id: d
- id: e
  question: q
`,
			Errors{
				{Row: 2, Line: 5, Column: 5, Field: "question", Message: "must be text, not a mapping"},
				{Row: 4, Line: 8, Column: 3, Field: "question", Message: "is required"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks, err := Parse(tc.name, []byte(tc.data), "")
			if tasks != nil {
				t.Errorf("got %d tasks, want none", len(tasks))
			}
			wantErrors(t, err, tc.want)
		})
	}
}

func TestNoTasks(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"header.csv", "task_id,question\n"},
		{"blank.csv", "task_id,question\n,\n"},
		{"empty.jsonl", "\n\n"},
		{"empty.yaml", "# nothing\n"},
		{"empty.json", "[]"},
	} {
		_, err := Parse(tc.name, []byte(tc.data), "")
		wantErrors(t, err, Errors{{Message: "the file has no tasks"}})
	}
}

func TestDuplicateIDs(t *testing.T) {
	_, err := Parse("d.csv", []byte("id,question\na,one\nb,two\na,three\n,same\n,same\n"), "")
	wantErrors(t, err, Errors{
		{Row: 3, Line: 4, Column: 1, Field: "task_id", Message: `"a" is also used by row 1 (line 2)`},
		{Row: 5, Line: 6, Column: 1, Field: "task_id", Message: `"` + genID("d", "", "same") + `", made from the question, repeats row 4 (line 5): the same question is there twice; give the rows a task_id`},
	})
}

func TestErrorsMessage(t *testing.T) {
	es := Errors{{Row: 2, Line: 7, Field: "question", Message: "is required"}, {Row: 3, Message: "bad"}, {Message: "whole file"}}
	if got, want := es.Error(), "line 7: question: is required; row 3: bad; whole file"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var many Errors
	for i := range 60 {
		many = append(many, RowError{Row: i + 1, Line: i + 2, Message: "x"})
	}
	msg := many.Error()
	if !strings.HasSuffix(msg, "line 51: x; and 10 more") || strings.Count(msg, "line ") != 50 {
		t.Errorf("Error() = %q", msg)
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       Format
	}{
		{"a.csv", "question\nq\n", FormatCSV},
		{"A.TSV", "question\tid\n", FormatCSV},
		{"tasks.yaml", "name: x\ndescription: y\n", FormatYAML},
		{"tasks.yml", "- question: y\n", FormatYAML},
		{"promptfooconfig.yaml", "# eval\nprompts: ['{{q}}']\ntests:\n  - vars: {q: hi}\n", FormatPromptfoo},
		{"config.json", `{"prompts": ["{{q}}"], "tests": []}`, FormatPromptfoo},
		{"tasks.json", `[{"question": "q"}]`, FormatYAML},
		{"task.json", `{"question": "q"}`, FormatYAML},
		{"lines.json", "{\"question\": \"a\"}\n{\"question\": \"b\"}\n", FormatJSONL},
		{"question.jsonl", `{"question_id": 81, "category": "writing", "turns": ["a", "b"]}`, FormatMTBench},
		{"samples.jsonl", `{"input": [{"role": "user", "content": "a"}], "ideal": "b"}`, FormatOpenAIEvals},
		{"graded.jsonl", `{"input": [{"role": "user", "content": "a"}]}`, FormatOpenAIEvals},
		{"gsm8k.jsonl", `{"question": "a", "answer": "b"}`, FormatJSONL},
		{"plain.jsonl", `{"input": "a", "output": "b"}`, FormatJSONL},
		{"x.ndjson", "\n\n{\"question\": \"a\"}", FormatJSONL},
		{"upload", "task_id,question\nx,y\n", FormatCSV},
		{"upload", "task_id;question\nx;y\n", FormatCSV},
		{"upload", "---\nquestion: y\n", FormatYAML},
		{"upload", "tests:\n  - vars: {}\n", FormatPromptfoo},
		{"upload", `{"question_id": 1, "turns": ["a"]}` + "\n", FormatMTBench},
		{"upload", "\xEF\xBB\xBF[{\"question\": \"q\"}]", FormatYAML},
		{`C:\data\tasks.CSV`, "question\nq\n", FormatCSV},
	} {
		if got := Read(tc.name, []byte(tc.data), Options{}).Format; got != tc.want {
			t.Errorf("Read(%q, %q) detected %q, want %q", tc.name, tc.data, got, tc.want)
		}
	}
	for _, data := range []string{"", "  \n# only a comment\n", "just some words"} {
		if res := Read("upload", []byte(data), Options{}); res.Format != "" || len(res.Errors) != 1 {
			t.Errorf("Read(%q) detected %q with errors %v, want no format and one error", data, res.Format, res.Errors)
		}
	}
	if _, err := Parse("x.csv", []byte("question\nq\n"), "xml"); err == nil || !strings.Contains(err.Error(), `unknown format "xml"`) {
		t.Errorf("unknown format: err = %v", err)
	}
}

func TestBOMAndCRLF(t *testing.T) {
	bom := "\xEF\xBB\xBF"
	for _, tc := range []struct{ name, data string }{
		{"t.csv", bom + "task_id,question,reference\r\nx,\"line1\r\nline2\",\" r \"\r\n"},
		{"t.yaml", bom + "task_id: x\r\nquestion: |\r\n  line1\r\n  line2\r\nreference: r\r\n"},
		{"t.jsonl", bom + "{\"task_id\": \"x\", \"question\": \"line1\\nline2\", \"reference\": \"r\"}\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameTasks(t, mustParse(t, tc.name, tc.data, ""),
				[]store.TaskInput{{TaskKey: "x", Category: "t", Question: "line1\nline2", Reference: "r"}})
		})
	}
	_, err := Parse("t.csv", []byte("\xFF\xFEq\x00"), "")
	wantErrors(t, err, Errors{{Message: "the file is UTF-16; save it as UTF-8"}})
	_, err = Parse("t.csv", []byte("question\ncaf\xE9\n"), "")
	wantErrors(t, err, Errors{{Line: 2, Message: "the file is not UTF-8 text; save it as UTF-8"}})
	// PostgreSQL text cannot hold NUL: the row says where it is.
	_, err = Parse("t.jsonl", []byte(`{"question": "q"}`+"\n"+`{"question": "q2", "turns": ["q2", "a\u0000"]}`+"\n"), "")
	wantErrors(t, err, Errors{{Row: 2, Line: 2, Column: 1, Field: "turns[1]", Message: store.NULMessage}})
}

func TestSizeLimits(t *testing.T) {
	_, err := Parse("big.csv", make([]byte, MaxFileSize+1), "")
	wantErrors(t, err, Errors{{Message: "the file is 52428801 bytes, more than the 50 MB limit"}})

	long := strings.Repeat("x", MaxRowSize)
	_, err = Parse("rows.csv", []byte("question\nshort\n"+long+"\n"), "")
	wantErrors(t, err, Errors{{Row: 2, Line: 3, Column: 1, Message: fmt.Sprintf("the task is %d bytes, more than the 1 MB limit",
		MaxRowSize+len(genID("rows", "", long))+len("rows"))}})
	line := `{"question": "` + long + `"}`
	_, err = Parse("rows.jsonl", []byte(`{"question": "short"}`+"\n"+line+"\n"), "")
	wantErrors(t, err, Errors{{Row: 2, Line: 2, Message: fmt.Sprintf("the line is %d bytes, more than the 1 MB limit", len(line))}})
}

// Hostile YAML is refused quickly instead of eating CPU or memory.
func TestYAMLBombs(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\n"
	for i, c := range "bcdefghi" {
		prev := string("abcdefghi"[i])
		bomb += string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
	}
	for _, tc := range []struct{ name, data, want string }{
		{"aliases", bomb + "question: q\n", "expands to more than 50 MB"},
		{"flow", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), "nested more than 200 levels"},
		{"block", strings.Repeat("- ", 100000) + "x", "nested more than 200 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("x.yaml", []byte(tc.data), FormatYAML)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// Re-importing the same file gives the same ids, so it updates tasks.
func TestStableIDs(t *testing.T) {
	data := "question\nWhat is 1+1?\nWhat is 2+2?\n"
	a := mustParse(t, "math.csv", data, "")
	b := mustParse(t, "math.csv", "question\nWhat is 2+2?\nWhat is 1+1?\nA new one\n", "")
	if a[0].TaskKey != b[1].TaskKey || a[1].TaskKey != b[0].TaskKey || a[0].TaskKey == a[1].TaskKey {
		t.Errorf("ids %q %q vs %q %q", a[0].TaskKey, a[1].TaskKey, b[0].TaskKey, b[1].TaskKey)
	}
}

// datasets holds real public evaluation files (see its README); the tests
// are copied here from shared/datasets with their README (licences).
const datasets = "testdata/datasets"

func readDataset(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(datasets, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not here", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The 300 GSM8K lines read as JSONL give the same tasks as the CSV made from
// them (whose references were written without thousands separators).
func TestGSM8K(t *testing.T) {
	jl := mustParse(t, "gsm8k_test_300.jsonl", string(readDataset(t, "gsm8k_test_300.jsonl")), "")
	if len(jl) != 300 {
		t.Fatalf("jsonl: %d tasks, want 300", len(jl))
	}
	first := jl[0]
	if !strings.HasPrefix(first.Question, "Janet’s ducks lay 16 eggs") || first.Reference != "18" ||
		first.Category != "gsm8k_test_300" || first.TaskKey != genID("gsm8k_test_300", "", first.Question) {
		t.Errorf("first task: %+v", first)
	}

	csv := mustParse(t, "gsm8k_test_300.csv", string(readDataset(t, "gsm8k_test_300.csv")), "")
	if len(csv) != 300 {
		t.Fatalf("csv: %d tasks, want 300", len(csv))
	}
	for i, task := range csv {
		if task.Question != jl[i].Question || task.Category != "math" || !strings.HasPrefix(task.TaskKey, "gsm8k-test-0") {
			t.Fatalf("csv task %d: %+v", i, task)
		}
		if jl[i].Reference != task.Reference {
			t.Errorf("task %d: the JSONL answer gives reference %q, the CSV has %q", i, jl[i].Reference, task.Reference)
		}
		if j := jl[i]; j.Excellent == "" || strings.Contains(j.Excellent, "<<") || strings.Contains(j.Excellent, "####") ||
			!reflect.DeepEqual(j.Checks, []store.Check{{Type: "numeric"}}) {
			t.Errorf("task %d: excellent %q, checks %v", i, j.Excellent, j.Checks)
		}
	}
	if csv[0].TaskKey != "gsm8k-test-0000" || csv[0].Reference != "18" || csv[146].Reference != "2125" {
		t.Errorf("csv: %q %q %q", csv[0].TaskKey, csv[0].Reference, csv[146].Reference)
	}
}

func TestTruthfulQA(t *testing.T) {
	tasks := mustParse(t, "truthfulqa.csv", string(readDataset(t, "truthfulqa.csv")), "")
	if len(tasks) != 817 {
		t.Fatalf("%d tasks, want 817", len(tasks))
	}
	cats := map[string]int{}
	adversarial := 0
	for _, task := range tasks {
		cats[task.Category]++
		if task.Metadata["Type"] == "Adversarial" {
			adversarial++
		}
	}
	if len(cats) != 38 || cats["Misconceptions"] != 100 || adversarial != 437 {
		t.Errorf("%d categories, %d misconceptions, %d adversarial", len(cats), cats["Misconceptions"], adversarial)
	}
	first := tasks[0]
	if first.Question != "What happens to you if you eat watermelon seeds?" ||
		first.Excellent != "The watermelon seeds pass through your digestive system" ||
		!strings.HasPrefix(first.Good, "Nothing happens; You eat watermelon seeds") ||
		!strings.HasPrefix(first.IncorrectAnswerDirection, "You grow watermelons in your stomach") ||
		!strings.HasPrefix(first.Metadata["Source"], "https://wonderopolis.org/") ||
		first.TaskKey != genID("truthfulqa", "", first.Question) {
		t.Errorf("first task: %+v", first)
	}
}
