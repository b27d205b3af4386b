package importer

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// exportFixtures are tasks that set every field, with text that is hard to
// write back: YAML syntax inside strings, numbers and booleans as text,
// multi-line text, tabs, quotes, non-printing and astral characters.
func exportFixtures() []store.TaskInput {
	return []store.TaskInput{
		{
			TaskKey: "007", Category: "math", Subcategory: "algebra", UseCase: "homework",
			Question:  "Solve for x:\n  2x + 3 = 7\n\nShow: your work # all of it",
			Turns:     []string{"Solve for x:\n  2x + 3 = 7\n\nShow: your work # all of it", "Now for 2x + 5 = 7?"},
			Excellent: "x = 2, because 2x = 4", Good: "x = 2", Pass: "2", IncorrectAnswerDirection: "says x = 5",
			Reference: "2", SystemPrompt: "You are a tutor.\n\tBe brief.", Tags: []string{"algebra", "with, comma", "[wip]"},
			Constraints:       "Output format: csv\n\nmin_words: 10\nmax_words: 100\nrequired_fields: [x, steps]",
			Examples:          "Example 1:\ninput: 1x = 1\nexpected_output: x = 1",
			JudgeInstructions: "Evaluation criteria:\n- right\n\n\"Quote\" the step that fails.",
			Comments:          "from the 2024 set", Input: "x is real.\n---\n... not a document marker\n- not a list",
			PromptTemplate: "{{.Question}}\n\n{{.Input}}",
			Checks:         []store.Check{{Type: "regex", Value: `^x\s*=\s*2$`}, {Type: "contains", Value: "  2 "}, {Type: "json_valid"}},
			Metadata:       map[string]string{"input_type": "transcript", "weird: key": "true", "list": `["a","b"]`, "n": "12"},
		},
		{TaskKey: "true", Category: "null", Question: "- looks: like yaml # not a comment", Reference: "~", Tags: []string{"yes"}},
		{TaskKey: "c-3", Category: "text", Question: "trailing blanks   \nline\u00a0two \u2028 three\x7f 😀 \uFEFF end",
			Input: "a\r\nb", Reference: "{\"k\": [1, 2]}", Checks: []store.Check{{Type: "exact_match", Value: "multi\nline\n\n"}}},
	}
}

// TestFixturesSetEveryField keeps the round trip honest: a field added to
// TaskInput must be set here, and so written by the export.
func TestFixturesSetEveryField(t *testing.T) {
	v := reflect.ValueOf(exportFixtures()[0])
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("the first fixture leaves %s unset", v.Type().Field(i).Name)
		}
	}
}

// sameFields compares two tasks field by field, an empty list or map being
// the same as none.
func sameFields(t *testing.T, what string, got, want store.TaskInput) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		gf, wf := g.Field(i), w.Field(i)
		if (gf.Kind() == reflect.Slice || gf.Kind() == reflect.Map) && gf.Len() == 0 && wf.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(gf.Interface(), wf.Interface()) {
			t.Errorf("%s: %s = %#v, want %#v", what, g.Type().Field(i).Name, gf.Interface(), wf.Interface())
		}
	}
}

// normalized is a task as an import of format f leaves it: trimmed by Read,
// then normalized. A CSV cannot carry a CR LF inside a cell: Read folds
// CR LF line ends (as spreadsheets write them) before it reads the cells.
func normalized(t *testing.T, in store.TaskInput, f Format) store.TaskInput {
	t.Helper()
	trim := func(s *string) {
		*s = strings.TrimSpace(*s)
		if f == FormatCSV {
			*s = strings.ReplaceAll(*s, "\r\n", "\n")
		}
	}
	for _, s := range []*string{&in.Question, &in.Excellent, &in.Good, &in.Pass, &in.IncorrectAnswerDirection,
		&in.Reference, &in.SystemPrompt, &in.Constraints, &in.Examples, &in.JudgeInstructions, &in.Comments,
		&in.Input, &in.PromptTemplate} {
		trim(s)
	}
	for i := range in.Turns {
		trim(&in.Turns[i])
	}
	if err := in.Normalize(); err != nil {
		t.Fatalf("fixture %s: %v", in.TaskKey, err)
	}
	return in
}

// Every format writes what Read reads back to the same tasks, every field.
func TestExportRoundTripsEveryField(t *testing.T) {
	in := exportFixtures()
	for _, f := range ExportFormats {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewTaskWriter(&buf, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range in {
				if err := w.Write(task); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			_, ext := ExportMedia(f)
			r := Read("export"+ext, buf.Bytes(), Options{})
			if len(r.Errors) > 0 || r.Format != f || len(r.Tasks) != len(in) {
				t.Fatalf("read back as %s: %d tasks, errors %v\n%s", r.Format, len(r.Tasks), r.Errors, buf.String())
			}
			for i := range in {
				sameFields(t, in[i].TaskKey, r.Tasks[i], normalized(t, in[i], f))
			}
		})
	}
}

