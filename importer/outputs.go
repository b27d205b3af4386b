package importer

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"tribunal/store"
)

// OutputRow is one answer of a file of outputs: what a model (Model)
// answered (Response) to a task, named by its task_id or by its question.
// Rows is a file's answers; the tasks they name come from Task.
type OutputRow struct {
	Row, Line int
	// TaskKey is the row's task_id, or "q-" and 12 hex of the question's
	// SHA-256 when it names none (KeyGiven false): the same question gets
	// the same id in every file, so a re-import updates its task.
	TaskKey  string
	KeyGiven bool
	// Question, Reference and Category are "" when the row leaves them out.
	Question, Reference, Category string
	Model, Response               string
	LatencyMs, InputTokens        *int64
	OutputTokens                  *int64
	CostUSD                       *float64
}

// Outputs is what ReadOutputs made of a file: its answers when every row is
// good, else every problem (and no rows).
type Outputs struct {
	Format  Format
	Rows    []OutputRow
	Errors  Errors
	Skipped int
}

// outputAliases lists, per field of a row of outputs, the names a file may
// use for it (matched loosely, as task files are). Besides ours it knows
// Tribunal's own CSV export (time_ms, tokens), OpenAI's usage names
// (prompt_tokens, completion_tokens) and common eval headers (output,
// expected_output). Other columns are ignored, so an export reads back.
var outputAliases = map[string][]string{
	"task_id":       {"task_id", "id", "task_key"},
	"question":      {"question", "prompt", "input", "query", "query_text"},
	"category":      {"category"},
	"model":         {"model", "model_name"},
	"response":      {"response", "output", "completion", "generation"},
	"reference":     {"reference", "expected", "expected_answer", "expected_output", "ideal", "ground_truth"},
	"latency_ms":    {"latency_ms", "time_ms", "duration_ms"},
	"input_tokens":  {"input_tokens", "prompt_tokens"},
	"output_tokens": {"output_tokens", "completion_tokens", "tokens"},
	"cost_usd":      {"cost_usd", "cost"},
}

var outputFields = func() map[string]string {
	m := map[string]string{}
	for field, names := range outputAliases {
		for _, n := range names {
			m[looseKey(n)] = field
		}
	}
	return m
}()

// ReadOutputs reads a CSV (with a header row) or JSONL file of outputs: one
// answer per row, {task_id or question, model, response, latency_ms?,
// input_tokens?, output_tokens?, cost_usd?, reference?, category?}. With
// format "" the format is told from the name, else from the first line.
// All or nothing: any bad row leaves Rows empty and is named in Errors.
func ReadOutputs(name string, data []byte, format Format) *Outputs {
	res := &Outputs{Format: format}
	fail := func(e RowError) *Outputs {
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
		res.Format = detectOutputs(name, data)
		if res.Format == "" {
			return fail(RowError{Message: fmt.Sprintf("cannot tell the format of %s; name it .csv or .jsonl", displayName(name))})
		}
	}
	var parsed []OutputRow
	record := func(obj *value, b *builder) {
		if r, ok := outputRow(obj, b); ok {
			parsed = append(parsed, r)
		}
	}
	var rows []row
	var errs Errors
	switch res.Format {
	case FormatCSV:
		rows, errs = eachCSVRecord(data, strings.HasSuffix(strings.ToLower(name), ".tsv"), outputsHeader, anyOutputs, record)
	case FormatJSONL:
		rows, errs = eachJSONRecord(data, record)
	default:
		return fail(RowError{Message: fmt.Sprintf("a file of outputs is csv or jsonl, not %q", res.Format)})
	}
	for _, r := range rows {
		if r.skip {
			res.Skipped++
		}
	}
	errs = append(errs, agree(parsed)...)
	if len(errs) == 0 && len(parsed) == 0 {
		errs = Errors{{Message: "the file has no outputs"}}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		res.Errors = errs
		return res
	}
	res.Rows = parsed
	return res
}

