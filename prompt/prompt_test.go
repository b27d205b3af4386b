package prompt_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tribunal/importer"
	"tribunal/prompt"
	"tribunal/runfile"
	"tribunal/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// importTask imports one task file as `tribunal import` does.
func importTask(t *testing.T, path string) store.Task {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := importer.Read(filepath.Base(path), data, importer.Options{Dir: filepath.Dir(path)})
	if len(r.Errors) > 0 || len(r.Tasks) != 1 {
		t.Fatalf("import %s: %d task(s), errors %v", path, len(r.Tasks), r.Errors)
	}
	in := r.Tasks[0]
	return store.Task{TaskKey: in.TaskKey, Question: in.Question, TaskFields: store.TaskFields{Turns: in.Turns,
		Constraints: in.Constraints, Examples: in.Examples, JudgeInstructions: in.JudgeInstructions,
		InputData: in.Input, PromptTemplate: in.PromptTemplate}}
}

// useCase reads a use-case file as `tribunal import` does.
func useCase(t *testing.T, path string) prompt.UseCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := runfile.ParseUseCase(path, data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return in.PromptUseCase()
}

func TestTaskBenchPromptGolden(t *testing.T) {
	task := importTask(t, "testdata/lecture_concepts.yaml")
	got, err := task.SentPrompt(context.Background(), useCase(t, "testdata/lectures.usecase.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/lecture_concepts.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("prompt differs from %s (go test ./prompt -update rewrites it):\n%s", golden, got)
	}
	// The six parts, in the order the package doc gives.
	parts := []string{"Extract the key teaching concepts", "## Goal\nTurn lecture transcripts into study material", "## Input data\n00:00:05 Good morning",
		"## Output format\n**Your output MUST be in this format: csv**", "## CRITICAL CONSTRAINTS",
		"At least 20 words.", "At most 400 words.", "Include every one of these fields: concept, start_time, end_time.",
		"- Chunk: at least 500.", "- Chunk: at most 2000.", "- Coverage: required.",
		"## Examples of good outputs", "Gradient descent,00:00:45,00:04:30", "## Final instructions"}
	at := 0
	for _, p := range parts {
		i := strings.Index(got[at:], p)
		if i < 0 {
			t.Fatalf("%q is missing, or out of order, in:\n%s", p, got)
		}
		at += i + len(p)
	}
	for _, judgeOnly := range []string{"JUDGE-ONLY", "Evaluation criteria", "Time spans match the transcript", "input_type", "Students revise"} {
		if strings.Contains(got, judgeOnly) {
			t.Errorf("the prompt shows judge-only text %q", judgeOnly)
		}
	}
}

func TestPlainTaskPromptIsItsQuestion(t *testing.T) {
	for _, task := range []prompt.Task{
		{Question: "What is 2+2?"},
		{Question: "  Say hi.\n", Turns: nil},
		{Question: "First?", Turns: []string{"First?", "Second?"}},
	} {
		got, err := prompt.Build(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		want := task.Question
		if len(task.Turns) > 0 {
			want = task.Turns[0]
		}
		if got != want {
			t.Errorf("Build(%+v) = %q, want the question %q unchanged", task, got, want)
		}
	}
}

func TestPromptTemplateOverride(t *testing.T) {
	task := prompt.Task{Question: "Summarise.", Input: "The text.", Constraints: "Output format: json\n\nmax_words: 50",
		PromptTemplate: `{{.Question}} [{{.OutputFormat}}] {{range .Constraints}}<{{.}}>{{end}} DATA={{.Input}}`}
	got, err := prompt.Build(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Summarise. [json] <At most 50 words.> DATA=The text."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPromptTemplateRefused(t *testing.T) {
	for name, tmpl := range map[string]string{
		"parse":   "{{.Question",
		"field":   "{{.Reference}}",
		"range":   "{{range 100000000}}x{{end}}",
		"define":  `{{define "x"}}{{end}}{{.Question}}`,
		"too-big": `{{range 1000}}{{range $.Constraints}}` + strings.Repeat("x", 1000) + `{{end}}{{end}}`,
	} {
		if err := prompt.Check(context.Background(), tmpl); err == nil {
			t.Errorf("%s: template %q was accepted", name, tmpl)
		}
	}
	if err := prompt.Check(context.Background(), "{{.Question}}\n{{.Input}}"); err != nil {
		t.Errorf("a good template was refused: %v", err)
	}
}
