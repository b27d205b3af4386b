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
	"math"
	"slices"
	"strconv"
	"strings"

	"tribunal/store"
)

type reader struct {
	name   string
	dir    string
	lookup func(string) (string, bool)
	probs  Problems
	f      *File
}

func (p *reader) errf(line int, field, format string, args ...any) {
	p.probs = append(p.probs, Problem{File: p.name, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// keys reports keys of n outside allowed, suggesting the nearest allowed one.
func (p *reader) keys(n *node, field string, allowed ...string) {
	for i, k := range n.keys {
		if !slices.Contains(allowed, k) {
			msg := fmt.Sprintf("unknown key %q", k)
			if s := suggest(k, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (known: " + strings.Join(allowed, ", ") + ")"
			}
			p.errf(n.klns[i], field, "%s", msg)
		}
	}
}

// str reads a scalar as text; a list or mapping is a problem.
func (p *reader) str(n *node, field string) string {
	if n.isNull() {
		return ""
	}
	if n.kind != scalar {
		p.errf(n.line, field, "must be text, not %s", n.describe())
		return ""
	}
	return strings.TrimSpace(n.text)
}

// expand reads text and replaces ${VAR} references from the environment.
func (p *reader) expand(n *node, field string) string {
	s := p.str(n, field)
	out, missing, bad := expandEnv(s, p.lookup)
	if bad != "" || len(missing) > 0 { // only text has them, so n is not nil
		p.envProblems(n.line, field, missing, bad)
	}
	return out
}

// envProblems reports what expandEnv found wrong in a field.
func (p *reader) envProblems(line int, field string, missing []string, bad string) {
	if bad != "" {
		p.errf(line, field, "%s", bad)
	}
	for _, v := range missing {
		p.errf(line, field, "environment variable %s is not set (write ${%s:-default} for a default)", v, v)
	}
}

func (p *reader) num(n *node, field string) (float64, bool) {
	if n.isNull() {
		return 0, false
	}
	if n.kind != scalar {
		p.errf(n.line, field, "must be a number, not %s", n.describe())
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(n.text), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.errf(n.line, field, "must be a number, not %q", n.text)
		return 0, false
	}
	return v, true
}

func (p *reader) integer(n *node, field string) (int, bool) {
	v, ok := p.num(n, field)
	if !ok {
		return 0, false
	}
	if v != math.Trunc(v) || math.Abs(v) > 1e9 {
		p.errf(n.line, field, "must be a whole number, not %s", n.text)
		return 0, false
	}
	return int(v), true
}

// strList reads a list of text, or one text (comma-separated for tags).
func (p *reader) strList(n *node, field string, split bool) []string {
	switch {
	case n.isNull():
		return nil
	case n.kind == scalar:
		if split {
			return store.ParseTags(n.text)
		}
		return []string{strings.TrimSpace(n.text)}
	case n.kind == list:
		out := make([]string, 0, len(n.items))
		for i, it := range n.items {
			if s := p.str(it, fmt.Sprintf("%s[%d]", field, i)); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	p.errf(n.line, field, "must be a list, not %s", n.describe())
	return nil
}

func (p *reader) mapping(n *node, field string) bool {
	if n.isNull() {
		return false
	}
	if n.kind != object {
		p.errf(n.line, field, "must be a mapping (key: value), not %s", n.describe())
		return false
	}
	return true
}

func (p *reader) items(n *node, field string) []*node {
	switch {
	case n.isNull():
		return nil
	case n.kind == list:
		return n.items
	}
	p.errf(n.line, field, "must be a list, not %s", n.describe())
	return nil
}

var topKeys = []string{"name", "description", "tags", "providers", "tasks", "collection", "collections", "select",
	"task_ids", "targets", "judge", "judges", "metrics", "weights", "repeats", "system_prompt", "max_cost_usd", "pipeline", "checks", "gates", "out",
	"usecase", "category", "models"}
