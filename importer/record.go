package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"tribunal/store"
)

// value is a decoded JSON or YAML value that remembers its line. Scalars keep
// their text as written, so a YAML task_id 007 stays "007" and not 7.
type value struct {
	kind  kind
	text  string // scalar text
	str   bool   // the scalar was a string (not a number, bool or null)
	items []*value
	keys  []string // object keys in file order
	vals  []*value
	line  int
	col   int // 0 when unknown (CSV, JSON lines before they are parsed)
	size  int // bytes the value stands for once YAML aliases are expanded
}

type kind uint8

const (
	null kind = iota
	scalar
	list
	object
)

func (v *value) get(key string) *value {
	if v == nil || v.kind != object {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// empty values are skipped, so an empty CSV cell or `reference: ""` means
// "not given" and the defaults apply.
func (v *value) empty() bool {
	switch {
	case v == nil || v.kind == null:
		return true
	case v.kind == scalar:
		return strings.TrimSpace(v.text) == ""
	case v.kind == list:
		return len(v.items) == 0
	}
	return len(v.keys) == 0
}

func (v *value) describe() string {
	switch v.kind {
	case list:
		return "a list"
	case object:
		return "a mapping"
	case null:
		return "empty"
	}
	return "text"
}

// sizeCap saturates sizes so alias bombs cannot overflow them.
const sizeCap = MaxFileSize + 1

func (v *value) add(key string, child *value) {
	v.keys = append(v.keys, key)
	v.vals = append(v.vals, child)
	v.size = min(v.size+len(key)+child.size, sizeCap)
}

func (v *value) push(child *value) {
	v.items = append(v.items, child)
	v.size = min(v.size+child.size, sizeCap)
}

func newScalar(text string, str bool, line int) *value {
	return &value{kind: scalar, text: text, str: str, line: line, size: len(text) + 1}
}

// at sets v's column.
func at(v *value, col int) *value {
	v.col = col
	return v
}

// jsonText renders v as compact JSON, for metadata and check values that are
// structured (a JSON schema written as YAML, say).
func (v *value) jsonText() string {
	var b bytes.Buffer
	v.writeJSON(&b)
	return b.String()
}

func (v *value) writeJSON(b *bytes.Buffer) {
	switch v.kind {
	case null:
		b.WriteString("null")
	case scalar:
		if !v.str && json.Valid([]byte(v.text)) {
			b.WriteString(v.text)
		} else {
			q, _ := json.Marshal(v.text)
			b.Write(q)
		}
	case list:
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	case object:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			v.vals[i].writeJSON(b)
		}
		b.WriteByte('}')
	}
}

// inline renders a value for one line of text: scalars as they are, lists of
// scalars comma-separated, anything else as JSON.
func (v *value) inline() string {
	switch v.kind {
	case scalar:
		return strings.TrimSpace(v.text)
	case null:
		return ""
	case list:
		parts := make([]string, 0, len(v.items))
		for _, it := range v.items {
			if it.kind != scalar {
				return v.jsonText()
			}
			parts = append(parts, strings.TrimSpace(it.text))
		}
		return strings.Join(parts, ", ")
	}
	return v.jsonText()
}

// lines renders structured text fields (constraints, examples, criteria) the
// way a person would write them: a mapping as "key: value" lines, a list as
// "- item" lines, a list of mappings as blocks ("Example 1:" when label is set).
func (v *value) lines(label string) string {
	switch v.kind {
	case object:
		out := make([]string, len(v.keys))
		for i, k := range v.keys {
			out[i] = k + ": " + v.vals[i].inline()
		}
		return strings.Join(out, "\n")
	case list:
		allScalar := true
		for _, it := range v.items {
			allScalar = allScalar && it.kind != object
		}
		out := make([]string, 0, len(v.items))
		for i, it := range v.items {
			switch {
			case allScalar:
				out = append(out, "- "+it.inline())
			case label != "":
				out = append(out, fmt.Sprintf("%s %d:\n%s", label, i+1, it.lines("")))
			default:
				out = append(out, it.lines(""))
			}
		}
		sep := "\n"
		if !allScalar {
			sep = "\n\n"
		}
		return strings.Join(out, sep)
	}
	return v.inline()
}

// aliases lists, per TaskInput JSON field, the names a file may use for it.
// Besides our own names it knows the seed 000/001 columns (query_text,
// expected_answer, tag, comments) and common dataset headers (TruthfulQA's
// Best/Correct/Incorrect Answers, GSM8K's answer, evals' ideal).
var aliases = map[string][]string{
	"task_id":                    {"task_id", "id", "task_key"},
	"category":                   {"category"},
	"subcategory":                {"subcategory"},
	"question":                   {"question", "prompt", "input", "query", "query_text", "instruction"},
	"excellent":                  {"excellent", "best_answer"},
	"good":                       {"good", "correct_answers"},
	"pass":                       {"pass"},
	"incorrect_answer_direction": {"incorrect_answer_direction", "incorrect_answers"},
	"reference":                  {"reference", "answer", "expected", "expected_answer", "expected_output", "ideal", "target", "ground_truth"},
	"turns":                      {"turns"},
	"system_prompt":              {"system_prompt", "system"},
	"usecase":                    {"usecase"},
	"tags":                       {"tags", "tag"},
	"constraints":                {"constraints"},
	"examples":                   {"examples"},
	"judge_instructions":         {"judge_instructions"},
	"prompt_template":            {"prompt_template"},
	"input_data":                 {"input_data"},
	"comments":                   {"comments", "comment"},
	"checks":                     {"checks"},
	"metadata":                   {"metadata"},
}

// fieldAliases maps loose keys (see looseKey) to TaskInput JSON field names.
var fieldAliases = func() map[string]string {
	m := map[string]string{}
	for field, names := range aliases {
		for _, n := range names {
			m[looseKey(n)] = field
		}
	}
	return m
}()

// looseKey folds the ways people write a header: "Expected Answer",
// "expected-answer" and "expectedAnswer" are all "expectedanswer".
func looseKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.', '\t':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, strings.TrimSpace(k))
}

