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
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"tribunal/importer"
	"tribunal/secret"
	"tribunal/store"
)

// Problem is one thing wrong with a run file (or a task file it names).
type Problem struct {
	File    string
	Line    int // 1-based; 0 when the problem is about the whole file
	Field   string
	Message string
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is every problem of a run file, in file and line order.
type Problems []Problem

func (ps Problems) Error() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Error()
	}
	return strings.Join(parts, "\n")
}

// File is a validated run file.
type File struct {
	// Path is the file as named on the command line; Dir resolves task files.
	Path, Dir string
	// Name is the run's name; Description is for people.
	Name, Description string
	Tags              []string
	Providers         []Provider
	// Tasks are the inline tasks and the tasks of every task file, in file order.
	Tasks []store.TaskInput
	// Sources says where the tasks came from, for the summary.
	Sources []Source
	// Collection is where the run file's tasks are saved (created when missing).
	Collection string
	// Collections are stored collections whose tasks join the run.
	Collections []Named
	// Selection picks N tasks (top, bottom or random); TaskIDs hand-picks them.
	Selection *store.TaskSelection
	TaskIDs   []string
	Targets   []Target
	// Judges is the judge (one) or the panel (judges:); empty for checks-only runs.
	Judges       []Judge
	Metrics      []string
	Weights      map[string]float64
	Repeats      int
	SystemPrompt string
	Gates        Gates
	// Out is the default results directory (the --out flag wins).
	Out string

	lines map[string]int // RunInput field path → line
}

// Named is a name written at a line.
type Named struct {
	Name string
	Line int
}

// Source is one task source of the run file.
type Source struct {
	// File is the task file as written, empty for the inline tasks.
	File   string
	Format importer.Format
	Tasks  int
	Line   int
}

// Provider is a provider the run file uses. With only a name it refers to a
// stored provider; otherwise it creates or updates the stored one of that name.
type Provider struct {
	Name string
	Line int
	// RefOnly: the file gives only the name; the provider must exist.
	RefOnly bool
	Input   store.ProviderInput
	// Secrets names the headers whose values came from the environment.
	Secrets []string
}

// Target is a model under test.
type Target struct {
	Provider string
	Model    string
	Settings store.TargetSettings
	Tags     []string
	Line     int
}

// Label is "provider / model", as runs name their targets.
func (t Target) Label() string { return t.Provider + " / " + t.Model }

// Judge is a judge model, or a saved judge by Name alone.
type Judge struct {
	// Name is a saved judge's name; with Provider and Model it names the judge to create or update.
	Name     string
	Provider string
	Model    string
	Settings store.TargetSettings
	// Style names a stored judgement style, or StyleDef defines one (created or versioned).
	Style    string
	StyleDef *store.StyleInput
	// Personality and its description shape how the judge judges.
	Personality            string
	PersonalityDescription string
	Line                   int
}

// Saved reports whether the judge is a stored judge (by name, or with a
// style or personality) rather than a plain model with the default style.
func (j Judge) Saved() bool {
	return j.Provider == "" || j.Style != "" || j.StyleDef != nil || j.Personality != "" || j.PersonalityDescription != ""
}

// LineOf is the line of a RunInput field as the store names it in errors
// ("targets[1].settings.temperature"): the line of the longest known prefix.
func (f *File) LineOf(field string) int {
	for field != "" {
		if l, ok := f.lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i <= 0 {
			break
		}
		field = field[:i]
	}
	return 0
}

