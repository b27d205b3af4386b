package importer

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"tribunal/spreadsheet"
	"tribunal/store"
)

// Task export writes tasks in the formats Read reads, so that importing an
// export gives back the same tasks, every field of them (the round-trip
// test holds it to that). Text is written as stored; Read trims it, as it
// trims every file.

// ExportFormats are the formats ExportTasks writes.
var ExportFormats = []Format{FormatYAML, FormatJSONL, FormatCSV}

// ExportMedia is a format's content type and file extension.
func ExportMedia(f Format) (contentType, ext string) {
	switch f {
	case FormatYAML:
		return "application/yaml; charset=utf-8", ".yaml"
	case FormatJSONL:
		return "application/x-ndjson; charset=utf-8", ".jsonl"
	}
	return "text/csv; charset=utf-8", ".csv"
}

// ParseExportFormat reads a format name ("" is YAML).
func ParseExportFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	if f == "" {
		return FormatYAML, nil
	}
	if !slices.Contains(ExportFormats, f) {
		return "", fmt.Errorf("cannot export tasks as %q (use yaml, jsonl or csv)", s)
	}
	return f, nil
}

// ExportTasks writes the tasks sel picks to w in format f, one at a time as
// they are read (see store.EachTask). An unknown collection is an error
// before anything is written.
func ExportTasks(ctx context.Context, st *store.Store, w io.Writer, f Format, sel store.TaskExport) error {
	tw, err := NewTaskWriter(w, f)
	if err != nil {
		return err
	}
	if err := st.EachTask(ctx, sel, func(t *store.Task) error { return tw.Write(t.Input()) }); err != nil {
		return err
	}
	return tw.Close()
}

// TaskWriter writes tasks one by one; Close flushes what is buffered.
type TaskWriter interface {
	Write(store.TaskInput) error
	Close() error
}

// NewTaskWriter writes tasks to w in format f (yaml, jsonl or csv).
func NewTaskWriter(w io.Writer, f Format) (TaskWriter, error) {
	bw := bufio.NewWriter(w)
	switch f {
	case FormatYAML:
		_, err := bw.WriteString("# Tribunal tasks: `tribunal import` (or the Import page) reads this file back.\n")
		return &yamlWriter{w: bw}, err
	case FormatJSONL:
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		return &jsonlWriter{w: bw, enc: enc}, nil
	case FormatCSV:
		cw := csv.NewWriter(bw)
		return &csvWriter{w: bw, cw: cw, header: true}, nil
	}
	return nil, fmt.Errorf("cannot export tasks as %q (use yaml, jsonl or csv)", f)
}

// fileTask is a task as the files write it: the importer's field names, and
// input as input_data (input alone is a question to the importer).
type fileTask struct {
	TaskID                   string            `json:"task_id"`
	Category                 string            `json:"category"`
	Subcategory              string            `json:"subcategory,omitempty"`
	UseCase                  string            `json:"usecase,omitempty"`
	Question                 string            `json:"question"`
	Turns                    []string          `json:"turns,omitempty"`
	SystemPrompt             string            `json:"system_prompt,omitempty"`
	Input                    string            `json:"input_data,omitempty"`
	Reference                string            `json:"reference,omitempty"`
	Excellent                string            `json:"excellent,omitempty"`
	Good                     string            `json:"good,omitempty"`
	Pass                     string            `json:"pass,omitempty"`
	IncorrectAnswerDirection string            `json:"incorrect_answer_direction,omitempty"`
	Constraints              string            `json:"constraints,omitempty"`
	Examples                 string            `json:"examples,omitempty"`
	JudgeInstructions        string            `json:"judge_instructions,omitempty"`
	PromptTemplate           string            `json:"prompt_template,omitempty"`
	Comments                 string            `json:"comments,omitempty"`
	Tags                     []string          `json:"tags,omitempty"`
	Checks                   []store.Check     `json:"checks,omitempty"`
	Metadata                 map[string]string `json:"metadata,omitempty"`
}

func fileTaskOf(t store.TaskInput) fileTask {
	return fileTask{TaskID: t.TaskKey, Category: t.Category, Subcategory: t.Subcategory, UseCase: t.UseCase,
		Question: t.Question, Turns: t.Turns, SystemPrompt: t.SystemPrompt, Input: t.Input, Reference: t.Reference,
		Excellent: t.Excellent, Good: t.Good, Pass: t.Pass, IncorrectAnswerDirection: t.IncorrectAnswerDirection,
		Constraints: t.Constraints, Examples: t.Examples, JudgeInstructions: t.JudgeInstructions,
		PromptTemplate: t.PromptTemplate, Comments: t.Comments, Tags: t.Tags, Checks: t.Checks, Metadata: t.Metadata}
}

// textFields are fileTask's text fields in file order (turns, tags, checks
// and metadata are written apart).
func (f *fileTask) textFields() [][2]string {
	return [][2]string{{"task_id", f.TaskID}, {"category", f.Category}, {"subcategory", f.Subcategory},
		{"usecase", f.UseCase}, {"question", f.Question}, {"system_prompt", f.SystemPrompt}, {"input_data", f.Input},
		{"reference", f.Reference}, {"excellent", f.Excellent}, {"good", f.Good}, {"pass", f.Pass},
		{"incorrect_answer_direction", f.IncorrectAnswerDirection}, {"constraints", f.Constraints},
		{"examples", f.Examples}, {"judge_instructions", f.JudgeInstructions}, {"prompt_template", f.PromptTemplate},
		{"comments", f.Comments}}
}

type jsonlWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func (j *jsonlWriter) Write(t store.TaskInput) error { return j.enc.Encode(fileTaskOf(t)) }
func (j *jsonlWriter) Close() error                  { return j.w.Flush() }