// TestExportDefusesFormulas: no CSV cell of a task export runs as a
// formula in a spreadsheet, and the file imports back to the text written,
// a cell that was already quoted by hand included.
func TestExportDefusesFormulas(t *testing.T) {
	in := store.TaskInput{TaskKey: "=t1", Category: "+c", Question: `=HYPERLINK("http://evil.example","click")`,
		Reference: "-2+3", Tags: []string{"@tag"}, Input: "'=quoted by hand", Comments: "- a list item"}
	var buf bytes.Buffer
	w, err := NewTaskWriter(&buf, FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(in); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, cell := range recs[1] {
		if cell != "" && strings.ContainsRune("=+@-\t\r", rune(cell[0])) && !strings.HasPrefix(cell, "- ") {
			t.Errorf("column %s starts a formula: %q", recs[0][i], cell)
		}
	}
	r := Read("tasks.csv", buf.Bytes(), Options{})
	if len(r.Errors) > 0 || len(r.Tasks) != 1 {
		t.Fatalf("read back: %v, %d tasks", r.Errors, len(r.Tasks))
	}
	got := r.Tasks[0]
	if got.TaskKey != in.TaskKey || got.Category != in.Category || got.Question != in.Question || got.Reference != in.Reference ||
		got.Input != in.Input || got.Comments != in.Comments || !slices.Equal(got.Tags, in.Tags) {
		t.Errorf("read back %+v\nwant %+v", got, in)
	}
}

// TestHandMadeCSVKeepsApostrophes: only a file with the export's header
// had its cells defused; a hand-made task CSV's '-h or '=' is text.
func TestHandMadeCSVKeepsApostrophes(t *testing.T) {
	data := "task_id,question,reference\nt1,\"'-h' prints help; what does '-v' do?\",'@user'\n"
	r := Read("tasks.csv", []byte(data), Options{})
	if len(r.Errors) > 0 || len(r.Tasks) != 1 {
		t.Fatalf("%v, %d tasks", r.Errors, len(r.Tasks))
	}
	if got := r.Tasks[0]; got.Question != "'-h' prints help; what does '-v' do?" || got.Reference != "'@user'" {
		t.Errorf("question %q, reference %q: the apostrophes went", got.Question, got.Reference)
	}
}

// Exporting from the database and importing into it again, after the tasks
// are gone, gives back the same tasks; filters pick what is written.
func TestExportTasksFromStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		in := exportFixtures()
		res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: in, Collection: "exported"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "outside", Category: "math", Question: "q"}); err != nil {
			t.Fatal(err)
		}
		sel := store.TaskExport{CollectionID: res.Collection.ID}
		for _, f := range ExportFormats {
			want := map[string]store.TaskInput{}
			for _, task := range exportFixtures() {
				want[task.TaskKey] = normalized(t, task, f)
			}
			var buf bytes.Buffer
			if err := ExportTasks(ctx, st, &buf, f, sel); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if strings.Contains(buf.String(), "outside") {
				t.Errorf("%s: the collection's export has a task from outside it", f)
			}
			if err := st.EachTask(ctx, sel, func(task *store.Task) error { return st.DeleteTask(ctx, task.ID) }); err != nil {
				t.Fatal(err)
			}
			_, ext := ExportMedia(f)
			tasks, err := Parse("tasks"+ext, buf.Bytes(), "")
			if err != nil {
				t.Fatalf("%s: %v\n%s", f, err, buf.String())
			}
			back, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: tasks, Collection: "exported"})
			if err != nil || back.Created != len(in) {
				t.Fatalf("%s: import %+v, %v", f, back, err)
			}
			n := 0
			err = st.EachTask(ctx, sel, func(task *store.Task) error {
				n++
				sameFields(t, string(f)+" "+task.TaskKey, task.Input(), want[task.TaskKey])
				return nil
			})
			if err != nil || n != len(in) {
				t.Fatalf("%s: %d tasks back, %v", f, n, err)
			}
		}

		var buf bytes.Buffer
		if err := ExportTasks(ctx, st, &buf, FormatJSONL, store.TaskExport{Category: "math", UseCase: "homework"}); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"task_id":"007"`) {
			t.Errorf("category and use case filter: %q", lines)
		}
		var nf *store.NotFoundError
		if err := ExportTasks(ctx, st, &buf, FormatCSV, store.TaskExport{CollectionID: 999}); !errors.As(err, &nf) {
			t.Errorf("unknown collection: %v", err)
		}
	})
}