// Load reads and validates the run file at path. lookup reads environment
// variables (nil: the process environment). On problems it returns Problems.
func Load(path string, lookup func(string) (string, bool)) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Problems{{File: path, Message: fmt.Sprintf("cannot read the run file: %v", unwrapPath(err))}}
	}
	return Parse(path, data, filepath.Dir(path), lookup)
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Parse validates a run file's content; name labels problems and dir
// resolves the task files it names.
func Parse(name string, data []byte, dir string, lookup func(string) (string, bool)) (*File, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p := &reader{name: name, dir: dir, lookup: lookup}
	f := &File{Path: name, Dir: dir, lines: map[string]int{}}
	p.f = f
	// Line breaks as editors count them: CRLF, and a lone CR, are one line break.
	data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	root, err := parseTree(data)
	if err != nil {
		pe, _ := err.(*posError)
		if pe == nil {
			pe = &posError{msg: err.Error()}
		}
		return nil, Problems{{File: name, Line: pe.line, Message: pe.msg}}
	}
	p.file(root)
	if len(p.probs) > 0 {
		sort.SliceStable(p.probs, func(i, j int) bool {
			a, b := p.probs[i], p.probs[j]
			if (a.File == name) != (b.File == name) {
				return a.File == name // the run file's own problems first
			}
			if a.File != b.File {
				return a.File < b.File
			}
			return a.Line < b.Line
		})
		return nil, p.probs
	}
	return f, nil
}

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
	if bad != "" {
		p.errf(n.line, field, "%s", bad)
	}
	for _, v := range missing {
		p.errf(n.line, field, "environment variable %s is not set (write ${%s:-default} for a default)", v, v)
	}
	return out
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
	"task_ids", "targets", "judge", "judges", "metrics", "weights", "repeats", "system_prompt", "checks", "gates", "out"}

func (p *reader) file(root *node) {
	f := p.f
	if root.isNull() {
		p.errf(0, "", "the run file is empty; it needs at least targets and tasks (see README, \"Run files\")")
		return
	}
	if root.kind != object {
		p.errf(root.line, "", "a run file is a mapping (providers:, tasks:, targets:, …), not %s", root.describe())
		return
	}
	p.keys(root, "", topKeys...)
	f.Name = p.expand(root.get("name"), "name")
	f.Description = p.str(root.get("description"), "description")
	f.Tags = p.tagList(root.get("tags"), "tags", "tags")
	f.Out = p.str(root.get("out"), "out")
	p.providers(root.get("providers"))
	p.tasks(root.get("tasks"))
	f.Collection = p.str(root.get("collection"), "collection")
	if f.Collection == "" && len(f.Tasks) > 0 {
		f.Collection = "run file " + stem(p.name)
	}
	for i, c := range p.items(root.get("collections"), "collections") {
		if s := p.str(c, fmt.Sprintf("collections[%d]", i)); s != "" {
			f.Collections = append(f.Collections, Named{Name: s, Line: c.line})
		}
	}
	if n := root.get("tasks"); n == nil && len(f.Collections) == 0 {
		p.errf(root.line, "tasks", "the run has no tasks: add tasks: (inline or files) or collections: (stored collections)")
	}
	p.selection(root.get("select"))
	if n := root.get("task_ids"); n != nil {
		f.TaskIDs = p.strList(n, "task_ids", false)
		f.lines["task_ids"] = n.line
	}
	p.targets(root.get("targets"))
	p.judges(root)
	p.metrics(root)
	p.checks(root.get("checks"))
	p.gates(root.get("gates"))
}

func (p *reader) tagList(n *node, field, path string) []string {
	tags := p.strList(n, field, true)
	if n != nil {
		p.f.lines[path] = n.line
	}
	norm, err := store.NormTags(field, tags)
	if err != nil {
		p.errf(n.line, field, "%s", validationMessage(err)) // err implies tags, so n is set
	}
	return norm
}

func validationMessage(err error) string {
	if ve, ok := err.(*store.ValidationError); ok {
		return ve.Message
	}
	return err.Error()
}

// ---- providers ----

var providerKeys = []string{"name", "type", "base_url", "models_endpoint", "inference_endpoint", "headers", "concurrency",
	"requests_per_minute", "timeout_seconds", "connect_timeout_seconds", "prices"}