func fieldOf(key string) string { return fieldAliases[looseKey(key)] }

// builder fills one TaskInput from the fields of one record and collects
// what is wrong with it.
type builder struct {
	t              store.TaskInput
	num, line, col int
	from           map[string]string // field → the key that set it, to report repeats
	errs           Errors
	warns          Errors // what imports but may not be what was meant
}

func newBuilder(num, line, col int) *builder {
	return &builder{num: num, line: line, col: col, from: map[string]string{}}
}

// fail records a problem at v (at the record's start when v is nil or has no place).
func (b *builder) fail(v *value, field, format string, args ...any) {
	b.errs = append(b.errs, b.at(v, field, fmt.Sprintf(format, args...)))
}

// warn records a warning at v, as fail records a problem.
func (b *builder) warn(v *value, field, format string, args ...any) {
	b.warns = append(b.warns, b.at(v, field, fmt.Sprintf(format, args...)))
}

func (b *builder) at(v *value, field, msg string) RowError {
	line, col := b.line, b.col
	if v != nil && v.line > 0 {
		line, col = v.line, v.col
	}
	return RowError{Row: b.num, Line: line, Column: col, Field: field, Message: msg}
}

// done adds the task to rows, or its errors to errs (and the row, marked
// bad, so that finish still sees whether the file names categories).
func (b *builder) done(rows []row, errs Errors) ([]row, Errors) {
	r := row{task: b.t, num: b.num, line: b.line, col: b.col, bad: len(b.errs) > 0, warns: b.warns}
	return append(rows, r), append(errs, b.errs...)
}

// setAll maps every field of a record.
func (b *builder) setAll(obj *value) {
	for i, k := range obj.keys {
		b.set(k, obj.vals[i])
	}
}

// set maps one field of a record by its loose name; unknown fields go to
// Metadata.
func (b *builder) set(key string, v *value) {
	if f := fieldOf(key); f != "" {
		b.setField(f, key, v)
	} else {
		b.meta(key, v)
	}
}

func (b *builder) setField(field, key string, v *value) {
	if v.empty() {
		return
	}
	if prev, dup := b.from[field]; dup {
		b.fail(v, field, "given twice (as %q and %q)", prev, key)
		return
	}
	b.from[field] = key
	t := &b.t
	switch field {
	case "task_id":
		b.text(&t.TaskKey, field, v)
	case "category":
		b.text(&t.Category, field, v)
	case "subcategory":
		b.text(&t.Subcategory, field, v)
	case "question":
		b.text(&t.Question, field, v)
	case "excellent":
		b.text(&t.Excellent, field, v)
	case "good":
		b.text(&t.Good, field, v)
	case "pass":
		b.text(&t.Pass, field, v)
	case "incorrect_answer_direction":
		b.text(&t.IncorrectAnswerDirection, field, v)
	case "system_prompt":
		b.text(&t.SystemPrompt, field, v)
	case "usecase":
		b.text(&t.UseCase, field, v)
	case "comments":
		b.text(&t.Comments, field, v)
	case "constraints":
		checkConstraints(v, b)
		t.Constraints = strings.TrimSpace(v.lines(""))
	case "examples":
		t.Examples = strings.TrimSpace(v.lines("Example"))
	case "judge_instructions":
		t.JudgeInstructions = strings.TrimSpace(v.lines(""))
	case "prompt_template":
		b.text(&t.PromptTemplate, field, v)
	case "input_data":
		b.text(&t.Input, field, v)
	case "reference":
		b.reference(v)
	case "turns":
		b.turns(v)
	case "tags":
		b.tags(v)
	case "checks":
		b.checks(v)
	case "metadata":
		b.metadata(v)
	}
}

func (b *builder) text(dst *string, field string, v *value) {
	if v.kind != scalar {
		b.fail(v, field, "must be text, not %s", v.describe())
		return
	}
	*dst = strings.TrimSpace(v.text)
}