func detectOutputs(name string, data []byte) Format {
	switch f, _ := detect(name, data); {
	case f == FormatCSV:
		return FormatCSV
	case f != "" && f != FormatYAML && f != FormatPromptfoo:
		return FormatJSONL // JSON lines, whatever their keys
	}
	if first := firstLine(data); strings.HasPrefix(first, "{") || strings.HasPrefix(first, "[") {
		return FormatJSONL
	}
	return ""
}

// outputsHeader checks a CSV's header: no field twice, and the columns
// every row needs.
func outputsHeader(keys []string, line int) *RowError {
	at := map[string]int{}
	for i, k := range keys {
		f := outputFields[looseKey(k)]
		if f == "" {
			continue
		}
		if j, dup := at[f]; dup {
			return &RowError{Line: line, Field: f, Message: fmt.Sprintf("columns %d (%q) and %d (%q) are the same field", j+1, keys[j], i+1, k)}
		}
		at[f] = i
	}
	_, id := at["task_id"]
	_, q := at["question"]
	switch {
	case !id && !q:
		return &RowError{Line: line, Field: "task_id", Message: "no task_id or question column"}
	case !hasField(at, "model"):
		return &RowError{Line: line, Field: "model", Message: "no model column"}
	case !hasField(at, "response"):
		return &RowError{Line: line, Field: "response", Message: "no response column (name one response, output or completion)"}
	}
	return nil
}

