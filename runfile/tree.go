package runfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"tribunal/importer"
)

// node is a YAML value that remembers where it was written.
type node struct {
	kind  kind
	text  string // scalar text as written
	str   bool   // the scalar was a string (quoted, or not a number/bool/null)
	items []*node
	keys  []string
	klns  []int // line of each key
	vals  []*node
	line  int
}

type kind uint8

const (
	null kind = iota
	scalar
	list
	object
)

func (n *node) get(key string) *node {
	if n == nil || n.kind != object {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *node) isNull() bool { return n == nil || n.kind == null }

func (n *node) describe() string {
	switch {
	case n == nil || n.kind == null:
		return "nothing"
	case n.kind == list:
		return "a list"
	case n.kind == object:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.text)
}

// maxDepth bounds nesting: a run file is a few levels deep.
const maxDepth = 64

// maxSize bounds a run file; tasks in bulk belong in task files.
const maxSize = 10 << 20

type posError struct {
	line int
	msg  string
}

func (e *posError) Error() string { return e.msg }

// parseTree reads a YAML (or JSON) document into nodes with lines.
func parseTree(data []byte) (root *node, err error) {
	if len(data) > maxSize {
		return nil, &posError{0, fmt.Sprintf("the file is %d bytes, more than the %d MB limit", len(data), maxSize>>20)}
	}
	if line, deep := importer.YAMLTooDeep(data, maxDepth); deep {
		return nil, &posError{line, fmt.Sprintf("the YAML is nested more than %d levels deep", maxDepth)}
	}
	defer func() {
		if r := recover(); r != nil { // a malformed file must not crash the CLI
			root, err = nil, &posError{0, fmt.Sprintf("the YAML parser failed: %v", r)}
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			pe := &posError{msg: "not valid YAML: " + ye.GetMessage()}
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				pe.line = tk.Position.Line
			}
			return nil, pe
		}
		return nil, &posError{0, "not valid YAML: " + err.Error()}
	}
	c := &conv{anchors: map[string]*node{}}
	var docs []*node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		n, err := c.conv(d.Body, 0)
		if err != nil {
			return nil, err
		}
		if !n.isNull() {
			docs = append(docs, n)
		}
	}
	switch len(docs) {
	case 0:
		return &node{kind: null, line: 1}, nil
	case 1:
		return docs[0], nil
	}
	return nil, &posError{docs[1].line, "the file must be one YAML document; remove the second ---"}
}

type conv struct {
	anchors map[string]*node
	nodes   int
}

// maxNodes bounds alias expansion ("billion laughs").
const maxNodes = 1_000_000

func lineOf(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func (c *conv) conv(n ast.Node, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &posError{lineOf(n), fmt.Sprintf("the YAML is nested more than %d levels deep", maxDepth)}
	}
	if c.nodes++; c.nodes > maxNodes {
		return nil, &posError{lineOf(n), "the YAML expands to too many values (through aliases)"}
	}
	switch n := n.(type) {
	case nil:
		return &node{kind: null}, nil
	case *ast.NullNode:
		return &node{kind: null, line: lineOf(n)}, nil
	case *ast.StringNode:
		return &node{kind: scalar, text: n.Value, str: true, line: lineOf(n)}, nil
	case *ast.LiteralNode:
		s := ""
		if n.Value != nil {
			s = n.Value.Value
		}
		return &node{kind: scalar, text: s, str: true, line: lineOf(n)}, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return &node{kind: scalar, text: n.GetToken().Value, line: lineOf(n)}, nil
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
			return nil, &posError{lineOf(n), fmt.Sprintf("alias *%s has no anchor before it", name)}
		}
		c.nodes += count(v)
		if c.nodes > maxNodes {
			return nil, &posError{lineOf(n), "the YAML expands to too many values (through aliases)"}
		}
		shared := *v
		shared.line = lineOf(n)
		return &shared, nil
	case *ast.SequenceNode:
		v := &node{kind: list, line: lineOf(n)}
		for _, it := range n.Values {
			iv, err := c.conv(it, depth+1)
			if err != nil {
				return nil, err
			}
			if iv.line == 0 {
				iv.line = v.line
			}
			v.items = append(v.items, iv)
		}
		return v, nil
	case *ast.MappingNode:
		return c.mapping(n.Values, lineOf(n), depth)
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{n}, lineOf(n), depth)
	case *ast.CommentGroupNode, *ast.CommentNode:
		return &node{kind: null, line: lineOf(n)}, nil
	}
	return nil, &posError{lineOf(n), fmt.Sprintf("unsupported YAML %s", n.Type())}
}

func count(n *node) int {
	total := 1
	for _, it := range n.items {
		total += count(it)
	}
	for _, v := range n.vals {
		total += count(v)
	}
	return total
}

func (c *conv) mapping(pairs []*ast.MappingValueNode, at, depth int) (*node, error) {
	v := &node{kind: object, line: at}
	if len(pairs) > 0 && pairs[0] != nil {
		v.line = lineOf(pairs[0].Key)
	}
	seen := map[string]bool{}
	var merges []*node
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
			return nil, &posError{lineOf(keyNode), "a mapping key must be text"}
		}
		if seen[k.text] {
			return nil, &posError{lineOf(keyNode), fmt.Sprintf("key %q repeats", k.text)}
		}
		seen[k.text] = true
		val, err := c.conv(p.Value, depth+1)
		if err != nil {
			return nil, err
		}
		if val.line == 0 {
			val.line = lineOf(keyNode)
		}
		v.keys = append(v.keys, k.text)
		v.klns = append(v.klns, lineOf(keyNode))
		v.vals = append(v.vals, val)
	}
	for _, m := range merges {
		sources := []*node{m}
		if m.kind == list {
			sources = m.items
		}
		for _, src := range sources {
			if src.kind != object {
				return nil, &posError{m.line, "<< must merge a mapping"}
			}
			for i, k := range src.keys {
				if !seen[k] {
					seen[k] = true
					v.keys = append(v.keys, k)
					v.klns = append(v.klns, src.klns[i])
					v.vals = append(v.vals, src.vals[i])
				}
			}
		}
	}
	return v, nil
}

// lineJSON writes n as JSON whose tokens sit on the lines they had in the
// YAML (newlines pad the text up to each key's line), so a parser that counts
// lines in JSON reports the run file's own line numbers.
type lineJSON struct {
	buf  bytes.Buffer
	line int
}

func (w *lineJSON) padTo(line int) {
	for w.line < line {
		w.buf.WriteByte('\n')
		w.line++
	}
}

func (w *lineJSON) write(n *node) {
	if n != nil && n.line > 0 {
		w.padTo(n.line)
	}
	switch {
	case n == nil || n.kind == null:
		w.buf.WriteString("null")
	case n.kind == list:
		w.buf.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.write(it)
		}
		w.buf.WriteByte(']')
	case n.kind == object:
		w.buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.padTo(n.klns[i])
			b, _ := json.Marshal(k)
			w.buf.Write(b)
			w.buf.WriteByte(':')
			w.write(n.vals[i])
		}
		w.buf.WriteByte('}')
	default:
		if !n.str {
			switch t := strings.TrimSpace(n.text); {
			case t == "true" || t == "false":
				w.buf.WriteString(t)
				return
			case json.Valid([]byte(t)) && isNumber(t):
				w.buf.WriteString(t)
				return
			}
		}
		b, _ := json.Marshal(n.text)
		w.buf.Write(b)
	}
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}
