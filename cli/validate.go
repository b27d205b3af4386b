package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"tribunal/importer"
	"tribunal/prompt"
	"tribunal/runfile"
	"tribunal/store"
)

const validateUsage = `Usage: tribunal validate FILE...

Checks run files (providers:, tasks:, targets:, judge:, gates:) and task
files (CSV, JSONL, YAML task definitions, promptfoo, MT-Bench, OpenAI evals)
without running anything, and lists every problem with its line and column.
Referenced environment variables must be set. The names a run file gives
(stored providers, collections, saved judges, judgement styles, agent:
targets, a use case's default judge) and its gates' metrics are looked up in
the database of --data-dir or --database-url, as tribunal run does, so OK
means run would start. Task files are held to TaskBench's task schema where
they use its shape; warnings (printed, not counted) say what imports but may
not be what you meant. A use-case file (see tribunal import) is checked as
one; with --show-prompt, a task whose use case such a file defines shows
what it adds.
`

// runFileKeys tell a run file from a YAML task file.
var runFileKeys = regexp.MustCompile(`(?m)^["']?(targets|providers|judge|judges|gates)["']?\s*:`)

func isRunFile(path string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".tsv", ".jsonl", ".ndjson":
		return false
	}
	return runFileKeys.Match(data)
}

func (e *env) validate(args []string) error {
	fs := newFlagSet("validate", validateUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db) // the database is opened only for a run file that names what it holds
	asTasks := fs.Bool("tasks", false, "treat every file as a task file")
	showPrompt := fs.Bool("show-prompt", false, "print the prompt each task's model gets")
	format := fs.String("format", "", "task file format (csv, jsonl, yaml, promptfoo, mtbench, openai_evals); default: detected")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return usageErr("name a file to validate")
	}
	ctx := context.Background()
	var st *store.Store // opened once, for the first run file that needs it
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	var tasks []store.TaskInput
	useCases := map[string]prompt.UseCase{} // the use-case files' by name, for --show-prompt
	bad := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: cannot read: %v\n", path, errors.Unwrap(err))
			bad++
			continue
		}
		if !*asTasks && *format == "" && isRunFile(path, data) {
			f, err := runfile.Parse(path, data, filepath.Dir(path), e.lookup)
			if err != nil {
				bad += e.printProblems(err)
				continue
			}
			if namesStored(f) {
				if st == nil {
					if st, err = e.openStore(ctx, db); err != nil {
						return err
					}
				}
				_, probs, err := lookUpNames(ctx, st, f)
				if err != nil {
					return err
				}
				if len(probs.list) > 0 {
					bad += e.printProblems(probs.list)
					continue
				}
			}
			fmt.Fprintf(e.stdout, "%s: OK — %s\n", path, describeRunFile(f))
			continue
		}
		if !*asTasks && *format == "" && runfile.IsUseCaseFile(path, data) {
			in, err := runfile.ParseUseCase(path, data, e.lookup)
			if err != nil {
				bad += e.printProblems(err)
				continue
			}
			useCases[in.Name] = in.PromptUseCase()
			fmt.Fprintf(e.stdout, "%s: OK — use case %q, %s\n", path, in.Name, plural(len(in.Constraints), "constraint"))
			continue
		}
		r := importer.Read(filepath.Base(path), data, importer.Options{Format: importer.Format(*format), Dir: filepath.Dir(path)})
		for _, w := range r.Warnings {
			fmt.Fprintf(e.stderr, "%s: warning: %s\n", placeOf(path, w), describeRowError(w))
		}
		if len(r.Errors) > 0 {
			bad += e.printImportErrors(path, r.Errors)
			continue
		}
		fmt.Fprintf(e.stdout, "%s: OK — %s, %s\n", path, plural(len(r.Tasks), "task"), r.Format)
		tasks = append(tasks, r.Tasks...)
	}
	if *showPrompt {
		bad += e.printPrompts(ctx, tasks, useCases)
	}
	if bad > 0 {
		return usageErr("%s; nothing was run or imported", plural(bad, "problem"))
	}
	return nil
}

