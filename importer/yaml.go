package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"tribunal/prompt"
)

// parseYAML reads YAML (or JSON) task definitions: one task mapping, a list
// of them, or a mapping with a `tasks:` list whose other keys are defaults
// for every task (a top-level name or description becomes suite_name /
// suite_description metadata); several `---` documents add up. A task takes
// any TaskInput field (loosely named, as in CSV) plus the seed 004 TaskBench
// shape:
//
//	name                → task_id (unless task_id/id is given)
//	description         → question (unless question/prompt is given, then Metadata)
//	output_format       → first line of constraints ("Output format: csv")
//	constraints         → constraints; a mapping becomes "key: value" lines, a list "- item" lines
//	examples            → examples; a list of mappings becomes "Example 1:" blocks
//	evaluation_criteria → "Evaluation criteria:" list at the top of judge_instructions
//	judge_instructions  → judge_instructions
//	input, input_data   → input (with a description; else input is the question)
//	input_file          → input: the file's contents, read relative to dir
//	                      (the task file's folder; an upload has none)
//	prompt_template     → prompt_template
//	input_type and anything else → Metadata
func parseYAML(data []byte, dir string) ([]row, Errors) {
	docs, ferr := parseTree(data)
	if ferr != nil {
		return nil, Errors{*ferr}
	}
	var rows []row
	var errs Errors
	num := 0
	for _, doc := range docs {
		var items []*value
		switch {
		case doc.kind == list:
			items = doc.items
		case doc.kind == object && doc.get("tasks") != nil:
			tasks := doc.get("tasks")
			if tasks.kind != list {
				errs = append(errs, RowError{Line: tasks.line, Column: tasks.col, Field: "tasks", Message: "must be a list of tasks"})
				continue
			}
			for _, it := range tasks.items {
				items = append(items, withDefaults(it, doc))
			}
		case doc.kind == object:
			items = []*value{doc}
		case doc.kind == null:
			continue
		default:
			errs = append(errs, RowError{Line: doc.line, Column: doc.col, Message: "expected a task mapping or a list of tasks"})
			continue
		}
		for _, it := range items {
			num++
			b := newBuilder(num, it.line, it.col)
			if it.kind != object {
				b.fail(it, "", "a task must be a mapping, not %s", it.describe())
			} else {
				yamlTask(it, b, dir)
			}
			rows, errs = b.done(rows, errs)
		}
	}
	return rows, errs
}

// withDefaults adds the top-level fields next to `tasks:` that a task does
// not set itself.
func withDefaults(task, top *value) *value {
	if task.kind != object {
		return task
	}
	has := map[string]bool{}
	for _, k := range task.keys {
		has[fieldKey(k)] = true
	}
	out := *task
	out.keys = append([]string(nil), task.keys...)
	out.vals = append([]*value(nil), task.vals...)
	for i, k := range top.keys {
		switch f := fieldKey(k); {
		case k == "tasks":
		case f == "task_id" || f == "question" || f == "turns":
			// A suite's name or description is not every task's id or
			// question; keep it as metadata.
			if !has[looseKey("suite_"+k)] {
				out.add("suite_"+k, top.vals[i])
			}
		case !has[f]:
			out.add(k, top.vals[i])
		}
	}
	return &out
}

// fieldKey is the field a key sets, or the loose key itself for unknown ones.
func fieldKey(k string) string {
	if f := fieldOf(k); f != "" {
		return f
	}
	switch lk := looseKey(k); lk {
	case "name":
		return "task_id"
	case "description":
		return "question"
	default:
		return lk
	}
}

func yamlTask(obj *value, b *builder, dir string) {
	if isTaskBench(obj) {
		checkTaskBench(obj, b)
	}
	hasID, hasQuestion, hasDescription := false, false, false
	for _, k := range obj.keys {
		hasDescription = hasDescription || looseKey(k) == "description"
	}
	for _, k := range obj.keys {
		hasID = hasID || fieldOf(k) == "task_id"
		// In TaskBench's shape the description is the question and input is its data.
		isData := hasDescription && looseKey(k) == "input"
		hasQuestion = hasQuestion || (fieldOf(k) == "question" && !isData) || fieldOf(k) == "turns"
	}
	var outputFormat, criteria *value
	for i, k := range obj.keys {
		v := obj.vals[i]
		switch looseKey(k) {
		case "name":
			if hasID {
				b.meta(k, v)
			} else {
				b.setField("task_id", k, v)
			}
		case "description":
			if hasQuestion {
				b.meta(k, v)
			} else {
				b.setField("question", k, v)
			}
		case "outputformat":
			outputFormat = v
		case "inputdata":
			b.t.Input = v.lines("")
		case "input":
			if hasDescription && !hasQuestion {
				b.t.Input = v.lines("")
			} else {
				b.set(k, v)
			}
		case "inputfile":
			b.t.Input = readInputFile(b, v, dir)
		case "evaluationcriteria":
			criteria = v
		default:
			b.set(k, v)
		}
	}
	t := &b.t
	if !outputFormat.empty() {
		t.Constraints = joinText("Output format: "+outputFormat.inline(), t.Constraints)
	}
	if !criteria.empty() {
		t.JudgeInstructions = joinText("Evaluation criteria:\n"+criteria.lines(""), t.JudgeInstructions)
	}
}