// csvColumns are the CSV export's columns; turns, checks and metadata cells
// hold JSON, tags are comma-separated (JSON when a tag holds a comma).
var csvColumns = []string{"task_id", "category", "subcategory", "usecase", "question", "system_prompt", "input_data",
	"reference", "excellent", "good", "pass", "incorrect_answer_direction", "constraints", "examples",
	"judge_instructions", "prompt_template", "comments", "turns", "tags", "checks", "metadata"}

type csvWriter struct {
	w      *bufio.Writer
	cw     *csv.Writer
	header bool
}

func (c *csvWriter) Write(t store.TaskInput) error {
	if c.header {
		c.header = false
		if err := c.cw.Write(csvColumns); err != nil {
			return err
		}
	}
	f := fileTaskOf(t)
	rec := make([]string, 0, len(csvColumns))
	for _, kv := range f.textFields() {
		rec = append(rec, kv[1])
	}
	rec = append(rec, jsonCell(f.Turns), tagsCell(f.Tags), jsonCell(f.Checks), jsonCell(f.Metadata))
	// No cell runs as a formula in a spreadsheet; the import restores them.
	for i := range rec {
		rec[i] = spreadsheet.Defuse(rec[i])
	}
	return c.cw.Write(rec)
}

func (c *csvWriter) Close() error {
	if c.header { // no task: still a header, so the file says what it is
		c.header = false
		if err := c.cw.Write(csvColumns); err != nil {
			return err
		}
	}
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return err
	}
	return c.w.Flush()
}

// jsonCell is v as JSON, or "" when it is empty.
func jsonCell[T any](v T) string {
	b, _ := json.Marshal(v)
	switch string(b) {
	case "null", "[]", "{}":
		return ""
	}
	return string(b)
}

func tagsCell(tags []string) string {
	for _, t := range tags {
		if strings.ContainsAny(t, ",;") || strings.HasPrefix(t, "[") {
			return jsonCell(tags)
		}
	}
	return strings.Join(tags, ", ")
}

// yamlWriter writes a YAML list of tasks by hand, so that every string comes
// back exactly: a multi-line text as a literal block where that is exact,
// anything else double-quoted (JSON's escapes are YAML's).
type yamlWriter struct {
	w *bufio.Writer
}

func (y *yamlWriter) Write(t store.TaskInput) error {
	f := fileTaskOf(t)
	first := true
	key := func(k string) {
		if first {
			y.w.WriteString("- ")
			first = false
		} else {
			y.w.WriteString("  ")
		}
		y.w.WriteString(k + ":")
	}
	for _, kv := range f.textFields() {
		if kv[1] == "" && kv[0] != "task_id" {
			continue
		}
		key(kv[0])
		y.scalar(kv[1], "    ")
	}
	list := func(name string, items []string) {
		if len(items) == 0 {
			return
		}
		key(name)
		y.w.WriteString("\n")
		for _, it := range items {
			y.w.WriteString("    -")
			y.scalar(it, "      ")
		}
	}
	list("turns", f.Turns)
	list("tags", f.Tags)
	if len(f.Checks) > 0 {
		key("checks")
		y.w.WriteString("\n")
		for _, c := range f.Checks {
			y.w.WriteString("    - type:")
			y.scalar(c.Type, "        ")
			if c.Value != "" {
				y.w.WriteString("      value:")
				y.scalar(c.Value, "        ")
			}
		}
	}
	if len(f.Metadata) > 0 {
		key("metadata")
		y.w.WriteString("\n")
		keys := make([]string, 0, len(f.Metadata))
		for k := range f.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			y.w.WriteString("    " + quoted(k) + ":")
			y.scalar(f.Metadata[k], "      ")
		}
	}
	_, err := y.w.Write(nil) // bufio keeps a write error: stop at the first
	return err
}

func (y *yamlWriter) Close() error { return y.w.Flush() }

// scalar writes " value\n" after a key or dash: a literal block indented by
// indent when s is several lines that one can hold exactly, else a
// double-quoted string.
func (y *yamlWriter) scalar(s, indent string) {
	if !literalSafe(s) {
		y.w.WriteString(" " + quoted(s) + "\n")
		return
	}
	body := strings.TrimRight(s, "\n")
	chomp := "-" // no final line break
	if n := len(s) - len(body); n > 0 {
		chomp = "+" // keep them all
	}
	y.w.WriteString(" |" + chomp + "\n")
	for _, line := range strings.Split(body, "\n") {
		if line != "" {
			y.w.WriteString(indent + line)
		}
		y.w.WriteString("\n")
	}
	if chomp == "+" {
		y.w.WriteString(strings.Repeat("\n", len(s)-len(body)-1))
	}
}

// literalSafe: s has several lines, begins with no blank, has no line with
// trailing blanks (or of blanks only) and no character but printable ones
// and tabs inside lines — what a literal block holds without an indentation
// indicator or doubt.
func literalSafe(s string) bool {
	body := strings.TrimRight(s, "\n")
	if !strings.Contains(body, "\n") || strings.HasPrefix(body, " ") || strings.HasPrefix(body, "\t") {
		return false
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimRight(line, " \t") != line {
			return false
		}
		for _, r := range line {
			if r != '\t' && !unicode.IsPrint(r) || r == '\uFEFF' {
				return false
			}
		}
	}
	return true
}

// quoted is s as a YAML double-quoted scalar: printable characters as
// they are, anything else escaped (\u or \U, which YAML reads as one code
// point; JSON's surrogate pairs it would not).
func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r) && r != '\uFEFF':
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
