package runfile

import (
	"fmt"
	"slices"
	"strings"

	"tribunal/store"
)

// agentTarget reads a target that names a saved agent (- agent: Docs
// helper): the agent brings its model, settings and tools, so only tags
// may go with it. seen holds the lines of the agents named so far.
func (p *reader) agentTarget(it *node, field string, seen map[string]int) {
	p.keys(it, field, "agent", "tags", "provider", "model", "models", "settings")
	for i, k := range it.keys {
		if slices.Contains([]string{"provider", "model", "models", "settings"}, k) {
			p.errf(it.klns[i], field+"."+k, "an agent target brings its own model and settings (edit the agent); give agent: alone, or make this a provider/model target")
		}
	}
	an := it.get("agent")
	path := fmt.Sprintf("targets[%d]", len(p.f.Targets))
	t := Target{Agent: p.expand(an, field+".agent"), Line: an.line, field: field + ".agent"}
	if t.Agent == "" {
		if an.kind == scalar || an.isNull() {
			p.errf(an.line, field+".agent", "is empty: name a saved agent")
		}
		return
	}
	p.f.lines[path] = it.line
	p.f.lines[path+".agent_id"] = an.line
	t.Tags = p.tagList(it.get("tags"), field+".tags", path+".tags")
	key := strings.ToLower(t.Agent)
	if prev, dup := seen[key]; dup {
		p.errf(an.line, field, "agent %q is listed twice (first at line %d)", t.Agent, prev)
		return
	}
	seen[key] = an.line
	p.f.Targets = append(p.f.Targets, t)
}

// ResolveAgents finds the saved agent each agent target names (by name,
// case-insensitive) and sets its AgentID. An unknown name is a Problem at
// its line, all of them at once; the run then runs the agent's current
// version.
func (f *File) ResolveAgents(agents []store.Agent) error {
	var probs Problems
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Name
	}
	for i := range f.Targets {
		t := &f.Targets[i]
		if t.Agent == "" {
			continue
		}
		j := slices.IndexFunc(agents, func(a store.Agent) bool { return strings.EqualFold(a.Name, t.Agent) })
		if j >= 0 {
			t.AgentID = agents[j].ID
			continue
		}
		msg := fmt.Sprintf("no saved agent %q", t.Agent)
		switch s := suggest(t.Agent, names); {
		case s != "":
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		case len(names) == 0:
			msg += " (there are no agents yet: add one on the Agents page or with POST /api/agents)"
		default:
			quoted := make([]string, len(names))
			for k, n := range names {
				quoted[k] = fmt.Sprintf("%q", n)
			}
			msg += " (agents: " + strings.Join(quoted, ", ") + ")"
		}
		probs = append(probs, Problem{File: f.Path, Line: t.Line, Field: t.field, Message: msg})
	}
	if len(probs) > 0 {
		return probs
	}
	return nil
}

// HasAgents reports whether a target names a saved agent.
func (f *File) HasAgents() bool {
	return slices.ContainsFunc(f.Targets, func(t Target) bool { return t.Agent != "" })
}