func (p *reader) providers(n *node) {
	seen := map[string]int{}
	for i, it := range p.items(n, "providers") {
		field := fmt.Sprintf("providers[%d]", i)
		if !p.mapping(it, field) {
			continue
		}
		p.keys(it, field, providerKeys...)
		pr := Provider{Line: it.line, Name: p.expand(it.get("name"), field+".name")}
		if pr.Name == "" {
			p.errf(it.line, field+".name", "is required")
			continue
		}
		field = fmt.Sprintf("providers[%q]", pr.Name)
		if prev, dup := seen[strings.ToLower(pr.Name)]; dup {
			p.errf(it.line, field, "is defined twice (first at line %d)", prev)
			continue
		}
		seen[strings.ToLower(pr.Name)] = it.line
		pr.RefOnly = len(it.keys) == 1
		if pr.RefOnly {
			p.f.Providers = append(p.f.Providers, pr)
			continue
		}
		in := store.ProviderInput{Name: pr.Name,
			Type:              providerType(p.str(it.get("type"), field+".type")),
			BaseURL:           p.expand(it.get("base_url"), field+".base_url"),
			ModelsEndpoint:    p.expand(it.get("models_endpoint"), field+".models_endpoint"),
			InferenceEndpoint: p.expand(it.get("inference_endpoint"), field+".inference_endpoint")}
		if in.BaseURL == "" && it.get("base_url").isNull() {
			p.errf(it.line, field+".base_url", "is required (or give only the name to use a stored provider as it is)")
		}
		for _, k := range []struct {
			key string
			dst *int
		}{{"concurrency", &in.Concurrency}, {"requests_per_minute", &in.RequestsPerMinute},
			{"timeout_seconds", &in.TimeoutSeconds}, {"connect_timeout_seconds", &in.ConnectTimeoutSeconds}} {
			if v, ok := p.integer(it.get(k.key), field+"."+k.key); ok {
				*k.dst = v
			}
		}
		in.Headers, pr.Secrets = p.headers(it.get("headers"), field+".headers")
		in.Prices = p.prices(it.get("prices"), field+".prices")
		// The store's own checks, with the line of the field they name.
		check := in
		check.Headers = append([]store.Header(nil), in.Headers...)
		check.Prices = append([]store.ProviderPrice(nil), in.Prices...)
		if err := check.Normalize(); err != nil {
			line := it.line
			if ve, ok := err.(*store.ValidationError); ok {
				key := ve.Field
				if j := strings.IndexAny(key, ".["); j >= 0 {
					key = key[:j]
				}
				if v := it.get(key); v != nil && v.line > 0 {
					line = v.line
				}
				p.errf(line, field+"."+ve.Field, "%s", ve.Message)
			} else {
				p.errf(line, field, "%v", err)
			}
		}
		pr.Input = in
		p.f.Providers = append(p.f.Providers, pr)
	}
}

// providerType reads a provider type loosely: "openrouter", "lm-studio",
// "custom" and the API's names (OPENAI, OLLAMA, …) all work.
func providerType(s string) store.ProviderType {
	switch k := looseKey(s); k {
	case "":
		return ""
	case "lmstudio":
		return store.ProviderLMStudio
	case "custom", "openaicompatible", "customopenaicompatible":
		return store.ProviderCustom
	default:
		for _, t := range store.ProviderTypes {
			if looseKey(string(t)) == k {
				return t
			}
		}
	}
	return store.ProviderType(strings.ToUpper(s))
}

// secretHeader reports whether a header usually carries a credential: those
// that always do (secret.CredentialHeader) and any that looks like one.
func secretHeader(key string) bool {
	k := strings.ToLower(key)
	return secret.CredentialHeader(k) || strings.Contains(k, "authorization") || strings.Contains(k, "key") ||
		strings.Contains(k, "token") || strings.Contains(k, "secret") || strings.Contains(k, "password")
}

