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
	"context"
	"fmt"
	"slices"
	"strings"

	"tribunal/store"
)

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
	if n := root.get("pipeline"); n != nil {
		f.lines["pipeline"] = n.line
		switch v := strings.ToLower(p.str(n, "pipeline")); v {
		case "true", "false":
			f.Pipeline = v == "true"
		default:
			p.errf(n.line, "pipeline", "must be true or false, not %q", v)
		}
	}
	if n := root.get("max_cost_usd"); n != nil {
		f.lines["max_cost_usd"] = n.line
		if v, ok := p.num(n, "max_cost_usd"); ok {
			// The API's rule, so the file and POST /api/runs refuse the same budgets.
			if err := store.ValidBudget("max_cost_usd", &v); err != nil {
				p.errf(n.line, "max_cost_usd", "%s", validationMessage(err))
			} else {
				f.MaxCostUSD = &v
			}
		}
	}
	for i, m := range f.Metrics {
		if t, ok := strings.CutPrefix(m, "check_"); ok && !slices.Contains(store.CheckTypes, t) {
			p.errf(f.LineOf(fmt.Sprintf("metrics[%d]", i)), fmt.Sprintf("metrics[%d]", i), "unknown check %q (checks: %s)", t, strings.Join(store.CheckTypes, ", "))
		}
	}
	if len(f.Judges) == 0 && !f.ChecksOnly() && f.UseCase.Name == "" && root.get("judge") == nil && root.get("judges") == nil {
		p.errf(root.line, "judge", "is required: judge: {provider: …, model: …}, a panel (judges:), usecase: a use case with a default_judge_model, or metrics: [check_…] for a run scored by checks alone")
	}
}

// ChecksOnly reports whether the run counts reference checks alone
// (metrics: [check_…]), so it needs no judge.
func (f *File) ChecksOnly() bool {
	only := len(f.Metrics) > 0
	for _, m := range f.Metrics {
		only = only && strings.HasPrefix(m, "check_")
	}
	return only
}

// UseCaseJudge is the judge of a run file that names a use case and no
// judge: the use case's default judge model, asked through the one provider
// the file's model targets use. ok is false, with why, when that is not one
// provider.
func (f *File) UseCaseJudge(model string) (j Judge, why string) {
	var providers []string
	for _, t := range f.Targets {
		if t.Provider != "" && !slices.Contains(providers, t.Provider) {
			providers = append(providers, t.Provider)
		}
	}
	if len(providers) != 1 {
		return Judge{}, fmt.Sprintf("its targets use %d providers, so the judge's is not clear: add judge: {provider: …, model: %q}", len(providers), model)
	}
	return Judge{Provider: providers[0], Model: model, Line: f.UseCase.Line}, ""
}