// reference takes the first of a list of references (MT-Bench, evals) and
// keeps the whole list in Metadata["references"].
func (b *builder) reference(v *value) {
	if v.kind == list {
		first := v.items[0]
		if first.kind != scalar {
			b.fail(first, "reference", "must be text or a list of texts")
			return
		}
		b.t.Reference = strings.TrimSpace(first.text)
		if len(v.items) > 1 {
			b.putMeta(v, "references", v.jsonText())
		}
		return
	}
	b.text(&b.t.Reference, "reference", v)
}

// structured parses a CSV cell holding JSON (turns, checks, metadata).
func (b *builder) structured(v *value, field string) (*value, bool) {
	if v.kind != scalar {
		return v, true
	}
	s := strings.TrimSpace(v.text)
	if !strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "{") {
		return v, true
	}
	parsed, err := parseJSONValue([]byte(s), v.line)
	if err != nil {
		b.fail(v, field, "is not valid JSON: %v", err)
		return nil, false
	}
	return parsed, true
}

func (b *builder) turns(v *value) {
	v, ok := b.structured(v, "turns")
	if !ok {
		return
	}
	if v.kind != list {
		b.fail(v, "turns", "must be a list of user turns, not %s", v.describe())
		return
	}
	for i, it := range v.items {
		if it.kind != scalar || strings.TrimSpace(it.text) == "" {
			b.fail(it, "turns", "turn %d must be non-empty text", i+1)
			return
		}
		b.t.Turns = append(b.t.Turns, strings.TrimSpace(it.text))
	}
}

// tags accept a list, a JSON list in a CSV cell (as the export writes tags
// that hold a comma), or a string split on commas and semicolons.
func (b *builder) tags(v *value) {
	if v.kind == scalar && strings.HasPrefix(strings.TrimSpace(v.text), "[") {
		if parsed, err := parseJSONValue([]byte(strings.TrimSpace(v.text)), v.line); err == nil && parsed.kind == list {
			v = parsed
		}
	}
	var raw []string
	switch v.kind {
	case scalar:
		raw = strings.FieldsFunc(v.text, func(r rune) bool { return r == ',' || r == ';' })
	case list:
		for _, it := range v.items {
			if it.kind != scalar {
				b.fail(it, "tags", "each tag must be text")
				return
			}
			raw = append(raw, it.text)
		}
	default:
		b.fail(v, "tags", "must be a list or comma-separated text")
		return
	}
	for _, s := range raw {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(b.t.Tags, s) {
			b.t.Tags = append(b.t.Tags, s)
		}
	}
}

// checks accept a list of {type, value} mappings or type names, a JSON list,
// or type names separated by commas.
func (b *builder) checks(v *value) {
	v, ok := b.structured(v, "checks")
	if !ok {
		return
	}
	var items []*value
	switch v.kind {
	case list:
		items = v.items
	case scalar:
		for _, s := range strings.FieldsFunc(v.text, func(r rune) bool { return r == ',' || r == ';' }) {
			it := newScalar(s, true, v.line)
			it.col = v.col
			items = append(items, it)
		}
	default:
		b.fail(v, "checks", "must be a list of checks")
		return
	}
	for _, it := range items {
		var c store.Check
		var typ *value
		switch it.kind {
		case scalar:
			typ = it
		case object:
			for i, k := range it.keys {
				switch looseKey(k) {
				case "type":
					typ = it.vals[i]
				case "value":
					if val := it.vals[i]; val.kind == scalar {
						c.Value = val.text // as written: spaces can matter to contains and regex
					} else if !val.empty() {
						c.Value = val.jsonText()
					}
				default:
					b.fail(it.vals[i], "checks", "unknown check field %q (want type and value)", k)
					return
				}
			}
		}
		if typ == nil || typ.kind != scalar {
			b.fail(it, "checks", "each check needs a type")
			return
		}
		c.Type = CheckType(typ.text)
		if !slices.Contains(store.CheckTypes, c.Type) {
			b.fail(typ, "checks", "unknown check type %q (want one of %s)", strings.TrimSpace(typ.text), strings.Join(store.CheckTypes, ", "))
			return
		}
		b.t.Checks = append(b.t.Checks, c)
	}
}

// CheckType is a check's type as a file may write it (Exact-Match, "rouge l"), in its stored form.
func CheckType(s string) string {
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}

func (b *builder) metadata(v *value) {
	v, ok := b.structured(v, "metadata")
	if !ok {
		return
	}
	if v.kind != object {
		b.fail(v, "metadata", "must be a mapping, not %s", v.describe())
		return
	}
	for i, k := range v.keys {
		b.meta(k, v.vals[i])
	}
}

// meta keeps an unknown field: text as is, structures as JSON.
func (b *builder) meta(key string, v *value) {
	if v.empty() {
		return
	}
	s := strings.TrimSpace(v.text)
	if v.kind != scalar {
		s = v.jsonText()
	}
	b.putMeta(v, strings.TrimSpace(key), s)
}

func (b *builder) putMeta(v *value, key, s string) {
	if b.t.Metadata == nil {
		b.t.Metadata = map[string]string{}
	}
	if _, dup := b.t.Metadata[key]; dup {
		b.fail(v, "metadata", "%q given twice", key)
		return
	}
	b.t.Metadata[key] = s
}
