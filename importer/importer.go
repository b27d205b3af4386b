// Package importer turns task files people already have (CSV, JSONL, YAML
// task definitions, promptfoo configs, MT-Bench and OpenAI-evals JSONL)
// into store.TaskInputs.
//
// Import is all or nothing: Parse either returns tasks that all pass
// TaskInput.Normalize, or no tasks and an Errors that names every bad row.
// Read, for previews, returns both: the good rows' tasks and every problem.
//
// Decisions shared by all formats:
//   - Field names are matched loosely (case, spaces, dashes, underscores and
//     dots ignored) against the TaskInput JSON names and common aliases
//     (id→task_id, prompt/input/query→question, answer/expected/ideal→reference,
//     …; see fieldAliases). Unknown fields are kept in Metadata.
//   - A task without an id gets "<file-stem>-<12 hex of sha256(system prompt,
//     turns)>": it depends only on the content, so re-importing the same file
//     updates tasks instead of duplicating them (renaming the file changes the
//     ids). MT-Bench uses "mtbench-<question_id>".
//   - When a file names no category at all, every task gets Options.Category
//     or else the file stem ("imported" when the name is empty); in a file
//     that names some, a row without one is refused (see finish).
//   - A GSM8K answer ("… #### 18") becomes a numeric reference, its worked
//     solution the excellent answer, and adds a numeric check (see gsm8k).
//   - Blank records are skipped and counted (Result.Skipped).
//   - Text is trimmed. Turns, tags, check types and limits are left to
//     TaskInput.Normalize (the question is the first turn, one turn is none).
//   - A task_id used twice in one file is an error on the later row naming the
//     earlier one.
package importer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"tribunal/store"
)

// Format names a task file format.
type Format string

// The formats Parse reads.
const (
	FormatCSV         Format = "csv"
	FormatJSONL       Format = "jsonl"
	FormatYAML        Format = "yaml"
	FormatPromptfoo   Format = "promptfoo"
	FormatMTBench     Format = "mtbench"
	FormatOpenAIEvals Format = "openai_evals"
)

// Formats lists every format, for menus and validation.
var Formats = []Format{FormatCSV, FormatJSONL, FormatYAML, FormatPromptfoo, FormatMTBench, FormatOpenAIEvals}

// Size limits: a bigger file or task is refused with an error instead of
// being held in memory (or in a prompt).
const (
	MaxFileSize = 50 << 20
	MaxRowSize  = 1 << 20
)

// RowError names one bad row: Row is the 1-based record number (CSV data row /
// JSONL line / YAML list index), Line and Column the 1-based place in the
// file where known (Column 0: the line only). All are 0 for a problem with
// the whole file.
type RowError struct {
	Row, Line, Column int
	Field             string
	Message           string
}

func (e RowError) Error() string {
	var b strings.Builder
	switch {
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	case e.Row > 0:
		fmt.Fprintf(&b, "row %d: ", e.Row)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem of a file; when Parse returns it, it returns no tasks.
type Errors []RowError

// maxListed caps the message, not the slice: a file of 100k bad rows still
// has all of them in Errors, but nobody reads a 100k-item sentence.
const maxListed = 50

func (es Errors) Error() string {
	parts := make([]string, 0, min(len(es), maxListed)+1)
	for i, e := range es {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(es)-maxListed))
			break
		}
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}

// row is what one record made: a task, or a record whose problems are in
// Errors (bad), or a blank record that was skipped.
type row struct {
	task           store.TaskInput
	num, line, col int
	bad, skip      bool
	warns          Errors // what imports but may not be what was meant
}

// Options tunes Read.
type Options struct {
	// Format is the file's format; "" detects it (see detect).
	Format Format
	// Category is the category of every task when the file names none (the
	// collection the tasks go into, say); "" means the file stem.
	Category string
	// Dir is the folder of the file, against which a YAML task's input_file
	// is read; "" (an upload) refuses input_file.
	Dir string
}