func hasField(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// anyOutputs: a file of outputs is read with its cells restored whatever
// its header, a run's CSV export (runs.CSVHeader) or a spreadsheet's: an
// answer that starts '=x was defused, not written so by a model.
func anyOutputs([]string) bool { return true }

// outputRow reads one record; its problems go to b.
func outputRow(obj *value, b *builder) (OutputRow, bool) {
	r := OutputRow{Row: b.num, Line: b.line}
	from := map[string]string{}
	for i, k := range obj.keys {
		field, v := outputFields[looseKey(k)], obj.vals[i]
		if field == "" || v.empty() {
			continue
		}
		if prev, dup := from[field]; dup {
			b.fail(v, field, "given twice (as %q and %q)", prev, k)
			continue
		}
		from[field] = k
		switch field {
		case "task_id":
			r.TaskKey, r.KeyGiven = outputText(b, field, v), true
		case "question":
			r.Question = outputText(b, field, v)
		case "category":
			r.Category = outputText(b, field, v)
		case "model":
			r.Model = outputText(b, field, v)
		case "reference":
			r.Reference = outputText(b, field, v)
		case "response":
			if v.kind == scalar {
				r.Response = v.text // as written: leading spaces can matter to a check
			} else {
				r.Response = v.jsonText() // structured output, kept as its JSON
			}
		case "latency_ms":
			if f, ok := outputNumber(b, field, v); ok {
				ms := int64(math.Round(f))
				r.LatencyMs = &ms
			}
		case "input_tokens":
			r.InputTokens = outputCount(b, field, v)
		case "output_tokens":
			r.OutputTokens = outputCount(b, field, v)
		case "cost_usd":
			if f, ok := outputNumber(b, field, v); ok {
				r.CostUSD = &f
			}
		}
	}
	switch {
	case len(b.errs) > 0: // a field that was there but bad is not also missing
	case r.TaskKey == "" && r.Question == "":
		b.fail(nil, "task_id", "a row needs a task_id or a question")
	case r.Model == "":
		b.fail(nil, "model", "is required")
	case strings.TrimSpace(r.Response) == "":
		b.fail(nil, "response", "is required")
	}
	for _, f := range [][2]string{{"task_id", r.TaskKey}, {"question", r.Question}, {"category", r.Category},
		{"model", r.Model}, {"reference", r.Reference}, {"response", r.Response}} {
		if strings.ContainsRune(f[1], 0) {
			b.fail(nil, f[0], "%s", store.NULMessage)
		}
	}
	if n := len(r.TaskKey) + len(r.Question) + len(r.Category) + len(r.Model) + len(r.Reference) + len(r.Response); n > MaxRowSize {
		b.fail(nil, "", "the row is %d bytes, more than the %d MB limit", n, MaxRowSize>>20)
	}
	switch {
	case len(r.TaskKey) > 255:
		b.fail(nil, "task_id", "is longer than 255 characters")
	case len(r.Model) > 255:
		b.fail(nil, "model", "is longer than 255 characters")
	}
	if len(b.errs) > 0 {
		return r, false
	}
	if !r.KeyGiven {
		r.TaskKey = QuestionKey(r.Question)
	}
	return r, true
}

// QuestionKey is the task_id of a row that names only its question.
func QuestionKey(question string) string {
	h := sha256.Sum256([]byte(question))
	return "q-" + hex.EncodeToString(h[:])[:12]
}

func outputText(b *builder, field string, v *value) string {
	if v.kind != scalar {
		b.fail(v, field, "must be text, not %s", v.describe())
		return ""
	}
	return strings.TrimSpace(v.text)
}

// outputNumber reads a finite number ≥ 0, written as a number or as text.
func outputNumber(b *builder, field string, v *value) (float64, bool) {
	if v.kind != scalar {
		b.fail(v, field, "not a number")
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v.text), 64)
	switch {
	case err != nil && !isRange(err):
		b.fail(v, field, "not a number")
	case err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e15:
		b.fail(v, field, "%s is too large", strings.TrimSpace(v.text))
	case f < 0:
		b.fail(v, field, "must be 0 or more, not %s", strings.TrimSpace(v.text))
	default:
		return f, true
	}
	return 0, false
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// outputCount reads a whole number ≥ 0 (1200 or 1200.0, not 1200.5).
func outputCount(b *builder, field string, v *value) *int64 {
	f, ok := outputNumber(b, field, v)
	if !ok {
		return nil
	}
	if f != math.Trunc(f) {
		b.fail(v, field, "not a whole number")
		return nil
	}
	n := int64(f)
	return &n
}

// agree checks what only the whole file shows: one answer per task and
// model, and a task's rows that agree on its question, reference and
// category.
func agree(rows []OutputRow) Errors {
	var errs Errors
	type answer struct{ task, model string }
	answered := map[answer]int{}
	first := map[string]int{}
	for i, r := range rows {
		if j, dup := answered[answer{r.TaskKey, r.Model}]; dup {
			errs = append(errs, RowError{Row: r.Row, Line: r.Line, Field: "model",
				Message: fmt.Sprintf("%q answers task %q again (line %d); one answer per task and model", r.Model, r.TaskKey, rows[j].Line)})
			continue
		}
		answered[answer{r.TaskKey, r.Model}] = i
		j, seen := first[r.TaskKey]
		if !seen {
			first[r.TaskKey] = i
			continue
		}
		p := rows[j]
		for _, f := range []struct{ name, a, b string }{{"question", p.Question, r.Question},
			{"reference", p.Reference, r.Reference}, {"category", p.Category, r.Category}} {
			if f.a != "" && f.b != "" && f.a != f.b {
				errs = append(errs, RowError{Row: r.Row, Line: r.Line, Field: f.name,
					Message: fmt.Sprintf("differs from line %d, which gives task %q too", p.Line, r.TaskKey)})
			}
		}
		// A later row may fill in what the first left out.
		rows[j].Question = cmp.Or(p.Question, r.Question)
		rows[j].Reference = cmp.Or(p.Reference, r.Reference)
		rows[j].Category = cmp.Or(p.Category, r.Category)
	}
	return errs
}

func sortErrors(errs Errors) {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Row != errs[j].Row {
			return errs[i].Row < errs[j].Row
		}
		return errs[i].Line < errs[j].Line
	})
}