func (p *reader) headers(n *node, field string) ([]store.Header, []string) {
	type raw struct {
		key    string
		val    *node
		secret *bool
		line   int
	}
	var hs []raw
	switch {
	case n.isNull():
		return nil, nil
	case n.kind == object:
		for i, k := range n.keys {
			hs = append(hs, raw{key: k, val: n.vals[i], line: n.klns[i]})
		}
	case n.kind == list:
		for i, it := range n.items {
			f := fmt.Sprintf("%s[%d]", field, i)
			if !p.mapping(it, f) {
				continue
			}
			p.keys(it, f, "key", "value", "secret")
			r := raw{key: p.str(it.get("key"), f+".key"), val: it.get("value"), line: it.line}
			if s := it.get("secret"); s != nil {
				b := strings.EqualFold(p.str(s, f+".secret"), "true")
				r.secret = &b
			}
			hs = append(hs, r)
		}
	default:
		p.errf(n.line, field, "must be a mapping (Header: value) or a list of {key, value}, not %s", n.describe())
		return nil, nil
	}
	var out []store.Header
	var secrets []string
	for _, h := range hs {
		f := field + "." + h.key
		if h.val.isNull() || h.val.kind != scalar {
			p.errf(h.line, f, "needs a text value")
			continue
		}
		rawVal := strings.ReplaceAll(h.val.text, "$${", "") // escaped: not references
		refs := envRefs.FindAllStringSubmatch(rawVal, -1)
		secretish := secretHeader(h.key) || (h.secret != nil && *h.secret)
		if secretish && len(refs) == 0 && !strings.Contains(rawVal, "${") {
			p.errf(h.val.line, f, "a secret header takes its value from the environment: write \"${%s}\" instead of the literal value (never commit secrets)",
				envName(h.key))
			continue
		}
		val := p.expand(h.val, f)
		isSecret := secretish || len(refs) > 0
		if h.secret != nil && !*h.secret && secretish {
			isSecret = true // a credential is always stored encrypted
		}
		if isSecret {
			secrets = append(secrets, h.key)
		}
		out = append(out, store.Header{Key: h.key, Value: val, IsSecret: isSecret})
	}
	return out, secrets
}

// envName suggests a variable name for a header: Authorization → API_KEY.
func envName(header string) string {
	if strings.EqualFold(header, "authorization") {
		return "API_KEY"
	}
	return strings.ToUpper(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(header, "_"))
}

func (p *reader) prices(n *node, field string) []store.ProviderPrice {
	if n.isNull() {
		return nil
	}
	out := []store.ProviderPrice{}
	read := func(model string, v *node, f string) {
		if !p.mapping(v, f) {
			return
		}
		p.keys(v, f, "model", "input", "output", "input_per_mtok", "output_per_mtok")
		pr := store.ProviderPrice{Model: model}
		in, ok1 := p.num(cmpNode(v.get("input_per_mtok"), v.get("input")), f+".input_per_mtok")
		o, ok2 := p.num(cmpNode(v.get("output_per_mtok"), v.get("output")), f+".output_per_mtok")
		if !ok1 || !ok2 {
			p.errf(v.line, f, "needs input and output prices in USD per million tokens")
			return
		}
		pr.InputPerMTok, pr.OutputPerMTok = in, o
		out = append(out, pr)
	}
	switch n.kind {
	case object:
		for i, k := range n.keys {
			read(k, n.vals[i], field+"."+k)
		}
	case list:
		for i, it := range n.items {
			f := fmt.Sprintf("%s[%d]", field, i)
			m := p.str(it.get("model"), f+".model")
			if m == "" {
				p.errf(it.line, f+".model", "is required")
				continue
			}
			read(m, it, f)
		}
	default:
		p.errf(n.line, field, "must be a mapping of model: {input, output} (USD per million tokens)")
	}
	return out
}

func cmpNode(a, b *node) *node {
	if a != nil {
		return a
	}
	return b
}

// ---- tasks ----

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

func (p *reader) settings(n *node, field, path string) store.TargetSettings {
	var s store.TargetSettings
	if !p.mapping(n, field) {
		return s
	}
	p.f.lines[path] = n.line
	p.keys(n, field, settingKeys...)
	if v, ok := p.num(n.get("temperature"), field+".temperature"); ok {
		s.Temperature = &v
	}
	if v, ok := p.integer(n.get("max_tokens"), field+".max_tokens"); ok {
		mt := int64(v)
		s.MaxTokens = &mt
	}
	s.SystemPrompt = p.str(n.get("system_prompt"), field+".system_prompt")
	s.ReasoningEffort = strings.ToLower(p.str(n.get("reasoning_effort"), field+".reasoning_effort"))
	if err := s.Validate(field); err != nil {
		line := n.line
		if ve, ok := err.(*store.ValidationError); ok {
			if v := n.get(ve.Field[strings.LastIndex(ve.Field, ".")+1:]); v != nil {
				line = v.line
			}
			p.errf(line, ve.Field, "%s", ve.Message)
		}
	}
	return s
}

