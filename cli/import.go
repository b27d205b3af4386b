package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tribunal/importer"
	"tribunal/runfile"
	"tribunal/store"
)

const importUsage = `Usage: tribunal import FILE... [--collection NAME] [--format FORMAT] [--tags a,b]
       tribunal import --outputs FILE (--judge-provider P --judge-model M | --judge-ids 1,2) [--checks contains,f1]
                       [--collection NAME] [--name NAME] [--follow]

Imports tasks from CSV, JSONL, YAML task definitions, promptfoo configs,
MT-Bench question.jsonl or OpenAI-evals JSONL (detected from the name and
content, or --format). All or nothing: when any row of any file is bad,
nothing is imported and every bad row is listed. A task whose task_id exists
already is updated, not duplicated; the summary says which.

A YAML file with a top-level goal:, default_judge_model:,
default_candidate_models:, cost_priority: or context_needed_tokens: is a
use-case file: it is saved as the use case of its name (created, or the
saved one of that name replaced). ${VAR:-default} expands from the
environment.

With --outputs, FILE holds answers your models gave elsewhere (CSV or JSONL:
task_id or question, model, response, and optionally reference, category,
latency_ms, input_tokens, output_tokens, cost_usd). They become an IMPORTED
run, one model per model name, scored by the judge (a provider's id or name
and a model, or saved judges' ids) and/or the checks; no model is called.
--follow scores it here and prints the table; without it the server (or a
worker) scores it.
`

func (e *env) importTasks(args []string) error {
	fs := newFlagSet("import", importUsage, e.stderr)
	var db dbFlags
	e.addDBFlags(fs, &db)
	collection := fs.String("collection", "", "add the tasks to this collection (created when missing)")
	format := fs.String("format", "", "csv, jsonl, yaml, promptfoo, mtbench or openai_evals (default: detected)")
	tags := fs.String("tags", "", "comma-separated tags for the collection")
	dryRun := fs.Bool("dry-run", false, "check and report what would change, without writing")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var o outputsFlags
	fs.StringVar(&o.file, "outputs", "", "import this file of answers as a run instead of tasks")
	fs.StringVar(&o.judgeProvider, "judge-provider", "", "with --outputs: the judge's provider (id or name)")
	fs.StringVar(&o.judgeModel, "judge-model", "", "with --outputs: the judge's model")
	fs.StringVar(&o.judgeIDs, "judge-ids", "", "with --outputs: a panel of saved judges, comma-separated ids")
	fs.StringVar(&o.checks, "checks", "", "with --outputs: reference checks, comma-separated (contains, f1, …)")
	fs.StringVar(&o.name, "name", "", "with --outputs: the run's name (default: its models)")
	fs.BoolVar(&o.follow, "follow", false, "with --outputs: score the run here and print its results")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if o.file != "" {
		if len(files) > 0 {
			return usageErr("--outputs takes one file; %s is one too many", strings.Join(files, " "))
		}
		o.collection, o.tags, o.asJSON, o.db = *collection, *tags, *asJSON, db
		return e.importOutputs(o)
	}
	if len(files) == 0 {
		fs.Usage()
		return usageErr("name a file to import")
	}
	if *format != "" && !slices.Contains(importer.Formats, importer.Format(*format)) {
		return usageErr("--format %q: use one of csv, jsonl, yaml, promptfoo, mtbench, openai_evals", *format)
	}
	var all []store.TaskInput
	type source struct {
		path   string
		format importer.Format
		n      int
	}
	var sources []source
	var useCases []store.UseCaseInput
	bad := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: cannot read: %v\n", path, errors.Unwrap(err))
			bad++
			continue
		}
		if *format == "" && runfile.IsUseCaseFile(path, data) {
			in, err := runfile.ParseUseCase(path, data, e.lookup)
			if err != nil {
				bad += e.printProblems(err)
				continue
			}
			useCases = append(useCases, in)
			continue
		}
		// A file that names no category takes the collection's, else its own name.
		r := importer.Read(filepath.Base(path), data, importer.Options{Format: importer.Format(*format), Category: *collection, Dir: filepath.Dir(path)})
		if len(r.Errors) > 0 {
			bad += e.printImportErrors(path, r.Errors)
			continue
		}
		sources = append(sources, source{path, r.Format, len(r.Tasks)})
		all = append(all, r.Tasks...)
	}
	if bad > 0 {
		return usageErr("%s; nothing was imported", plural(bad, "problem"))
	}
	if *asJSON && len(useCases) > 0 && len(sources) > 0 {
		return usageErr("--json: import use-case files and task files apart")
	}
	ctx := context.Background()
	st, err := e.openStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	if len(useCases) > 0 {
		if err := e.saveUseCases(ctx, st, useCases, *dryRun, *asJSON); err != nil || len(sources) == 0 {
			return err
		}
	}
	res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: all, Collection: *collection,
		CollectionTags: store.ParseTags(*tags), DryRun: *dryRun})
	if err != nil {
		var ve *store.ValidationError
		if errors.As(err, &ve) {
			return usageErr("nothing was imported: %s", ve.Error())
		}
		return storeError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	verb := "Imported"
	if *dryRun {
		verb = "Would import"
	}
	var from []string
	for _, s := range sources {
		from = append(from, fmt.Sprintf("%s (%s, %d)", s.path, s.format, s.n))
	}
	fmt.Fprintf(e.stdout, "%s %s from %s: %d created, %d updated\n", verb, plural(len(all), "task"), strings.Join(from, ", "), res.Created, res.Updated)
	if res.Updated > 0 {
		fmt.Fprintf(e.stdout, "  updated (their task_id existed): %s\n", listSome(res.UpdatedIDs, 20))
	}
	if res.Created > 0 {
		fmt.Fprintf(e.stdout, "  created: %s\n", listSome(res.CreatedIDs, 20))
	}
	if c := res.Collection; c != nil {
		state := "now"
		if res.CollectionCreated {
			state = "new collection, now"
		}
		fmt.Fprintf(e.stdout, "  collection %q (%s %d tasks)\n", c.Name, state, c.TaskCount)
	}
	return nil
}

// listSome joins up to n names and says how many more there are.
func listSome(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
}

// saveUseCases saves use-case files' use cases by name and says, per use
// case, whether it was new.
func (e *env) saveUseCases(ctx context.Context, st *store.Store, ucs []store.UseCaseInput, dryRun, asJSON bool) error {
	type saved struct {
		Name    string `json:"name"`
		ID      int64  `json:"id"`
		Created bool   `json:"created"`
	}
	var out []saved
	for _, in := range ucs {
		if dryRun {
			_, err := st.UseCaseNamed(ctx, in.Name)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return storeError(err)
			}
			out = append(out, saved{Name: in.Name, Created: err != nil})
			continue
		}
		uc, created, err := st.SaveUseCase(ctx, in)
		if err != nil {
			return storeError(err)
		}
		out = append(out, saved{Name: uc.Name, ID: uc.ID, Created: created})
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, s := range out {
		verb := "updated"
		if s.Created {
			verb = "created"
		}
		if dryRun {
			verb = "would be " + verb
		}
		fmt.Fprintf(e.stdout, "Use case %q %s\n", s.Name, verb)
	}
	return nil
}