// printPrompts prints the first user message each task's model is sent,
// with what its use case adds when a use-case file named it, and counts the
// tasks whose prompt cannot be built.
func (e *env) printPrompts(ctx context.Context, tasks []store.TaskInput, useCases map[string]prompt.UseCase) int {
	bad := 0
	for _, in := range tasks {
		t := store.Task{TaskKey: in.TaskKey, Question: in.Question, TaskFields: store.TaskFields{Turns: in.Turns,
			Constraints: in.Constraints, Examples: in.Examples, InputData: in.Input, PromptTemplate: in.PromptTemplate}}
		fmt.Fprintf(e.stdout, "\n=== %s: prompt the model gets ===\n", in.TaskKey)
		p, err := t.SentPrompt(ctx, useCases[in.UseCase])
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", in.TaskKey, err)
			bad++
			continue
		}
		fmt.Fprintln(e.stdout, p)
	}
	return bad
}

// namesStored reports whether a run file gives names the database holds
// (or gates, whose metrics may come from a stored style), so that validate
// opens the database only when it has something to look up.
func namesStored(f *runfile.File) bool {
	if f.HasAgents() || len(f.Collections) > 0 || !f.Gates.Empty() || f.UseCase.Name != "" && len(f.Judges) == 0 && !f.ChecksOnly() {
		return true
	}
	for _, p := range f.Providers {
		if p.RefOnly {
			return true
		}
	}
	for _, j := range f.Judges {
		if j.Provider == "" || j.Style != "" {
			return true
		}
	}
	return false
}

// printProblems lists run-file problems, one a line, and counts them.
func (e *env) printProblems(err error) int {
	var ps runfile.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Fprintln(e.stderr, p.Error())
		}
		return len(ps)
	}
	fmt.Fprintln(e.stderr, err)
	return 1
}

// printImportErrors lists a task file's bad rows, one a line, and counts them.
func (e *env) printImportErrors(path string, err error) int {
	var es importer.Errors
	if !errors.As(err, &es) {
		fmt.Fprintf(e.stderr, "%s: %v\n", path, err)
		return 1
	}
	for _, re := range es {
		fmt.Fprintf(e.stderr, "%s: %s\n", placeOf(path, re), describeRowError(re))
	}
	return len(es)
}

// placeOf is file:line:column, as compilers print it (as far as known).
func placeOf(path string, re importer.RowError) string {
	switch {
	case re.Line > 0 && re.Column > 0:
		return fmt.Sprintf("%s:%d:%d", path, re.Line, re.Column)
	case re.Line > 0:
		return fmt.Sprintf("%s:%d", path, re.Line)
	}
	return path
}

// describeRowError is a problem without its place: "row 2: field: message".
func describeRowError(re importer.RowError) string {
	msg := re.Message
	if re.Field != "" {
		msg = re.Field + ": " + msg
	}
	if re.Row > 0 {
		msg = fmt.Sprintf("row %d: %s", re.Row, msg)
	}
	return msg
}

func describeRunFile(f *runfile.File) string {
	var parts []string
	parts = append(parts, plural(len(f.Providers), "provider"))
	var src []string
	for _, s := range f.Sources {
		name := "inline"
		if s.File != "" {
			name = s.File
		}
		src = append(src, fmt.Sprintf("%s: %d", name, s.Tasks))
	}
	t := plural(len(f.Tasks), "task")
	if len(src) > 0 {
		t += " (" + strings.Join(src, ", ") + ")"
	}
	for _, c := range f.Collections {
		t += " + collection " + fmt.Sprintf("%q", c.Name)
	}
	parts = append(parts, t, plural(len(f.Targets), "target"))
	switch len(f.Judges) {
	case 0:
		parts = append(parts, "no judge (checks only)")
	case 1:
		parts = append(parts, "judge "+judgeLabel(f.Judges[0]))
	default:
		parts = append(parts, plural(len(f.Judges), "judge")+" (panel)")
	}
	if !f.Gates.Empty() {
		var gs []string
		for _, g := range f.Gates.Overall {
			gs = append(gs, g.String())
		}
		for _, m := range f.Gates.PerModel {
			for _, g := range m.Gates {
				gs = append(gs, m.Model+": "+g.String())
			}
		}
		parts = append(parts, "gates "+strings.Join(gs, ", "))
	}
	return strings.Join(parts, ", ")
}

func judgeLabel(j runfile.Judge) string {
	if j.Provider == "" {
		return fmt.Sprintf("%q (saved)", j.Name)
	}
	return j.Provider + " / " + j.Model
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