func (p *reader) providerRef(n *node, field string) string {
	name := p.expand(n, field)
	if name == "" {
		return ""
	}
	for _, pr := range p.f.Providers {
		if strings.EqualFold(pr.Name, name) {
			return pr.Name
		}
	}
	names := make([]string, len(p.f.Providers))
	for i, pr := range p.f.Providers {
		names[i] = pr.Name
	}
	msg := fmt.Sprintf("no provider %q in providers:", name)
	if s := suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	p.errf(n.line, field, "%s; to use a stored provider as it is, list it with its name alone (- name: %s)", msg, name)
	return ""
}

func (p *reader) targets(n *node) {
	if n.isNull() {
		p.errf(0, "targets", "is required: the models to benchmark, e.g. - {provider: local, model: llama3.1:8b}")
		return
	}
	type key struct{ provider, model string }
	seen := map[key]int{}
	for i, it := range p.items(n, "targets") {
		field := fmt.Sprintf("targets[%d]", i)
		if !p.mapping(it, field) {
			continue
		}
		p.keys(it, field, "provider", "model", "models", "settings", "tags")
		provider := p.providerRef(it.get("provider"), field+".provider")
		if it.get("provider").isNull() {
			p.errf(it.line, field+".provider", "is required")
		}
		var models []*node
		switch m, ms := it.get("model"), it.get("models"); {
		case m != nil && ms != nil:
			p.errf(it.line, field, "give model or models, not both")
		case m != nil:
			models = []*node{m}
		case ms != nil:
			models = p.items(ms, field+".models")
		default:
			p.errf(it.line, field+".model", "is required")
		}
		for _, mn := range models {
			idx := len(p.f.Targets)
			path := fmt.Sprintf("targets[%d]", idx)
			t := Target{Provider: provider, Model: p.expand(mn, field+".model"), Line: mn.line}
			p.f.lines[path] = it.line
			p.f.lines[path+".model"] = mn.line
			if v := it.get("provider"); v != nil {
				p.f.lines[path+".provider_id"] = v.line
			}
			if t.Model == "" {
				if mn.kind == scalar {
					p.errf(mn.line, field+".model", "is empty")
				}
				continue
			}
			if s := it.get("settings"); s != nil {
				t.Settings = p.settings(s, field+".settings", path+".settings")
			}
			t.Tags = p.tagList(it.get("tags"), field+".tags", path+".tags")
			k := key{strings.ToLower(provider), t.Model}
			if prev, dup := seen[k]; dup && provider != "" {
				p.errf(mn.line, field, "model %q of provider %q is listed twice (first at line %d)", t.Model, provider, prev)
				continue
			}
			seen[k] = mn.line
			p.f.Targets = append(p.f.Targets, t)
		}
	}
	if len(p.f.Targets) == 0 && n.kind == list && len(p.probs) == 0 {
		p.errf(n.line, "targets", "pick at least one model to benchmark")
	}
}

var judgeKeys = []string{"name", "provider", "model", "settings", "style", "personality", "personality_description"}

func (p *reader) judges(root *node) {
	one, many := root.get("judge"), root.get("judges")
	switch {
	case one != nil && many != nil:
		p.errf(many.line, "judges", "give judge (one model) or judges (a panel), not both")
		return
	case one != nil:
		if one.kind == scalar && (strings.EqualFold(one.text, "none") || strings.EqualFold(one.text, "false")) {
			return // explicitly no judge: checks only
		}
		if j, ok := p.judge(one, "judge", "judge"); ok {
			p.f.Judges = append(p.f.Judges, j)
		}
	case many != nil:
		for i, it := range p.items(many, "judges") {
			if j, ok := p.judge(it, fmt.Sprintf("judges[%d]", i), fmt.Sprintf("judge_ids[%d]", i)); ok {
				p.f.Judges = append(p.f.Judges, j)
			}
		}
	}
}

