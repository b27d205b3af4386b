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
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"tribunal/importer"
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
	// AutoModels (models: auto): the top AutoModelCount models recommended
	// for UseCase (or Category) join Targets when the run starts.
	AutoModels bool
	// Judges is the judge (one) or the panel (judges:); empty for checks-only
	// runs, and for a run whose judge is its use case's default_judge_model
	// (resolved when the run starts).
	Judges []Judge
	// UseCase names what the run is for: the file's tasks that name no use
	// case join it, its default_judge_model judges a run without judge:, and
	// models: auto reads its recommendation. Category scopes models: auto
	// instead; it picks no tasks.
	UseCase      Named
	Category     string
	Metrics      []string
	Weights      map[string]float64
	Repeats      int
	SystemPrompt string
	// Pipeline judges answers as they come in (store.RunOptions.Pipeline).
	Pipeline bool
	// MaxCostUSD is the run's budget: the run pauses when its spend reaches it.
	MaxCostUSD *float64
	Gates      Gates
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

// Target is a model under test, or a saved agent by name (Agent).
type Target struct {
	Provider string
	Model    string
	Settings store.TargetSettings
	// Agent names a saved agent; AgentID is its id once ResolveAgents found it.
	Agent   string
	AgentID int64
	Tags    []string
	// Version is the model's version as the file names it (free text); without
	// it the run records the model id the provider reports.
	Version string
	Line    int
	field   string // where an agent's name was written, for ResolveAgents' problems
}

// Label is "provider / model", as runs name their targets, or the agent's
// name (its version is known once the run froze it).
func (t Target) Label() string {
	if t.Agent != "" {
		return t.Agent + " (agent)"
	}
	return t.Provider + " / " + t.Model
}

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
	if n := root.get("usecase"); n != nil {
		f.UseCase = Named{Name: p.expand(n, "usecase"), Line: n.line}
		for i := range f.Tasks {
			f.Tasks[i].UseCase = cmp.Or(f.Tasks[i].UseCase, f.UseCase.Name)
		}
	}
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
	f.Category = p.expand(root.get("category"), "category")
	p.autoModels(root)
	if !f.AutoModels || root.get("targets") != nil {
		p.targets(root.get("targets"))
	}
	p.judges(root)
	p.metrics(root)
	p.checks(root.get("checks"))
	p.gates(root.get("gates"))
}

// AutoModelCount is how many recommended models models: auto benchmarks.
const AutoModelCount = 3

// autoModels reads models: auto, which needs the use case (or category)
// to recommend for; targets: may then be left out.
func (p *reader) autoModels(root *node) {
	f := p.f
	if f.UseCase.Name != "" && f.Category != "" {
		p.errf(root.get("category").line, "category", "give usecase: or category:, not both")
	}
	n := root.get("models")
	if n == nil {
		return
	}
	switch v := p.str(n, "models"); {
	case strings.EqualFold(v, "auto"):
		f.AutoModels = true
		f.lines["models"] = n.line
		if f.UseCase.Name == "" && f.Category == "" {
			p.errf(n.line, "models", "auto recommends models for a use case: add usecase: NAME (or category: NAME)")
		}
	case v != "":
		p.errf(n.line, "models", "only auto is understood here (the top %d recommended models for usecase:); list models to benchmark under targets:", AutoModelCount)
	}
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
		p.errf(0, "targets", "is required: the models to benchmark, e.g. - {provider: local, model: llama3.1:8b}, or saved agents, - agent: Docs helper")
		return
	}
	type key struct{ provider, model string }
	seen := map[key]int{}
	agents := map[string]int{}
	for i, it := range p.items(n, "targets") {
		field := fmt.Sprintf("targets[%d]", i)
		if !p.mapping(it, field) {
			continue
		}
		if it.get("agent") != nil {
			p.agentTarget(it, field, agents)
			continue
		}
		p.keys(it, field, "provider", "model", "models", "settings", "tags", "agent", "version")
		version := p.expand(it.get("version"), field+".version")
		if version != "" && it.get("models") != nil {
			p.errf(it.get("version").line, field+".version", "names one model's version: give it with model:, not models:")
		}
		provider := p.providerRef(it.get("provider"), field+".provider")
		if it.get("provider").isNull() {
			p.errf(it.line, field+".provider", "is required (or agent: to benchmark a saved agent)")
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
			t := Target{Provider: provider, Model: p.expand(mn, field+".model"), Version: version, Line: mn.line}
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