// Result is what Read made of a file: the tasks of its good rows, and every
// problem of the others. Only a Result without Errors may be imported.
type Result struct {
	// Format is Options.Format, or the detected one.
	Format Format
	// Tasks are the good rows' tasks in file order, each normalized;
	// RowNums[i] is the row (record number) Tasks[i] came from.
	Tasks   []store.TaskInput
	RowNums []int
	// Errors lists every problem; empty when the whole file is good.
	Errors Errors
	// Warnings are what imports but may not be what the file meant (a
	// TaskBench constraint the prompt passes on as written); they never
	// stop an import.
	Warnings Errors
	// Skipped counts blank records (an empty CSV row, a blank JSONL line).
	Skipped int
	// DefaultCategory is the category the Defaulted tasks got because the
	// file named none for them: Options.Category, or the file stem.
	DefaultCategory string
	Defaulted       int
	// GSM8K counts the tasks whose reference was a GSM8K answer (see gsm8k).
	GSM8K int
}

// CategoryCount is one category of a file with its number of tasks.
type CategoryCount struct {
	Name  string
	Tasks int
}

// Categories lists the tasks' categories, the biggest first.
func (r *Result) Categories() []CategoryCount {
	n := map[string]int{}
	for _, t := range r.Tasks {
		n[t.Category]++
	}
	out := make([]CategoryCount, 0, len(n))
	for name, tasks := range n {
		out = append(out, CategoryCount{name, tasks})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tasks != out[j].Tasks {
			return out[i].Tasks > out[j].Tasks
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// WithChecks counts the tasks that have at least one reference check.
func (r *Result) WithChecks() int {
	n := 0
	for _, t := range r.Tasks {
		if len(t.Checks) > 0 {
			n++
		}
	}
	return n
}

// BadRows counts the rows with at least one problem; a problem of the whole
// file (row 0) is no row.
func (r *Result) BadRows() int {
	rows := map[int]bool{}
	for _, e := range r.Errors {
		if e.Row > 0 {
			rows[e.Row] = true
		}
	}
	return len(rows)
}

// Parse reads a whole file. With format "" it is detected from the name and
// content (see detect). Every task is run through TaskInput.Normalize; when
// anything is wrong the error is an Errors listing every problem, and no
// tasks are returned.
func Parse(name string, data []byte, format Format) ([]store.TaskInput, error) {
	tasks, _, err := ParseFile(name, data, format)
	return tasks, err
}

// ParseFile is Parse that also returns the format it read: format, or the
// detected one when format is "" (so callers need not detect it again).
func ParseFile(name string, data []byte, format Format) ([]store.TaskInput, Format, error) {
	r := Read(name, data, Options{Format: format})
	if len(r.Errors) > 0 {
		return nil, r.Format, r.Errors
	}
	return r.Tasks, r.Format, nil
}

// Read reads a whole file and says what importing it would bring: its good
// tasks, every problem, and the defaults it applied. A file that cannot be
// read at all (not UTF-8, unknown format) has one problem and no tasks.
func Read(name string, data []byte, o Options) *Result {
	res := &Result{Format: o.Format}
	fail := func(e RowError) *Result {
		res.Errors = Errors{e}
		return res
	}
	if len(data) > MaxFileSize {
		return fail(RowError{Message: fmt.Sprintf("the file is %d bytes, more than the %d MB limit", len(data), MaxFileSize>>20)})
	}
	data, rerr := cleanText(data)
	if rerr != nil {
		return fail(*rerr)
	}
	if res.Format == "" {
		f, err := detect(name, data)
		if err != nil {
			return fail(RowError{Message: err.Error()})
		}
		res.Format = f
	}
	var rows []row
	var errs Errors
	switch res.Format {
	case FormatCSV:
		rows, errs = parseCSV(data, strings.HasSuffix(strings.ToLower(name), ".tsv"))
	case FormatJSONL:
		rows, errs = parseJSONL(data)
	case FormatYAML:
		rows, errs = parseYAML(data, o.Dir)
	case FormatPromptfoo:
		rows, errs = parsePromptfoo(data)
	case FormatMTBench:
		rows, errs = parseMTBench(data)
	case FormatOpenAIEvals:
		rows, errs = parseOpenAIEvals(data)
	default:
		return fail(RowError{Message: fmt.Sprintf("unknown format %q (want one of %s)", res.Format, formatList())})
	}
	stem := fileStem(name)
	res.DefaultCategory = strings.TrimSpace(o.Category)
	if res.DefaultCategory == "" {
		res.DefaultCategory = stem
		if res.Format == FormatPromptfoo && stem == "promptfooconfig" {
			res.DefaultCategory = "promptfoo" // the default config name says nothing about the tasks
		}
	}
	finish(res, rows, errs, stem)
	return res
}

// finish fills in defaults, reads GSM8K answers, validates every task and
// rejects repeated ids, filling res.
//
// The default category goes to every task of a file that names no category
// at all. In a file that names some, a row without one is refused as the
// task form refuses it (TaskInput.Normalize: "category: is required"):
// a blank cell there is more likely a slip than a wish for the file's name.
// promptfoo and OpenAI-evals files have no category field (promptfoo's
// is optional test metadata), so there every task without one gets it.
func finish(res *Result, rows []row, errs Errors, stem string) {
	perTask := res.Format == FormatPromptfoo || res.Format == FormatOpenAIEvals
	named := false
	for _, r := range rows {
		named = named || !r.skip && strings.TrimSpace(r.task.Category) != ""
	}
	type firstUse struct{ num, line int }
	seen := make(map[string]firstUse, len(rows))
	for i := range rows {
		r := &rows[i]
		res.Warnings = append(res.Warnings, r.warns...)
		if r.skip {
			res.Skipped++
			continue
		}
		if r.bad {
			continue
		}
		t := &r.task
		bad := func(field, format string, args ...any) {
			errs = append(errs, RowError{Row: r.num, Line: r.line, Column: r.col, Field: field, Message: fmt.Sprintf(format, args...)})
		}
		defaulted := strings.TrimSpace(t.Category) == "" && (perTask || !named)
		if defaulted {
			t.Category = res.DefaultCategory
		}
		fromGSM8K := gsm8k(t)
		generated := false
		if strings.TrimSpace(t.TaskKey) == "" && (strings.TrimSpace(t.Question) != "" || len(t.Turns) > 0) {
			t.TaskKey = stem + "-" + contentHash(t)
			generated = true
		}
		if n := taskSize(t); n > MaxRowSize {
			bad("", "the task is %d bytes, more than the %d MB limit", n, MaxRowSize>>20)
			continue
		}
		if f := store.NULField(t); f != "" {
			bad(f, "%s", store.NULMessage)
			continue
		}
		if err := t.Normalize(); err != nil {
			var ve *store.ValidationError
			if errors.As(err, &ve) {
				bad(ve.Field, "%s", ve.Message)
			} else {
				bad("", "%v", err)
			}
			continue
		}
		if prev, dup := seen[t.TaskKey]; dup {
			if generated {
				bad("task_id", "%q, made from the question, repeats row %d (line %d): the same question is there twice; give the rows a task_id", t.TaskKey, prev.num, prev.line)
			} else {
				bad("task_id", "%q is also used by row %d (line %d)", t.TaskKey, prev.num, prev.line)
			}
			continue
		}
		seen[t.TaskKey] = firstUse{r.num, r.line}
		res.Tasks = append(res.Tasks, *t)
		res.RowNums = append(res.RowNums, r.num)
		if defaulted {
			res.Defaulted++
		}
		if fromGSM8K {
			res.GSM8K++
		}
	}
	if len(errs) == 0 && len(res.Tasks) == 0 {
		errs = append(errs, RowError{Message: "the file has no tasks"})
	}
	sortErrors(errs)
	res.Errors = errs
	sortErrors(res.Warnings)
}

// contentHash is what a generated id is made of: the prompt the model sees.
func contentHash(t *store.TaskInput) string {
	h := sha256.New()
	h.Write([]byte(t.SystemPrompt))
	turns := t.Turns
	if len(turns) == 0 || t.Question != "" && t.Question != turns[0] {
		turns = []string{t.Question} // Normalize will reject the mismatch
	}
	for _, s := range turns {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func taskSize(t *store.TaskInput) int {
	n := len(t.TaskKey) + len(t.Category) + len(t.Subcategory) + len(t.Question) + len(t.Excellent) + len(t.Good) +
		len(t.Pass) + len(t.IncorrectAnswerDirection) + len(t.Reference) + len(t.SystemPrompt) + len(t.UseCase) +
		len(t.Constraints) + len(t.Examples) + len(t.JudgeInstructions) + len(t.Comments) + len(t.Input) + len(t.PromptTemplate)
	for _, s := range t.Turns {
		n += len(s)
	}
	for _, s := range t.Tags {
		n += len(s)
	}
	for _, c := range t.Checks {
		n += len(c.Type) + len(c.Value)
	}
	for k, v := range t.Metadata {
		n += len(k) + len(v)
	}
	return n
}

var nonIDChars = regexp.MustCompile(`[^a-z0-9_]+`)

// fileStem is the file name without directories and extension, made safe
// for ids: "Data/GSM8K test.jsonl" → "gsm8k-test".
func fileStem(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	s := strings.Trim(nonIDChars.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 100 {
		s = strings.TrimRight(s[:100], "-")
	}
	if s == "" {
		return "imported"
	}
	return s
}

// cleanText drops a UTF-8 byte order mark, turns CRLF into LF (line numbers
// stay the same) and refuses text that is not UTF-8, which a spreadsheet
// export in a legacy code page would otherwise turn into mojibake tasks.
func cleanText(data []byte) ([]byte, *RowError) {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, &RowError{Message: "the file is UTF-16; save it as UTF-8"}
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return nil, &RowError{Line: bytes.Count(data[:i], []byte("\n")) + 1, Message: "the file is not UTF-8 text; save it as UTF-8"}
	}
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	return data, nil
}

func formatList() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

var (
	yamlKeyLine   = regexp.MustCompile(`^(---|- |-$|["']?[^\s"',;:][^"',;]*["']?\s*:(\s|$))`)
	promptfooKeys = regexp.MustCompile(`(?m)^["']?tests["']?\s*:`)
)

// detect tells a file's format from its name extension and content (after
// cleanText): .csv/.tsv are CSV; YAML or JSON with a top-level `tests` is
// promptfoo, other YAML and single JSON documents are YAML task definitions;
// JSON lines with question_id and turns are MT-Bench, with input and ideal
// (or an input message list) OpenAI evals, other JSON lines generic JSONL.
// Files with another extension are sniffed: JSON, then YAML (a "key:" or
// "- " first line), then CSV (a delimiter in the first line).
func detect(name string, data []byte) (Format, error) {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))
	switch ext {
	case ".csv", ".tsv":
		return FormatCSV, nil
	case ".yaml", ".yml":
		if promptfooKeys.Match(data) {
			return FormatPromptfoo, nil
		}
		return FormatYAML, nil
	case ".jsonl", ".ndjson":
		return sniffJSONLines(data), nil
	case ".json":
		return sniffJSON(data), nil
	}
	first := firstLine(data)
	switch {
	case first == "":
		return "", fmt.Errorf("%s is empty", displayName(name))
	case first[0] == '{' || first[0] == '[':
		return sniffJSON(data), nil
	case yamlKeyLine.MatchString(first):
		if promptfooKeys.Match(data) {
			return FormatPromptfoo, nil
		}
		return FormatYAML, nil
	case strings.ContainsAny(first, ",;\t"):
		return FormatCSV, nil
	}
	return "", fmt.Errorf("cannot tell the format of %s; name it .csv, .jsonl, .yaml or .json, or choose a format", displayName(name))
}

func displayName(name string) string {
	if name == "" {
		return "the file"
	}
	return fmt.Sprintf("%q", name)
}

// firstLine is the first line that is not blank or a YAML comment.
func firstLine(data []byte) string {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		s := strings.TrimSpace(string(line))
		if s != "" && !strings.HasPrefix(s, "#") {
			return s
		}
	}
	return ""
}

// sniffJSON: a single JSON document is a promptfoo config (with `tests`) or
// task definitions; anything else is taken as JSON lines.
func sniffJSON(data []byte) Format {
	if !json.Valid(data) {
		return sniffJSONLines(data)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) == nil {
		if _, ok := top["tests"]; ok {
			return FormatPromptfoo
		}
		if f := sniffJSONLines(data); f != FormatJSONL {
			return f // a one-line MT-Bench or evals file is also one JSON document
		}
	}
	return FormatYAML
}

// sniffJSONLines looks at the keys of the first record.
func sniffJSONLines(data []byte) Format {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(firstLine(data)), &top) != nil {
		return FormatJSONL
	}
	has := func(k string) bool { _, ok := top[k]; return ok }
	switch {
	case has("question_id") && has("turns"):
		return FormatMTBench
	case has("input") && (has("ideal") || bytes.HasPrefix(bytes.TrimSpace(top["input"]), []byte("["))):
		return FormatOpenAIEvals // model-graded evals have messages but no ideal
	}
	return FormatJSONL
}