func (p *reader) judge(n *node, field, path string) (Judge, bool) {
	j := Judge{Line: n.line}
	p.f.lines[path] = n.line
	if n.kind == scalar { // judge: "Strict Qwen" — a saved judge
		j.Name = p.str(n, field)
		return j, j.Name != ""
	}
	if !p.mapping(n, field) {
		return j, false
	}
	p.keys(n, field, judgeKeys...)
	j.Name = p.str(n.get("name"), field+".name")
	if v := n.get("provider"); v != nil {
		j.Provider = p.providerRef(v, field+".provider")
		p.f.lines[path+".provider_id"] = v.line
	}
	j.Model = p.expand(n.get("model"), field+".model")
	if v := n.get("model"); v != nil {
		p.f.lines[path+".model"] = v.line
	}
	hasModel := n.get("provider") != nil || n.get("model") != nil
	switch {
	case !hasModel && j.Name == "":
		p.errf(n.line, field, "needs provider and model (or the name of a saved judge)")
		return j, false
	case hasModel && (n.get("provider").isNull() || j.Model == ""):
		if n.get("provider").isNull() {
			p.errf(n.line, field+".provider", "is required with model")
		}
		if j.Model == "" && n.get("model").isNull() {
			p.errf(n.line, field+".model", "is required with provider")
		}
		return j, false
	case !hasModel && (n.get("style") != nil || n.get("personality") != nil || n.get("settings") != nil):
		p.errf(n.line, field, "a saved judge by name takes no style, personality or settings; add provider and model to define it here")
		return j, false
	}
	if s := n.get("settings"); s != nil {
		j.Settings = p.settings(s, field+".settings", path+".settings")
	}
	if s := n.get("style"); s != nil {
		if s.kind == object {
			j.StyleDef = p.styleDef(s, field+".style")
		} else {
			j.Style = p.str(s, field+".style")
		}
	}
	if pn := n.get("personality"); pn != nil {
		if pn.kind == object {
			p.keys(pn, field+".personality", "name", "description")
			j.Personality = p.str(pn.get("name"), field+".personality.name")
			j.PersonalityDescription = p.str(pn.get("description"), field+".personality.description")
		} else {
			j.Personality = p.str(pn, field+".personality")
		}
	}
	if d := n.get("personality_description"); d != nil {
		j.PersonalityDescription = p.str(d, field+".personality_description")
	}
	return j, true
}

func (p *reader) styleDef(n *node, field string) *store.StyleInput {
	p.keys(n, field, "name", "scale_min", "scale_max", "metrics", "prompt_template")
	in := &store.StyleInput{Name: p.str(n.get("name"), field+".name"), PromptTemplate: p.str(n.get("prompt_template"), field+".prompt_template")}
	if in.Name == "" {
		p.errf(n.line, field+".name", "is required: a style is saved under its name")
	}
	if v, ok := p.integer(n.get("scale_min"), field+".scale_min"); ok {
		in.ScaleMin = v
	}
	if v, ok := p.integer(n.get("scale_max"), field+".scale_max"); ok {
		in.ScaleMax = v
	}
	for i, m := range p.items(n.get("metrics"), field+".metrics") {
		f := fmt.Sprintf("%s.metrics[%d]", field, i)
		if m.kind == scalar {
			in.Metrics = append(in.Metrics, store.Metric{Name: p.str(m, f), Weight: 1})
			continue
		}
		if !p.mapping(m, f) {
			continue
		}
		p.keys(m, f, "name", "description", "weight")
		mt := store.Metric{Name: p.str(m.get("name"), f+".name"), Description: p.str(m.get("description"), f+".description"), Weight: 1}
		if w, ok := p.num(m.get("weight"), f+".weight"); ok {
			mt.Weight = w
		}
		in.Metrics = append(in.Metrics, mt)
	}
	check := *in
	check.Metrics = append([]store.Metric(nil), in.Metrics...)
	// A run file is read offline; the render's own timeout bounds the check.
	if err := check.Normalize(context.Background()); err != nil {
		p.errf(n.line, field, "%s", err.Error())
	}
	return in
}

// ---- metrics, checks ----

