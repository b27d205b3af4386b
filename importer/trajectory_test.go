package importer

import (
	"testing"

	"tribunal/store"
)

// The trajectory checks import with their values as given: a YAML list or
// mapping becomes JSON text, a name or a number stays as written.
func TestTrajectoryChecks(t *testing.T) {
	want := []store.TaskInput{{TaskKey: "agent-1", Category: "agents", Question: "Find the capital of France.", Reference: "Paris",
		Checks: []store.Check{
			{Type: "tool_called", Value: "search"},
			{Type: "tool_not_called", Value: "delete_file"},
			{Type: "tool_args", Value: `{"tool":"search","args":{"q":"paris","limit":5,"filters":{"safe":true}}}`},
			{Type: "tool_sequence", Value: `["search","fetch","summarize"]`},
			{Type: "max_tool_calls", Value: "5"},
		}}}
	for _, tc := range []struct{ name, data string }{
		{"agents.yaml", `tasks:
  - task_id: agent-1
    category: agents
    question: Find the capital of France.
    reference: Paris
    checks:
      - {type: tool_called, value: search}
      - type: tool-not-called
        value: delete_file
      - type: tool_args
        value: {tool: search, args: {q: paris, limit: 5, filters: {safe: true}}}
      - type: tool_sequence
        value: [search, fetch, summarize]
      - {type: max_tool_calls, value: 5}
`},
		{"agents.json", `[{"id": "agent-1", "category": "agents", "question": "Find the capital of France.", "reference": "Paris", "checks": [
 {"type": "tool_called", "value": "search"}, {"type": "tool_not_called", "value": "delete_file"},
 {"type": "tool_args", "value": {"tool": "search", "args": {"q": "paris", "limit": 5, "filters": {"safe": true}}}},
 {"type": "tool_sequence", "value": ["search", "fetch", "summarize"]}, {"type": "max_tool_calls", "value": 5}]}]
`},
		{"agents.csv", `id,category,question,reference,checks
agent-1,agents,Find the capital of France.,Paris,"[{""type"": ""tool_called"", ""value"": ""search""}, {""type"": ""tool_not_called"", ""value"": ""delete_file""}, {""type"": ""tool_args"", ""value"": {""tool"": ""search"", ""args"": {""q"": ""paris"", ""limit"": 5, ""filters"": {""safe"": true}}}}, {""type"": ""tool_sequence"", ""value"": [""search"", ""fetch"", ""summarize""]}, {""type"": ""max_tool_calls"", ""value"": 5}]"
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameTasks(t, mustParse(t, tc.name, tc.data, ""), want)
		})
	}
}

// A trajectory check without a usable value fails the import and says why;
// it never borrows the task's reference.
func TestTrajectoryCheckErrors(t *testing.T) {
	_, err := Parse("agents.yaml", []byte(`- id: a
  question: q
  reference: search
  checks: [tool_called]
- id: b
  question: q
  checks:
    - {type: tool_args, value: {tool: search}}
- id: c
  question: q
  checks:
    - {type: max_tool_calls, value: many}
`), "")
	wantErrors(t, err, Errors{
		{Row: 1, Line: 1, Column: 3, Field: "checks[0]", Message: "checks: tool_called: the value must name a tool: invalid check"},
		{Row: 2, Line: 5, Column: 3, Field: "checks[0]", Message: `checks: tool_args: "args" must be a JSON object of the arguments to find (use tool_called to check the call alone): invalid check`},
		{Row: 3, Line: 9, Column: 3, Field: "checks[0]", Message: `checks: max_tool_calls: "many" is not a whole number of calls (0 or more): invalid check`},
	})
}
