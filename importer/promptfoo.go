package importer

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"tribunal/checks"
	"tribunal/store"
)

// parsePromptfoo reads a promptfoo config (YAML or JSON) with inline
// `tests`. Each test (times each prompt, times each combination of list-valued
// vars, as promptfoo runs them) becomes a task:
//
//   - With `prompts`, the test's vars are put into each prompt's {{var}}
//     placeholders; a prompt that renders to a JSON message list is split
//     like an OpenAI-evals input. Vars the prompts do not use go to Metadata,
//     except a reference-like var (expected, answer, …), which is the reference.
//   - Without `prompts`, the vars map like a JSONL record: question, prompt or
//     input is the question, expected/answer the reference, the rest Metadata.
//   - defaultTest vars and asserts apply to every test; test `metadata`
//     category/subcategory/tags/task_id set those fields, the rest Metadata.
//   - Asserts: equals → exact_match (and the reference if none is set);
//     contains/icontains → contains; contains-all → contains per value;
//     regex → regex; starts-with → an anchored regex; is-json → json_valid,
//     or json_schema with a schema value; contains-json with a schema →
//     json_schema; bleu → bleu. Our exact_match and contains ignore case and
//     collapse whitespace, so promptfoo's case-sensitive ones get looser.
//     A task holds one check per type, and only checks that validate (RE2
//     regexes, compilable schemas): any other assert (a second contains,
//     similar, levenshtein, not-*, javascript, asserts with a transform, …)
//     is listed in the judge instructions, after the llm-rubric values, so
//     nothing is dropped. Weights, metrics and providers are not kept.
//
// Anything loaded from elsewhere (file://, huggingface://) and Nunjucks
// beyond {{var}} is an error: the file alone does not hold the task.
func parsePromptfoo(data []byte) ([]row, Errors) {
	docs, ferr := parseTree(data)
	if ferr != nil {
		return nil, Errors{*ferr}
	}
	if len(docs) != 1 || docs[0].kind != object {
		return nil, Errors{{Message: "a promptfoo config must be one mapping with tests"}}
	}
	cfg := docs[0]
	var errs Errors
	fileErr := func(v *value, field, format string, args ...any) {
		errs = append(errs, RowError{Line: v.line, Column: v.col, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	prompts := promptfooPrompts(cfg.get("prompts"), fileErr)
	if sc := cfg.get("scenarios"); !sc.empty() {
		fileErr(sc, "scenarios", "are not supported; write the tests out")
	}
	def := cfg.get("defaultTest")
	if !def.empty() && def.kind != object {
		fileErr(def, "defaultTest", "must be a mapping written in the file")
		def = nil
	}
	tests := cfg.get("tests")
	switch {
	case tests.empty():
		fileErr(cfg, "tests", "there are none")
	case tests.kind == scalar:
		fileErr(tests, "tests", "loading tests from %q is not supported; write them in the config", tests.text)
	case tests.kind != list:
		fileErr(tests, "tests", "must be a list of tests")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var rows []row
	for i, test := range tests.items {
		rows, errs = promptfooTest(test, def, prompts, i+1, rows, errs)
	}
	return rows, errs
}

type pfPrompt struct {
	label, text string
}

var (
	placeholder  = regexp.MustCompile(`\{\{-?\s*(.*?)\s*-?\}\}`)
	varName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	externalRefs = regexp.MustCompile(`^(file|huggingface|https?|package|python|js)://`)
)

func promptfooPrompts(v *value, fileErr func(*value, string, string, ...any)) []pfPrompt {
	if v.empty() {
		return nil
	}
	items := []*value{v}
	switch v.kind {
	case list:
		items = v.items
	case object:
		fileErr(v, "prompts", "a map of prompt files is not supported; write the prompts in the config")
		return nil
	}
	var out []pfPrompt
	for i, it := range items {
		p := pfPrompt{label: fmt.Sprint(i + 1)}
		switch it.kind {
		case scalar:
			p.text = it.text
		case object:
			p.text = it.get("raw").textOr("")
			if l := it.get("label").textOr(it.get("id").textOr("")); l != "" {
				p.label = l
			}
			if p.text == "" {
				fileErr(it, "prompts", "prompt %d has no raw text (prompts from files are not supported)", i+1)
				continue
			}
		default:
			fileErr(it, "prompts", "prompt %d must be text", i+1)
			continue
		}
		if externalRefs.MatchString(strings.TrimSpace(p.text)) {
			fileErr(it, "prompts", "prompt %d is loaded from %q, which is not supported; write it in the config", i+1, strings.TrimSpace(p.text))
			continue
		}
		if strings.Contains(p.text, "{%") {
			fileErr(it, "prompts", "prompt %d uses Nunjucks tags ({%% … %%}); only {{var}} placeholders are supported", i+1)
			continue
		}
		ok := true
		for _, m := range placeholder.FindAllStringSubmatch(p.text, -1) {
			if !varName.MatchString(m[1]) {
				fileErr(it, "prompts", "prompt %d: %s is not supported; only {{var}} placeholders are", i+1, m[0])
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// maxCombos bounds the tasks one test's list vars can expand to.
const maxCombos = 100

func promptfooTest(test, def *value, prompts []pfPrompt, num int, rows []row, errs Errors) ([]row, Errors) {
	base := newBuilder(num, test.line, test.col)
	if test.kind != object {
		if test.kind == scalar && externalRefs.MatchString(strings.TrimSpace(test.text)) {
			base.fail(test, "tests", "loading tests from %q is not supported; write them in the config", strings.TrimSpace(test.text))
		} else {
			base.fail(test, "tests", "a test must be a mapping, not %s", test.describe())
		}
		return base.done(rows, errs)
	}
	vars := mergedVars(base, def.get("vars"), test.get("vars"))
	var asserts []*value
	for _, src := range []*value{def.get("assert"), test.get("assert")} {
		switch {
		case src.empty():
		case src.kind == list:
			asserts = append(asserts, src.items...)
		default:
			base.fail(src, "assert", "must be a list of asserts")
		}
	}
	equalsRef := mapAsserts(base, asserts)
	for _, md := range []*value{def.get("metadata"), test.get("metadata")} {
		if md.empty() {
			continue
		}
		if md.kind != object {
			base.fail(md, "metadata", "must be a mapping")
			continue
		}
		for i, k := range md.keys {
			switch f := fieldOf(k); f {
			case "category", "subcategory", "tags", "task_id":
				if _, set := base.from[f]; set {
					delete(base.from, f) // the test's own metadata beats defaultTest's
				}
				base.setField(f, k, md.vals[i])
			default:
				if _, set := base.t.Metadata[strings.TrimSpace(k)]; set {
					delete(base.t.Metadata, strings.TrimSpace(k))
				}
				base.meta(k, md.vals[i])
			}
		}
	}
	for i, k := range test.keys {
		switch k {
		case "vars", "assert", "metadata":
		default:
			base.meta(k, test.vals[i])
		}
	}
	combos := combinations(base, vars)
	if len(base.errs) > 0 {
		return rows, append(errs, base.errs...)
	}

	for _, combo := range combos {
		for pi := range max(len(prompts), 1) {
			b := newBuilder(num, test.line, test.col)
			b.t = cloneTask(base.t)
			b.from = maps.Clone(base.from)
			if len(prompts) == 0 {
				b.setAll(combo)
			} else {
				renderPrompt(b, prompts[pi], combo)
				if len(prompts) > 1 {
					b.putMeta(test, "prompt", prompts[pi].label)
				}
			}
			if b.t.Reference == "" {
				b.t.Reference = equalsRef
			}
			rows, errs = b.done(rows, errs)
		}
	}
	return rows, errs
}

// mergedVars lays a test's vars over defaultTest's.
func mergedVars(b *builder, layers ...*value) *value {
	out := &value{kind: object, line: b.line}
	for _, vars := range layers {
		if vars.empty() {
			continue
		}
		if vars.kind != object {
			b.fail(vars, "vars", "must be a mapping written in the file")
			continue
		}
		for i, k := range vars.keys {
			if j := slices.Index(out.keys, k); j >= 0 {
				out.vals[j] = vars.vals[i]
			} else {
				out.add(k, vars.vals[i])
			}
		}
	}
	for i, v := range out.vals {
		if v.kind == scalar && v.str && externalRefs.MatchString(strings.TrimSpace(v.text)) {
			b.fail(v, "vars", "%s is loaded from %q, which is not supported", out.keys[i], strings.TrimSpace(v.text))
		}
	}
	return out
}

// combinations expands list-valued vars into one vars mapping per
// combination, as promptfoo does. Lists that are task fields (turns, tags,
// checks) are values, not alternatives.
func combinations(b *builder, vars *value) []*value {
	combos := []*value{{kind: object, line: vars.line}}
	for i, k := range vars.keys {
		v := vars.vals[i]
		alts := []*value{v}
		if f := fieldOf(k); v.kind == list && f != "turns" && f != "tags" && f != "checks" {
			alts = v.items
		}
		if len(combos)*len(alts) > maxCombos {
			b.fail(v, "vars", "the list values make more than %d combinations", maxCombos)
			return nil
		}
		next := make([]*value, 0, len(combos)*len(alts))
		for _, c := range combos {
			for _, a := range alts {
				n := &value{kind: object, line: c.line, keys: slices.Clone(c.keys), vals: slices.Clone(c.vals), size: c.size}
				n.add(k, a)
				next = append(next, n)
			}
		}
		combos = next
	}
	return combos
}

func renderPrompt(b *builder, p pfPrompt, vars *value) {
	used := map[string]bool{}
	var missing []string
	text := placeholder.ReplaceAllStringFunc(p.text, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v := vars.get(name)
		if v == nil {
			missing = append(missing, name)
			return m
		}
		used[name] = true
		if v.kind == scalar {
			return v.text
		}
		if v.kind == null {
			return ""
		}
		return v.jsonText()
	})
	if len(missing) > 0 {
		b.fail(nil, "vars", "prompt %s uses {{%s}}, which the test does not set", p.label, strings.Join(missing, "}}, {{"))
		return
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "[") {
		if msgs, err := parseJSONValue([]byte(text), b.line); err == nil && msgs.kind == list {
			if c, bad := splitMessages(msgs); bad != nil {
				b.fail(nil, "prompts", "prompt %s: %s", p.label, bad.msg)
			} else {
				c.apply(b)
			}
			b.from["question"] = "prompts"
			text = ""
		}
	}
	if text != "" {
		b.t.Question = text
		b.from["question"] = "prompts"
	}
	for i, k := range vars.keys {
		switch {
		case used[k]:
		case fieldOf(k) == "reference":
			b.setField("reference", k, vars.vals[i])
		default:
			b.meta(k, vars.vals[i])
		}
	}
}

// mapAsserts turns asserts into checks and judge instructions on b, and
// returns the value of the first equals (a reference if the test has none).
// A task has at most one check per type and only checks that validate, so
// a second contains, a JavaScript-only regex or a schema we cannot compile is
// written into the judge instructions instead: the import never fails over
// an assert it could still hand to the judge.
func mapAsserts(b *builder, asserts []*value) string {
	var rubrics, others []string
	equalsRef := ""
	used := map[string]bool{}
	check := func(typ, val, desc string) {
		if used[typ] || checks.Validate(typ, val) != nil {
			others = append(others, desc)
			return
		}
		used[typ] = true
		b.t.Checks = append(b.t.Checks, store.Check{Type: typ, Value: val})
	}
	for i, a := range asserts {
		if a.kind != object {
			b.fail(a, "assert", "assert %d must be a mapping with a type", i+1)
			continue
		}
		typ := strings.TrimSpace(a.get("type").textOr(""))
		if typ == "" {
			b.fail(a, "assert", "assert %d has no type", i+1)
			continue
		}
		val := a.get("value")
		if val != nil && val.kind == scalar && val.str && externalRefs.MatchString(strings.TrimSpace(val.text)) {
			b.fail(val, "assert", "assert %d (%s) loads its value from %q, which is not supported", i+1, typ, strings.TrimSpace(val.text))
			continue
		}
		text := ""
		if !val.empty() {
			text = val.text
			if val.kind != scalar {
				text = val.jsonText()
			}
		}
		if !a.get("transform").empty() {
			typ = "transformed " + typ // a check would see the untransformed output
		}
		desc := describeAssert(a, typ)
		switch typ {
		case "equals", "contains", "icontains", "regex", "starts-with", "bleu", "llm-rubric":
			if text == "" {
				b.fail(a, "assert", "assert %d (%s) has no value", i+1, typ)
				continue
			}
		}
		switch typ {
		case "equals":
			check("exact_match", text, desc)
			if equalsRef == "" {
				equalsRef = strings.TrimSpace(text)
			}
		case "contains", "icontains":
			check("contains", text, desc)
		case "contains-all", "icontains-all":
			if val != nil && val.kind == list {
				for _, it := range val.items {
					check("contains", it.inline(), "- contains: "+it.inline())
				}
			} else {
				check("contains", text, desc)
			}
		case "regex":
			check("regex", text, desc)
		case "starts-with":
			check("regex", "^"+regexp.QuoteMeta(text), desc)
		case "is-json":
			if text == "" {
				check("json_valid", "", desc)
			} else {
				check("json_schema", text, desc)
			}
		case "contains-json":
			if text == "" {
				others = append(others, desc)
			} else {
				check("json_schema", text, desc)
			}
		case "bleu":
			check("bleu", text, desc)
		case "llm-rubric":
			rubrics = append(rubrics, text)
		default:
			others = append(others, desc)
		}
	}
	if len(others) > 0 {
		rubrics = append(rubrics, "Also check (from promptfoo assertions):\n"+strings.Join(others, "\n"))
	}
	if len(rubrics) > 0 {
		b.t.JudgeInstructions = joinText(append([]string{b.t.JudgeInstructions}, rubrics...)...)
	}
	return equalsRef
}

// describeAssert writes an assert the judge can read.
func describeAssert(a *value, typ string) string {
	s := "- " + typ
	if v := a.get("value"); !v.empty() {
		s += ": " + v.inline()
	} else if sub := a.get("assert"); !sub.empty() {
		s += ": " + sub.jsonText()
	}
	if t := a.get("threshold"); !t.empty() {
		s += " (threshold " + t.inline() + ")"
	}
	return s
}

func cloneTask(t store.TaskInput) store.TaskInput {
	t.Turns = slices.Clone(t.Turns)
	t.Tags = slices.Clone(t.Tags)
	t.Checks = slices.Clone(t.Checks)
	t.Metadata = maps.Clone(t.Metadata)
	return t
}