func (p *reader) metrics(root *node) {
	f := p.f
	if n := root.get("metrics"); n != nil {
		f.Metrics = p.strList(n, "metrics", false)
		f.lines["metrics"] = n.line
		if n.kind == list {
			for i, it := range n.items {
				f.lines[fmt.Sprintf("metrics[%d]", i)] = it.line
			}
		}
	}
	if n := root.get("weights"); n != nil && p.mapping(n, "weights") {
		f.lines["weights"] = n.line
		f.Weights = map[string]float64{}
		for i, k := range n.keys {
			if v, ok := p.num(n.vals[i], "weights."+k); ok {
				f.Weights[k] = v
			}
		}
	}
	if n := root.get("repeats"); n != nil {
		f.lines["repeats"] = n.line
		if v, ok := p.integer(n, "repeats"); ok {
			if v < 1 || v > 100 {
				p.errf(n.line, "repeats", "must be within 1…100")
			}
			f.Repeats = v
		}
	}
	if n := root.get("system_prompt"); n != nil {
		f.lines["system_prompt"] = n.line
		f.SystemPrompt = p.str(n, "system_prompt")
	}
	checksOnly := len(f.Metrics) > 0
	for _, m := range f.Metrics {
		checksOnly = checksOnly && strings.HasPrefix(m, "check_")
	}
	for i, m := range f.Metrics {
		if t, ok := strings.CutPrefix(m, "check_"); ok && !slices.Contains(store.CheckTypes, t) {
			p.errf(f.LineOf(fmt.Sprintf("metrics[%d]", i)), fmt.Sprintf("metrics[%d]", i), "unknown check %q (checks: %s)", t, strings.Join(store.CheckTypes, ", "))
		}
	}
	if len(f.Judges) == 0 && !checksOnly && root.get("judge") == nil && root.get("judges") == nil {
		p.errf(root.line, "judge", "is required: judge: {provider: …, model: …}, a panel (judges:), or metrics: [check_…] for a run scored by checks alone")
	}
}

func (p *reader) checks(n *node) {
	if n.isNull() {
		return
	}
	var cs []store.Check
	for i, it := range p.items(n, "checks") {
		f := fmt.Sprintf("checks[%d]", i)
		c := store.Check{}
		switch it.kind {
		case scalar:
			c.Type = p.str(it, f)
		case object:
			p.keys(it, f, "type", "value")
			c.Type = p.str(it.get("type"), f+".type")
			if v := it.get("value"); v != nil {
				if v.kind == scalar {
					c.Value = v.text
				} else {
					w := &lineJSON{line: math.MaxInt} // one line: no padding
					w.write(v)
					c.Value = w.buf.String()
				}
			}
		default:
			p.errf(it.line, f, "must be a check type or {type, value}")
			continue
		}
		if !slices.Contains(store.CheckTypes, c.Type) {
			p.errf(it.line, f+".type", "unknown check %q (checks: %s)", c.Type, strings.Join(store.CheckTypes, ", "))
			continue
		}
		cs = append(cs, c)
	}
	// Run-level checks apply to every task that has no check of that type.
	var bad []string
	for i := range p.f.Tasks {
		t := &p.f.Tasks[i]
		added := false
		for _, c := range cs {
			if !slices.ContainsFunc(t.Checks, func(x store.Check) bool { return x.Type == c.Type }) {
				t.Checks = append(t.Checks, c)
				added = true
			}
		}
		if !added {
			continue
		}
		if err := t.Normalize(); err != nil {
			bad = append(bad, fmt.Sprintf("%s (%s)", t.TaskKey, validationMessage(err)))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("and %d more", len(bad)-10))
		}
		p.errf(n.line, "checks", "cannot apply to task %s", strings.Join(bad, "; "))
	}
}

// ---- helpers ----

// looseKey folds a key as the importer matches them: case, spaces, dashes,
// underscores and dots ignored.
func looseKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.':
			return -1
		}
		return unicode.ToLower(r)
	}, k)
}

// stem is a file's name without directories and extension.
func stem(name string) string {
	b := filepath.Base(name)
	return cmp.Or(strings.TrimSuffix(b, filepath.Ext(b)), "run")
}

// suggest returns the allowed word closest to s when it is close enough to be a typo.
func suggest(s string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := distance(strings.ToLower(s), strings.ToLower(a)); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// distance is the Levenshtein distance (bounded inputs: keys and names).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