// readInputFile reads a task's input_file relative to dir, within
// prompt.MaxInput bytes.
func readInputFile(b *builder, v *value, dir string) string {
	name := strings.TrimSpace(v.inline())
	switch {
	case name == "":
		return ""
	case dir == "":
		b.fail(v, "input_file", "%s cannot be read from an upload: import the file with `tribunal import`, or paste its contents as input", name)
		return ""
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, name)
	}
	f, err := os.Open(path)
	if err != nil {
		b.fail(v, "input_file", "cannot read %s: %v", name, errors.Unwrap(err))
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, prompt.MaxInput+1))
	switch {
	case err != nil:
		b.fail(v, "input_file", "cannot read %s: %v", name, err)
	case len(data) > prompt.MaxInput:
		b.fail(v, "input_file", "%s is longer than %d KB", name, prompt.MaxInput>>10)
	case !utf8.Valid(data):
		b.fail(v, "input_file", "%s is not UTF-8 text", name)
	default:
		return string(data)
	}
	return ""
}

// joinText joins the non-empty parts with a blank line.
func joinText(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// parseTree decodes a YAML or JSON file into one value per document. JSON
// goes through encoding/json (exact JSON semantics); everything else through
// goccy/go-yaml's parser, converted node by node so every value keeps its line.
func parseTree(data []byte) ([]*value, *RowError) {
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		v, err := parseJSONValue(data, 1)
		if err != nil {
			return nil, &RowError{Message: err.Error()}
		}
		return []*value{v}, nil
	}
	if line, deep := YAMLTooDeep(data, maxDepth); deep {
		return nil, &RowError{Line: line, Message: fmt.Sprintf("the YAML is nested more than %d levels deep", maxDepth)}
	}
	file, err := safeParseYAML(data)
	if err != nil {
		return nil, yamlError(err)
	}
	c := &yamlConv{anchors: map[string]*value{}}
	var docs []*value
	for _, d := range file.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		v, err := c.conv(d.Body, 0)
		if err != nil {
			return nil, yamlError(err)
		}
		if v.size > MaxFileSize {
			return nil, &RowError{Message: fmt.Sprintf("the YAML expands to more than %d MB (through aliases)", MaxFileSize>>20)}
		}
		docs = append(docs, v)
	}
	return docs, nil
}

// safeParseYAML turns a panic in the YAML parser into an error: a malformed
// upload must not take the server down.
func safeParseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

// posError is a conversion error at a known place.
type posError struct {
	line, col int
	msg       string
}

func errAt(n ast.Node, msg string) *posError {
	l, c := position(n)
	return &posError{l, c, msg}
}

func (e *posError) Error() string { return e.msg }

func yamlError(err error) *RowError {
	var ye yaml.Error
	if errors.As(err, &ye) {
		re := &RowError{Message: "not valid YAML: " + ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			re.Line, re.Column = tk.Position.Line, tk.Position.Column
		}
		return re
	}
	var pe *posError
	if errors.As(err, &pe) {
		return &RowError{Line: pe.line, Column: pe.col, Message: pe.msg}
	}
	return &RowError{Message: "not valid YAML: " + err.Error()}
}

// YAMLTooDeep guards the YAML parser, whose time grows with the square of
// the nesting depth (100k nested "- " take half a minute): it estimates depth
// from indentation, leading "- "/"? " markers and open flow brackets, and
// names the first line deeper than maxDepth levels.
func YAMLTooDeep(data []byte, maxDepth int) (line int, deep bool) {
	flow := 0
	for n, line := range bytes.Split(data, []byte("\n")) {
		depth, i := 0, 0
	indent:
		for i < len(line) {
			switch {
			case line[i] == ' ':
				depth++
			case (line[i] == '-' || line[i] == '?' || line[i] == ':') && (i+1 == len(line) || line[i+1] == ' '):
				depth += 2
			default:
				break indent
			}
			i++
		}
		// Indentation counts in columns, so allow two per level.
		if depth > 2*maxDepth+2 {
			return n + 1, true
		}
		for _, c := range line[i:] {
			switch c {
			case '[', '{':
				if flow++; flow > maxDepth {
					return n + 1, true
				}
			case ']', '}':
				flow = max(flow-1, 0)
			}
		}
	}
	return 0, false
}

