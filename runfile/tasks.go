// Package runfile reads and validates run files: YAML that describes a whole
// benchmark (providers, tasks, targets, judges, checks, metrics and gates)
// for `tribunal run`. Validation reports every problem at once, each with
// its line, and never talks to a database or a provider: names of stored
// providers, judges, styles and collections are resolved when the run starts.
//
// Secrets never sit in a run file: header values are ${ENV_VAR} references
// (with an optional ${VAR:-default}); a literal value in a secret-looking
// header (Authorization, *key*, *token*, *secret*, *password*, Cookie) is a
// problem, and so is a reference to a variable that is not set.
package runfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tribunal/importer"
	"tribunal/store"
)

func (p *reader) tasks(n *node) {
	var inline []*node
	type origin struct {
		what string
		line int
	}
	seen := map[string]origin{}
	add := func(ts []store.TaskInput, what string, line int) {
		for _, t := range ts {
			if prev, dup := seen[t.TaskKey]; dup {
				p.errf(line, "tasks", "task_id %q comes twice: from %s and from %s (line %d)", t.TaskKey, what, prev.what, prev.line)
				continue
			}
			seen[t.TaskKey] = origin{what, line}
			p.f.Tasks = append(p.f.Tasks, t)
		}
	}
	var inlineAt int
	for i, it := range p.items(n, "tasks") {
		field := fmt.Sprintf("tasks[%d]", i)
		if it.kind == object && it.get("file") != nil {
			p.keys(it, field, "file", "format")
			p.taskFile(it, field, add)
			continue
		}
		if it.kind == scalar && it.str {
			// "- tasks.csv" is a file too.
			p.taskFile(&node{kind: object, keys: []string{"file"}, klns: []int{it.line}, vals: []*node{it}, line: it.line}, field, add)
			continue
		}
		if inlineAt == 0 {
			inlineAt = len(p.f.Sources)
			p.f.Sources = append(p.f.Sources, Source{Line: it.line})
		}
		inline = append(inline, it)
	}
	if len(inline) == 0 {
		return
	}
	// The inline tasks go through the importer like a YAML task file, as JSON
	// whose lines are the run file's, so its row errors carry our lines.
	w := &lineJSON{line: 1}
	w.buf.WriteString(`{"tasks":[`)
	for i, it := range inline {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.write(it)
	}
	w.buf.WriteString("]}")
	ts, err := importer.Parse(filepath.Base(p.name), w.buf.Bytes(), importer.FormatYAML)
	if err != nil {
		// A problem the importer places on the task's first line (a Normalize
		// error) goes to the line of the key it names, when the task has it.
		if es, ok := err.(importer.Errors); ok {
			for i, e := range es {
				if e.Row < 1 || e.Row > len(inline) || e.Field == "" {
					continue
				}
				key := e.Field
				if j := strings.IndexAny(key, ".["); j > 0 {
					key = key[:j]
				}
				n := inline[e.Row-1]
				for k, name := range n.keys {
					if looseKey(name) == looseKey(key) && n.klns[k] > e.Line {
						es[i].Line = n.klns[k]
					}
				}
			}
			err = es
		}
		p.importErrors(err, p.name, inline[0].line)
		return
	}
	p.f.Sources[inlineAt].Tasks = len(ts)
	add(ts, "the inline tasks", inline[0].line)
}

func (p *reader) importErrors(err error, file string, line int) {
	if es, ok := err.(importer.Errors); ok {
		for _, e := range es {
			l := e.Line
			if l == 0 && file == p.name {
				l = line
			}
			field := e.Field
			if e.Row > 0 && file != p.name {
				field = strings.TrimPrefix(fmt.Sprintf("row %d %s", e.Row, field), " ")
			}
			p.probs = append(p.probs, Problem{File: file, Line: l, Field: strings.TrimSpace(field), Message: e.Message})
		}
		return
	}
	p.probs = append(p.probs, Problem{File: file, Line: line, Message: err.Error()})
}

func (p *reader) taskFile(it *node, field string, add func([]store.TaskInput, string, int)) {
	name := p.str(it.get("file"), field+".file")
	if name == "" {
		p.errf(it.line, field+".file", "is required")
		return
	}
	format := importer.Format(strings.ToLower(p.str(it.get("format"), field+".format")))
	if format != "" && !slices.Contains(importer.Formats, format) {
		p.errf(it.get("format").line, field+".format", "unknown format %q (one of csv, jsonl, yaml, promptfoo, mtbench, openai_evals)", format)
		return
	}
	pattern := name
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(p.dir, pattern)
	}
	paths := []string{pattern}
	if strings.ContainsAny(name, "*?[") {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			p.errf(it.get("file").line, field+".file", "no file matches %q", name)
			return
		}
		paths = m
	}
	for _, path := range paths {
		shown := path
		if rel, err := filepath.Rel(p.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			shown = rel
		}
		data, err := os.ReadFile(path)
		if err != nil {
			p.errf(it.get("file").line, field+".file", "cannot read %s: %v", shown, unwrapPath(err))
			continue
		}
		ts, f, err := importer.ParseFile(filepath.Base(path), data, format)
		if err != nil {
			p.importErrors(err, shown, 0)
			p.errf(it.get("file").line, field+".file", "%s has problems (listed with its own line numbers); nothing is imported", shown)
			continue
		}
		p.f.Sources = append(p.f.Sources, Source{File: shown, Format: f, Tasks: len(ts), Line: it.line})
		add(ts, shown, it.line)
	}
}

func (p *reader) selection(n *node) {
	if n.isNull() {
		return
	}
	sel := &store.TaskSelection{}
	p.f.lines["task_selection"] = n.line
	switch n.kind {
	case scalar: // select: all
		sel.Mode = strings.ToLower(p.str(n, "select"))
	case object:
		p.keys(n, "select", "mode", "n", "seed")
		sel.Mode = strings.ToLower(p.str(n.get("mode"), "select.mode"))
		if v, ok := p.integer(n.get("n"), "select.n"); ok {
			sel.N = v
		}
		if v, ok := p.integer(n.get("seed"), "select.seed"); ok {
			sel.Seed = int64(v)
		}
		for _, k := range []string{"mode", "n", "seed"} {
			if v := n.get(k); v != nil {
				p.f.lines["task_selection."+k] = v.line
			}
		}
	default:
		p.errf(n.line, "select", "must be all, or {mode: top|bottom|random, n: N, seed: S}")
		return
	}
	switch sel.Mode {
	case "", store.SelectAll:
		sel.Mode = store.SelectAll
	case store.SelectTop, store.SelectBottom, store.SelectRandom:
		if sel.N < 1 {
			p.errf(n.line, "select.n", "pick at least 1 task")
		}
	default:
		p.errf(n.line, "select.mode", "must be all, top, bottom or random, not %q", sel.Mode)
	}
	p.f.Selection = sel
}

// ---- targets and judges ----

var settingKeys = []string{"temperature", "max_tokens", "system_prompt", "reasoning_effort"}
