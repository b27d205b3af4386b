package agentsrc

import (
	"encoding/json"
	"strings"
	"testing"

	"tribunal/store"
)

// sdkExample is written the way the OpenAI Agents SDK docs write a hosted
// MCP agent: variables, comments, several tools, both allowed_tools forms.
const sdkExample = `
import asyncio
from agents import Agent, HostedMCPTool, ModelSettings, Runner, WebSearchTool, function_tool
from openai.types.shared import Reasoning

# Instructions live in a constant, as they grow long.
INSTRUCTIONS = (
    "You are a support agent for Acme. "  # first sentence
    'Answer from the docs; '
    f"cite the page."
)
DOCS_URL = "https://gitmcp.io/acme/docs"

@function_tool
def get_weather(city: str) -> str:
    return f"The weather in {city} is sunny"

agent = Agent(
    model="gpt-4.1",  # the model under test
    name='Acme support',
    instructions=INSTRUCTIONS,
    tools=[
        HostedMCPTool(
            tool_config={
                "type": "mcp",
                "server_label": "acme_docs",
                "server_url": DOCS_URL,
                "allowed_tools": ["search_docs", "fetch_page"],
                "require_approval": "never",
                "headers": {"Authorization": "Bearer sk-docs-1234", "X-Region": "eu"},
            }
        ),
        HostedMCPTool(tool_config={
            "server_url": """https://billing.example.com/mcp""",
            "type": "mcp",
            "server_label": "billing",
            "allowed_tools": {"tool_names": ["get_invoice"]},
        }),
        WebSearchTool(),
        get_weather,
    ],
    model_settings=ModelSettings(temperature=0.2, max_tokens=1_024, parallel_tool_calls=False,
                                 reasoning=Reasoning(effort="low")),
)

async def main():
    result = await Runner.run(agent, "How do I reset my password?")
    print(result.final_output)

if __name__ == "__main__":
    asyncio.run(main())
`

func TestExtractSDKExample(t *testing.T) {
	r, err := Extract(sdkExample)
	if err != nil {
		t.Fatal(err)
	}
	temp, maxTok, parallel := 0.2, int64(1024), false
	want := store.AgentInput{
		Name: "Acme support", Executor: store.ExecutorTools, Model: "gpt-4.1",
		SystemPrompt: "You are a support agent for Acme. Answer from the docs; cite the page.",
		Settings:     store.AgentSettings{Temperature: &temp, MaxTokens: &maxTok, ParallelToolCalls: &parallel, ReasoningEffort: "low"},
		MaxTurns:     10, ToolTimeoutSeconds: 30, Tags: store.TagList{},
		MCPServers: []store.MCPServer{
			{Name: "acme_docs", URL: "https://gitmcp.io/acme/docs", Transport: store.TransportStreamableHTTP, Concurrency: 4,
				AllowedTools: []string{"search_docs", "fetch_page"},
				Headers:      []store.Header{{Key: "Authorization", Value: "Bearer sk-docs-1234", IsSecret: true}, {Key: "X-Region", Value: "eu"}}},
			{Name: "billing", URL: "https://billing.example.com/mcp", Transport: store.TransportStreamableHTTP, Concurrency: 4,
				AllowedTools: []string{"get_invoice"}, Headers: []store.Header{}},
		},
	}
	if w, g := jsonOf(want), jsonOf(r.Config); w != g {
		t.Errorf("config:\n got %s\nwant %s", g, w)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "WebSearchTool, get_weather") {
		t.Errorf("notes = %q, want the two tools left out named", r.Notes)
	}
	// The config is a valid POST body once a provider is chosen.
	b, _ := json.Marshal(r.Config)
	if !strings.Contains(string(b), `"mcp_servers":[{"name":"acme_docs"`) {
		t.Errorf("JSON shape: %s", b)
	}
}