// yamlConv converts goccy AST nodes to values, resolving anchors, aliases
// and merge keys. An alias shares the anchored value; value.size counts it
// again, which is what catches "billion laughs" files.
type yamlConv struct {
	anchors map[string]*value
}

func line(n ast.Node) int {
	l, _ := position(n)
	return l
}

// position is where a node starts: its line and column (1-based; 0 when unknown).
func position(n ast.Node) (line, col int) {
	if n == nil {
		return 0, 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 0, 0
}

// placed sets v's position to n's.
func placed(v *value, n ast.Node) *value {
	v.line, v.col = position(n)
	return v
}

func (c *yamlConv) conv(n ast.Node, depth int) (*value, error) {
	if depth > maxDepth {
		return nil, errAt(n, fmt.Sprintf("the YAML is nested more than %d levels deep", maxDepth))
	}
	switch n := n.(type) {
	case nil:
		return &value{kind: null, size: 1}, nil
	case *ast.NullNode:
		return placed(&value{kind: null, size: 1}, n), nil
	case *ast.StringNode:
		return placed(newScalar(n.Value, true, 0), n), nil
	case *ast.LiteralNode:
		if n.Value == nil {
			return placed(newScalar("", true, 0), n), nil
		}
		return placed(newScalar(n.Value.Value, true, 0), n), nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return placed(newScalar(n.GetToken().Value, false, 0), n), nil
	case *ast.TagNode:
		return c.conv(n.Value, depth+1)
	case *ast.AnchorNode:
		v, err := c.conv(n.Value, depth+1)
		if err != nil {
			return nil, err
		}
		if n.Name != nil {
			c.anchors[n.Name.GetToken().Value] = v
		}
		return v, nil
	case *ast.AliasNode:
		name := ""
		if n.Value != nil {
			name = n.Value.GetToken().Value
		}
		v, ok := c.anchors[name]
		if !ok {
			return nil, errAt(n, fmt.Sprintf("alias *%s has no anchor before it", name))
		}
		shared := *v // same content, but the place where the alias is
		return placed(&shared, n), nil
	case *ast.SequenceNode:
		v := placed(&value{kind: list, size: 1}, n)
		for _, it := range n.Values {
			iv, err := c.conv(it, depth+1)
			if err != nil {
				return nil, err
			}
			v.push(iv)
		}
		return v, nil
	case *ast.MappingNode:
		return c.mapping(n.Values, line(n), depth)
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{n}, line(n), depth)
	case *ast.CommentGroupNode, *ast.CommentNode:
		return placed(&value{kind: null, size: 1}, n), nil
	}
	return nil, errAt(n, fmt.Sprintf("unsupported YAML %s", n.Type()))
}

// mapping converts key/value pairs; `<<: *anchor` merges an anchored mapping's
// keys that the mapping does not set itself.
func (c *yamlConv) mapping(pairs []*ast.MappingValueNode, at int, depth int) (*value, error) {
	v := &value{kind: object, line: at, size: 1}
	if len(pairs) > 0 && pairs[0] != nil {
		placed(v, pairs[0].Key) // where the first key is, not its ':'
	}
	seen := map[string]bool{}
	var merges []*value
	for _, p := range pairs {
		if p == nil {
			continue
		}
		if _, ok := p.Key.(*ast.MergeKeyNode); ok {
			m, err := c.conv(p.Value, depth+1)
			if err != nil {
				return nil, err
			}
			merges = append(merges, m)
			continue
		}
		var keyNode ast.Node = p.Key
		if mk, ok := p.Key.(*ast.MappingKeyNode); ok {
			keyNode = mk.Value
		}
		k, err := c.conv(keyNode, depth+1)
		if err != nil {
			return nil, err
		}
		if k.kind == list || k.kind == object {
			return nil, errAt(keyNode, "a mapping key must be text")
		}
		if seen[k.text] {
			return nil, errAt(keyNode, fmt.Sprintf("key %q repeats", k.text))
		}
		seen[k.text] = true
		val, err := c.conv(p.Value, depth+1)
		if err != nil {
			return nil, err
		}
		if val.line == 0 {
			placed(val, keyNode)
		}
		v.add(k.text, val)
	}
	for _, m := range merges {
		sources := []*value{m}
		if m.kind == list {
			sources = m.items
		}
		for _, src := range sources {
			if src.kind != object {
				return nil, &posError{m.line, m.col, "<< must merge a mapping"}
			}
			for i, k := range src.keys {
				if !seen[k] {
					seen[k] = true
					v.add(k, src.vals[i])
				}
			}
		}
	}
	return v, nil
}
