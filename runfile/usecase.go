package runfile

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"tribunal/store"
)

// useCaseFields are a use-case file's own top-level keys (seed 004 §11);
// every other top-level key is a constraint.
var useCaseFields = []string{"name", "goal", "description", "notes", "constraints", "default_judge_model",
	"default_candidate_models", "cost_priority", "context_needed_tokens"}

// useCaseKeys are the top-level keys only a use-case file has: neither a run
// file nor a task file uses them.
var useCaseKeys = regexp.MustCompile(`(?m)^(goal|default_judge_model|default_candidate_models|cost_priority|context_needed_tokens)[ \t]*:`)

// IsUseCaseFile reports whether a YAML file is a use-case file: it has one
// of the keys only use cases have (goal, default_judge_model,
// default_candidate_models, cost_priority, context_needed_tokens) at its top
// level.
func IsUseCaseFile(path string, data []byte) bool {
	switch strings.ToLower(path[strings.LastIndex(path, ".")+1:]) {
	case "yaml", "yml":
		return useCaseKeys.Match(data)
	}
	return false
}

// ParseUseCase reads a use-case file: the seed's fields at the top level,
// and constraints under constraints: or as any other top-level scalar
// (chunk_min: 500). ${VAR} and ${VAR:-default} expand in every text, as in
// run files. Every problem is reported at once, as Problems with the file
// and line.
func ParseUseCase(name string, data []byte, lookup func(string) (string, bool)) (store.UseCaseInput, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p := &reader{name: name, lookup: lookup}
	data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	root, err := parseTree(data)
	if err != nil {
		pe, _ := err.(*posError)
		if pe == nil {
			pe = &posError{msg: err.Error()}
		}
		return store.UseCaseInput{}, Problems{{File: name, Line: pe.line, Message: pe.msg}}
	}
	if root.kind != object {
		return store.UseCaseInput{}, Problems{{File: name, Line: root.line,
			Message: "a use-case file is a mapping with at least name: (and goal:, constraints…)"}}
	}
	in, lines := p.useCase(root)
	if len(p.probs) == 0 {
		if err := in.Normalize(); err != nil {
			var ve *store.ValidationError
			if !errors.As(err, &ve) {
				return store.UseCaseInput{}, err
			}
			field, _, _ := strings.Cut(ve.Field, ".")
			if strings.HasPrefix(ve.Field, "constraints.") {
				field = strings.TrimPrefix(ve.Field, "constraints.")
			}
			p.errf(lines[field], ve.Field, "%s", ve.Message)
		}
	}
	if len(p.probs) > 0 {
		sort.SliceStable(p.probs, func(i, j int) bool { return p.probs[i].Line < p.probs[j].Line })
		return store.UseCaseInput{}, p.probs
	}
	return in, nil
}

// useCase reads the fields, and where each key was written.
func (p *reader) useCase(root *node) (store.UseCaseInput, map[string]int) {
	in := store.UseCaseInput{Constraints: map[string]any{}}
	lines := map[string]int{}
	for i, k := range root.keys {
		v, line := root.vals[i], root.klns[i]
		lines[k] = line
		switch k {
		case "name":
			in.Name = p.expand(v, k)
		case "goal":
			in.Goal = p.expand(v, k)
		case "description":
			in.Description = p.expand(v, k)
		case "notes":
			in.Notes = p.expand(v, k)
		case "default_judge_model":
			in.DefaultJudgeModel = p.expand(v, k)
		case "cost_priority":
			in.CostPriority = p.expand(v, k)
		case "context_needed_tokens":
			if n, ok := p.integer(v, k); ok {
				in.ContextNeededTokens = int64(n)
			}
		case "default_candidate_models":
			for j, m := range p.strList(v, k, false) {
				out, missing, bad := expandEnv(m, p.lookup)
				p.envProblems(v.line, k+"["+strconv.Itoa(j)+"]", missing, bad)
				in.DefaultCandidateModels = append(in.DefaultCandidateModels, out)
			}
		case "constraints":
			if !p.mapping(v, k) {
				continue
			}
			for j, ck := range v.keys {
				lines[ck] = v.klns[j]
				p.constraint(in.Constraints, ck, v.vals[j], v.klns[j], "constraints."+ck)
			}
		default:
			if v.kind != scalar && !v.isNull() {
				p.errf(line, k, "%s is not a field of a use case (%s), and a constraint must be a number, true/false or text",
					v.describe(), strings.Join(useCaseFields, ", "))
				continue
			}
			p.constraint(in.Constraints, k, v, line, k)
		}
	}
	if _, ok := lines["name"]; !ok {
		p.errf(0, "name", "is required")
	}
	return in, lines
}

// constraint reads one scalar constraint: a number, a boolean or text.
func (p *reader) constraint(c map[string]any, key string, v *node, line int, field string) {
	if _, dup := c[key]; dup {
		p.errf(line, field, "is given twice (constraints: and the top level)")
		return
	}
	switch {
	case v.isNull():
		p.errf(line, field, "has no value")
	case v.kind != scalar:
		p.errf(line, field, "must be a number, true/false or text, not %s", v.describe())
	case v.str:
		c[key] = p.expand(v, field)
	case strings.EqualFold(v.text, "true") || strings.EqualFold(v.text, "false"):
		c[key] = strings.EqualFold(v.text, "true")
	default:
		if f, err := strconv.ParseFloat(v.text, 64); err == nil {
			c[key] = f
		} else {
			c[key] = strings.TrimSpace(v.text)
		}
	}
}