func TestExtractStringsAndServers(t *testing.T) {
	src := `
from agents import Agent
from agents.mcp import MCPServerStreamableHttp, MCPServerSse, MCPServerStdio
PROMPT: str = """Line one
line 'two' \"quoted\"\
 joined"""
fs = MCPServerStdio(name="fs", params={"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]})
a = agents.Agent[MyCtx](
    handoff_description=r"raw\n stays",
    instructions=PROMPT,
    name="x" 'y' f"{{z}}",
    model=OpenAIChatCompletionsModel(model="qwen3:8b", openai_client=client),
    mcp_servers=[MCPServerStreamableHttp(name="remote", params={"url": "http://127.0.0.1:8000/mcp", "headers": {"X-Api-Key": "k"}}),
                 MCPServerSse(name="events", params={"url": "https://sse.example/sse"}), fs],
    handoffs=[Agent(name="other", instructions=dynamic)],
)
`
	r, err := Extract(src)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config
	if c.Name != "xy{z}" || c.Model != "qwen3:8b" || c.SystemPrompt != "Line one\nline 'two' \"quoted\" joined" || c.Description != `raw\n stays` {
		t.Errorf("strings: name %q model %q prompt %q description %q", c.Name, c.Model, c.SystemPrompt, c.Description)
	}
	got := []string{}
	for _, s := range c.MCPServers {
		got = append(got, s.Name+" "+string(s.Transport)+" "+s.URL+s.Command)
	}
	want := []string{"remote streamable_http http://127.0.0.1:8000/mcp", "events sse https://sse.example/sse",
		"fs stdio npx -y @modelcontextprotocol/server-filesystem ."}
	if w, g := jsonOf(want), jsonOf(got); w != g {
		t.Errorf("servers:\n got %s\nwant %s", g, w)
	}
	if h := c.MCPServers[0].Headers; len(h) != 1 || !h[0].IsSecret {
		t.Errorf("X-Api-Key is not secret: %+v", h)
	}
	if len(r.Notes) != 2 {
		t.Errorf("notes = %q, want the second agent and the handoffs named", r.Notes)
	}
}

func TestExtractProblems(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`print("hello")`, "no Agent(...) call found"},
		{`class MyAgent(Agent): pass`, "no Agent(...) call found"},
		{`Agent(name="a", model=pick_model())`, "model: not a string literal"},
		{`Agent(name="a", model=MODEL)`, "model: not a string literal (MODEL is not assigned a string"},
		{`Agent(name=f"bot {n}")`, "name: not a string literal (an f-string with placeholders, line 1)"},
		{`Agent(name="a", instructions="x" + y)`, "instructions: not a string literal"},
		{"Agent(name='a\n')", "line 1: a string is not closed"},
		{`Agent(name="a", tools=TOOLS)`, "tools: not a list"},
		{`Agent(name="a", tools=[HostedMCPTool(tool_config={"type": "mcp", "server_label": "s"})])`, `tools[0].tool_config["server_url"]: missing`},
		{`Agent(name="a", tools=[HostedMCPTool(tool_config={"type": "web"})])`, `tools[0].tool_config["type"]: must be "mcp"`},
		{`Agent(name="a", model_settings=ModelSettings(temperature="hot"))`, "model_settings.temperature: not a number"},
		{`Agent(name="a", model_settings=ModelSettings(max_tokens=1.5))`, "model_settings.max_tokens: not a whole number"},
		{`Agent(name="a", mcp_servers=[server])`, "mcp_servers[0]: not an MCPServer"},
	} {
		_, err := Extract(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %q", tc.src, err, tc.want)
		}
		if _, ok := err.(*Problem); err != nil && !ok {
			t.Errorf("%s: %T is not a Problem", tc.src, err)
		}
	}
}

// FuzzExtract: whatever the input, Extract returns without a panic (a hang
// shows as the test binary's timeout).
func FuzzExtract(f *testing.F) {
	for _, s := range []string{sdkExample, `Agent(name="a"`, `Agent(((((`, `x = "\u12`, `Agent(name="a", tools=[{**x}, *y, lambda: 1])`,
		`Agent[`, "Agent(name='''", `a = b
b = a
Agent(name=a)`, `Agent(model=-1.5e3, name=0x1F, instructions={1, 2}, tools=[x for x in y])`, "Agent(\\\n)", "Agent(name=\"\\x4\")"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r, err := Extract(src)
		if (r == nil) == (err == nil) {
			t.Fatalf("Extract(%q) = %v, %v: want a config or an error", src, r, err)
		}
	})
}

func TestExtractDeepNesting(t *testing.T) {
	src := "Agent(name=" + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + ")"
	if _, err := Extract(src); err == nil || !strings.Contains(err.Error(), "name: not a string literal") {
		t.Errorf("deep nesting: %v", err)
	}
}

func jsonOf(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestExtractManyNestedAgents: nested calls are read once, not once per level.
func TestExtractManyNestedAgents(t *testing.T) {
	src := strings.Repeat(`Agent(name="a", handoffs=[`, 20_000) + strings.Repeat("])", 20_000)
	r, err := Extract(src)
	if err != nil || r.Config.Name != "a" || !strings.Contains(r.Notes[0], "20000 Agent(...) calls") {
		t.Fatalf("nested agents: %+v, %v", r, err)
	}
}
