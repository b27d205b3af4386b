package runfile

import (
	"errors"
	"strings"
	"testing"

	"tribunal/store"
)

const agentRunFile = `providers:
  - name: local
    base_url: http://127.0.0.1:11434
tasks:
  - task_id: t1
    question: "What is 2+2?"
    reference: "4"
targets:
  - {provider: local, model: "llama3.1:8b"}
  - agent: ${AGENT:-Docs helper}
    tags: [agents]
  - agent: Web searcher
judge: {provider: local, model: "qwen2.5:14b"}
gates:
  per_model: {"docs helper": {min_score: 5}}
`

// TestAgentTargets: agent: targets sit beside provider/model ones; their
// names resolve to stored agents (case-insensitive), and an unknown name is
// a problem at its own line.
func TestAgentTargets(t *testing.T) {
	f, err := Parse("run.yaml", []byte(agentRunFile), t.TempDir(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !f.HasAgents() || len(f.Targets) != 3 || f.Targets[1].Agent != "Docs helper" || f.Targets[1].Tags[0] != "agents" ||
		f.Targets[1].Line != 10 || f.Targets[1].Label() != "Docs helper (agent)" || f.Targets[0].Agent != "" {
		t.Fatalf("targets: %+v", f.Targets)
	}
	if f.LineOf("targets[2].agent_id") != 12 {
		t.Errorf("a store error on the third target points at line %d, want 12", f.LineOf("targets[2].agent_id"))
	}

	stored := []store.Agent{{ID: 7, AgentInput: store.AgentInput{Name: "docs HELPER"}}, {ID: 9, AgentInput: store.AgentInput{Name: "Web searcher"}}}
	if err := f.ResolveAgents(stored); err != nil {
		t.Fatal(err)
	}
	if f.Targets[1].AgentID != 7 || f.Targets[2].AgentID != 9 || f.Targets[0].AgentID != 0 {
		t.Errorf("resolved ids: %d, %d, %d", f.Targets[0].AgentID, f.Targets[1].AgentID, f.Targets[2].AgentID)
	}

	err = f.ResolveAgents([]store.Agent{{ID: 9, AgentInput: store.AgentInput{Name: "Docs helpers"}}})
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 {
		t.Fatalf("unknown agents: %v", err)
	}
	if got := ps[0].Error(); got != `run.yaml:10: targets[1].agent: no saved agent "Docs helper" (did you mean "Docs helpers"?)` {
		t.Errorf("first problem: %s", got)
	}
	if ps[1].Line != 12 || !strings.Contains(ps[1].Message, `no saved agent "Web searcher" (agents: "Docs helpers")`) {
		t.Errorf("second problem: %s", ps[1].Error())
	}
	if err := f.ResolveAgents(nil); err == nil || !strings.Contains(err.Error(), "there are no agents yet") {
		t.Errorf("no agents at all: %v", err)
	}
}

// TestAgentTargetProblems: an agent target takes no model or settings, is
// not empty, and is listed once.
func TestAgentTargetProblems(t *testing.T) {
	file := strings.Replace(agentRunFile, "  - agent: Web searcher\n",
		"  - {agent: Web searcher, model: gpt-4.1}\n  - agent: \"\"\n  - agent: docs helper\n  - {agent: X, tgas: [a]}\n", 1)
	_, err := Parse("run.yaml", []byte(file), t.TempDir(), env(nil))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("want problems, got %v", err)
	}
	want := []string{
		"run.yaml:12: targets[2].model: an agent target brings its own model",
		"run.yaml:13: targets[3].agent: is empty",
		`run.yaml:14: targets[4]: agent "docs helper" is listed twice (first at line 10)`,
		`run.yaml:15: targets[5]: unknown key "tgas" (did you mean "tags"?)`,
	}
	if len(ps) != len(want) {
		t.Fatalf("problems:\n%v", ps)
	}
	for i, w := range want {
		if !strings.HasPrefix(ps[i].Error(), w) {
			t.Errorf("problem %d = %s, want %s…", i, ps[i].Error(), w)
		}
	}
}

// TestAgentGates: a per-model gate names an agent and holds for its target
// whatever version the run froze.
func TestAgentGates(t *testing.T) {
	f, err := Parse("run.yaml", []byte(agentRunFile), t.TempDir(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	m := store.RunMetrics{PerModel: map[string]map[string]float64{"Docs helper (agent v3)": {"score": 4}, "local / llama3.1:8b": {"score": 9}}}
	rs := f.Gates.Evaluate(&m)
	if len(rs) != 1 || rs[0].Scope != "Docs helper (agent v3)" || rs[0].Value == nil || rs[0].Pass {
		t.Errorf("gate results: %+v", rs)
	}
}
