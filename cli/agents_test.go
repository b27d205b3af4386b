package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// TestAgentsCommandsAndTargets: tribunal agents lists the saved agents;
// validate checks a run file's agent names against them, each unknown one
// at its line; run benchmarks an agent beside a model and names it by its
// label (name and version) in the results table.
func TestAgentsCommandsAndTargets(t *testing.T) {
	p := newInProcess(t)
	fake := llmtest.New(t, nil)
	ctx := context.Background()
	st := p.store()
	prov, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Stored", BaseURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	pid := prov.ID
	if _, err := st.CreateAgent(ctx, store.AgentInput{Name: "Helper", ProviderID: &pid, Model: "fake-large",
		MCPServers: []store.MCPServer{{Name: "docs", URL: "https://mcp.example.com/mcp"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAgent(ctx, store.AgentInput{Name: "Plain", ProviderID: &pid, Model: "fake-small"}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := p.main("agents")
	if code != ExitOK || !strings.Contains(out, "NAME") || !strings.Contains(errOut, "2 agents") {
		t.Fatalf("agents: exit %d\n%s\n%s", code, out, errOut)
	}
	if fields := strings.Fields(strings.Split(out, "\n")[1]); strings.Join(fields, " ") != "1 Helper v1 tools Stored / fake-large docs" {
		t.Errorf("agents row: %q", fields)
	}
	code, out, _ = p.main("agents", "--json")
	var rows []agentRow
	if err := json.Unmarshal([]byte(out), &rows); code != ExitOK || err != nil || len(rows) != 2 || rows[0].Servers[0] != "docs" || len(rows[1].Servers) != 0 {
		t.Errorf("agents --json: exit %d, %v, %s", code, err, out)
	}

	file := func(agent string) string {
		return `name: agents
providers:
  - name: Stored
tasks:
  - {task_id: a1, question: "Say A"}
targets:
  - {provider: Stored, model: fake-small}
  - agent: ` + agent + `
judge: {provider: Stored, model: fake-judge}
gates:
  per_model: {` + agent + `: {min_score: 1}}
`
	}
	bad := p.write("bad.yaml", file("Helpr"))
	code, out, errOut = p.main("validate", bad)
	if code != ExitUsage || !strings.Contains(errOut, `bad.yaml:8: targets[1].agent: no saved agent "Helpr" (did you mean "Helper"?)`) || strings.Contains(out, "OK") {
		t.Errorf("validate an unknown agent: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = p.main("run", bad, "--progress", "none")
	if code != ExitUsage || !strings.Contains(errOut, `bad.yaml:8: targets[1].agent: no saved agent "Helpr"`) {
		t.Errorf("run with an unknown agent: exit %d\n%s", code, errOut)
	}
	good := p.write("good.yaml", file("plain"))
	if code, out, errOut := p.main("validate", good); code != ExitOK || !strings.Contains(out, "good.yaml: OK") {
		t.Errorf("validate: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = p.main("run", good, "--progress", "none")
	if code != ExitOK || !strings.Contains(out, "Plain (agent v1)") || !strings.Contains(out, "Stored / fake-small") ||
		!strings.Contains(out, "PASS  Plain (agent v1)") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	run, err := st.Run(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Targets) != 2 || run.Targets[1].AgentName != "Plain" || run.Targets[1].AgentVersion != 1 {
		t.Errorf("targets: %+v", run.Targets)
	}
}
