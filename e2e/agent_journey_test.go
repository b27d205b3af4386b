package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
	"tribunal/mcpclient/mcptest"
	"tribunal/store"
	"tribunal/trajectory"
)

// agentJourneyTasks are the tasks the agent is benchmarked on.
var agentJourneyTasks = []struct{ id, question string }{
	{"docs-1", "What is the answer in the docs?"},
	{"docs-2", "Which page of the docs holds the answer?"},
}

// agentJourneyAnswer is the agent's final answer to every task.
const agentJourneyAnswer = "The docs say the answer is 42."

// gate holds the model's warm-up until the test opens it, so the run page
// is seen before the agent's tools are known.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// agentJourneyScript plays the agent one tool call per turn: search for the
// question, fetch the first page the search found (so the search result
// must have come back to the model), call fail, then answer. The judge
// gives 8; the warm-up (no tools offered) waits for warmup to open.
func agentJourneyScript(warmup *gate) func(llmtest.ChatRequest) llmtest.Reply {
	return func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: `{"score": 8, "reasoning": "Found it in the docs."}`}
		}
		if len(r.Tools) == 0 {
			<-warmup.ch
			return llmtest.DefaultReply(r)
		}
		return agentTurn(r)
	}
}

// agentTurn is the agent's reply on its turn.
func agentTurn(r llmtest.ChatRequest) llmtest.Reply {
	switch r.Turn() {
	case 1:
		args, _ := json.Marshal(map[string]string{"query": r.Question()})
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("c1", "search", string(args))}}
	case 2:
		page := "(no search result)"
		if res := r.ToolResults(); len(res) == 1 {
			// "3 results for …: /docs/a, /docs/b, /docs/c"
			if i := strings.LastIndex(res[0].Content, ": "); i >= 0 {
				page, _, _ = strings.Cut(res[0].Content[i+2:], ",")
			}
		}
		args, _ := json.Marshal(map[string]string{"url": page})
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("c2", "fetch", string(args))}}
	case 3:
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("c3", "fail", `{}`)}}
	}
	return llmtest.Reply{Content: agentJourneyAnswer}
}

// authProxy forwards to an MCP server and keeps the Authorization headers
// it saw, so the test can tell the agent's secret reached its server.
type authProxy struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

func startAuthProxy(t *testing.T, target string) *authProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &authProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // streamable HTTP answers with event streams
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Get("Authorization"))
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections() // an open event stream would keep Close waiting
		srv.Close()
	})
	p.URL = srv.URL
	return p
}

// auths lists the distinct Authorization headers seen so far.
func (p *authProxy) auths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.seen)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestAgentJourney is an agent's whole way through Tribunal in Chromium:
// Agents SDK code pasted and read into the form, the agent saved on a
// provider and tested against its MCP server, benchmarked from its row
// with a tool_called check, the run watched live to its tool analytics,
// an item's trajectory read step by step, and the CSV's tool columns.
// Screenshots go to the test's artifact directory.
func TestAgentJourney(t *testing.T) {
	chromePath(t)
	mcp := startAuthProxy(t, mcptest.Start(t).URL)
	warmup := &gate{ch: make(chan struct{})}
	a := startApp(t, agentJourneyScript(warmup))
	t.Cleanup(warmup.open) // before the fake stops: it waits for its calls
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "base_url": a.fake.URL}, &prov, 201)
	b := newBrowser(t, a.URL)
	b.do("a desktop viewport", 15*time.Second, chromedp.EmulateViewport(1400, 1000))
	shots := t.ArtifactDir()

	var agent store.Agent
	var runPath string
	steps := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"paste code", func(t *testing.T) { agent = pasteAgentCode(t, b, a, mcp.URL, prov.ID, shots) }},
		{"test tools", func(t *testing.T) { testAgentTools(t, b, mcp) }},
		{"benchmark", func(t *testing.T) { runPath = benchmarkAgent(t, b, a, agent, warmup, shots) }},
		{"tool analytics", func(t *testing.T) { readToolAnalytics(t, b, shots) }},
		{"trajectory", func(t *testing.T) { readTrajectory(t, b, runPath, shots) }},
		{"CSV", func(t *testing.T) { readToolColumns(t, b, runPath) }},
	}
	for _, s := range steps {
		finished := false
		t.Run(s.name, func(t *testing.T) { s.fn(t); finished = true })
		if !finished {
			t.Fatalf("step %q stopped; the rest of the journey depends on it", s.name)
		}
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors in the browser:\n  %s", strings.Join(errs, "\n  "))
	}
}

// pasteAgentCode pastes Agents SDK source as it sits in a repository, reads
// it into the form, chooses the provider and saves; the API then shows the
// agent as the code defined it, its secret masked.
func pasteAgentCode(t *testing.T, b0 *browser, a *app, mcpURL string, providerID int64, shots string) store.Agent {
	b := b0.withT(t)
	code := `from agents import Agent, HostedMCPTool, ModelSettings, Runner

# The docs helper answers from our documentation server.
docs_agent = Agent(
    name="Docs helper",
    model="fake-small",
    instructions="Use the docs tools.",
    tools=[
        HostedMCPTool(
            tool_config={
                "type": "mcp",
                "server_label": "docs",
                "server_url": "` + mcpURL + `",
                "allowed_tools": ["search", "fetch", "fail"],
                "headers": {"Authorization": "Bearer docs-secret"},
            }
        )
    ],
    model_settings=ModelSettings(temperature=0.1),
)

if __name__ == "__main__":
    print(Runner.run_sync(docs_agent, "What is the answer?").final_output)
`
	b.open("/agents")
	b.waitFor("the paste box", `document.querySelector("[data-testid=agent-code]")`, 15*time.Second)
	// A paste: the value arrives at once.
	mustEval[bool](b, "paste the code", fmt.Sprintf(`(() => { const e = document.querySelector("[data-testid=agent-code]"); e.value = %s; return true })()`, js(code)))
	b.click("[data-testid=read-code]")
	b.waitFor("the form filled from the code", `document.querySelector("#agent-form input[name=name]").value === "Docs helper"`, 15*time.Second)
	form := mustEval[map[string]string](b, "the form", `(() => {
		const v = n => (document.querySelector("#agent-form [name=" + n + "]") || {}).value;
		return {model: v("model"), system_prompt: v("system_prompt"), temperature: v("temperature"), server: v("server_0_name"),
			url: v("server_0_url"), allowed: v("server_0_allowed_tools"), header: v("server_0_header_key"), secret: v("server_0_header_secret")};
	})()`)
	want := map[string]string{"model": "fake-small", "system_prompt": "Use the docs tools.", "temperature": "0.1", "server": "docs",
		"url": mcpURL, "allowed": "search, fetch, fail", "header": "Authorization", "secret": "secret"}
	for k, w := range want {
		if form[k] != w {
			t.Errorf("the form's %s is %q, want %q", k, form[k], w)
		}
	}
	b.choose("#agent-form select[name=provider_id]", "Fake")
	b.shot(shots, "01-agent-code-read")
	b.click("[data-testid=save-agent]")
	b.waitFor("the saved agent", `document.querySelector("[data-testid=flash-success]")?.innerText.includes("Agent created") &&
		document.querySelector("[data-testid=agent-row]")`, 15*time.Second)
	if row := b.text("[data-testid=agent-row]"); !strings.Contains(row, "Docs helper") || !strings.Contains(row, "search, fetch, fail") {
		t.Errorf("the agent's row %q lacks its name or allowed tools", row)
	}

	var agents []store.Agent
	apiCall(t, a, "GET", "/api/agents", nil, &agents, 200)
	if len(agents) != 1 {
		t.Fatalf("%d agents saved, want 1: %+v", len(agents), agents)
	}
	ag := agents[0]
	if ag.Name != "Docs helper" || ag.Model != "fake-small" || ag.ProviderID == nil || *ag.ProviderID != providerID ||
		ag.SystemPrompt != "Use the docs tools." || ag.Settings.Temperature == nil || *ag.Settings.Temperature != 0.1 {
		t.Errorf("saved agent: %+v", ag)
	}
	if len(ag.MCPServers) != 1 {
		t.Fatalf("saved servers: %+v", ag.MCPServers)
	}
	srv := ag.MCPServers[0]
	if srv.Name != "docs" || srv.URL != mcpURL || !slices.Equal(srv.AllowedTools, []string{"search", "fetch", "fail"}) {
		t.Errorf("saved server: %+v", srv)
	}
	if len(srv.Headers) != 1 || srv.Headers[0].Key != "Authorization" || !srv.Headers[0].IsSecret || srv.Headers[0].Value != "••••••cret" {
		t.Errorf("saved headers %+v, want Authorization as a secret masked to ••••••cret", srv.Headers)
	}
	html := mustEval[string](b, "page HTML", "document.documentElement.outerHTML")
	if strings.Contains(html, "docs-secret") {
		t.Error("the agents page shows the secret after saving")
	}
	return ag
}

// testAgentTools clicks Test on the agent's row: the page lists the tools
// its server offers it (the allowed ones only), and the server was called
// with the secret header as pasted.
func testAgentTools(t *testing.T, b0 *browser, mcp *authProxy) {
	b := b0.withT(t)
	b.click("[data-testid=agent-row] [data-testid=test-agent]")
	b.waitFor("the test result", `document.querySelector("[data-testid=agent-test-result] [data-testid=agent-test-server]")`, 10*time.Second)
	res := mustEval[map[string]any](b, "the test result", `(() => {
		const s = document.querySelector("[data-testid=agent-test-server]");
		return {ok: s.dataset.ok, head: s.querySelector("p").innerText.trim(), tools: [...s.querySelectorAll("li code")].map(c => c.innerText.trim())};
	})()`)
	if res["ok"] != "true" || res["head"] != "✔ docs: 3 tool(s)" {
		t.Errorf("the test says %v: %v, want docs answering with 3 tools", res["ok"], res["head"])
	}
	var tools []string
	for _, v := range res["tools"].([]any) {
		tools = append(tools, v.(string))
	}
	slices.Sort(tools)
	if !slices.Equal(tools, []string{"fail", "fetch", "search"}) {
		t.Errorf("the test lists tools %q, want fail, fetch and search (add is not allowed)", tools)
	}
	if got := mcp.auths(); !slices.Equal(got, []string{"Bearer docs-secret"}) {
		t.Errorf("the MCP server saw Authorization %q, want the pasted secret", got)
	}
}

// benchmarkAgent makes the tasks (each checking that search was called) and
// a collection, opens the new-run form from the agent's Benchmark button,
// chooses the judge and the collection, and starts the run. It returns the
// run page's path.
func benchmarkAgent(t *testing.T, b0 *browser, a *app, agent store.Agent, warmup *gate, shots string) string {
	b := b0.withT(t)
	var ids []string
	for _, task := range agentJourneyTasks {
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": task.id, "category": "docs", "question": task.question,
			"checks": []store.Check{{Type: "tool_called", Value: "search"}}}, nil, 201)
		ids = append(ids, task.id)
	}
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Docs questions", "task_ids": ids}, nil, 201)

	b.open("/agents")
	b.click("[data-testid=agent-row] [data-testid=benchmark-agent]")
	box := fmt.Sprintf("[data-testid=agent-%d]", agent.ID)
	b.waitFor("the form with the agent ticked", fmt.Sprintf(`location.pathname === "/runs/new" && document.querySelector(%s)?.checked`, js(box)), 10*time.Second)
	b.typeInto("form[data-testid=new-run-form] input[name=name]", "Docs agent run")
	pickModel(b, "[data-testid=judge-picker-0]", "judge", 0, "fake-judge")
	b.do("tick the collection", 15*time.Second, chromedp.Click(chromedp.Search(
		`//form[@data-testid="new-run-form"]//label[contains(., "Docs questions")]/input[@name="collection_ids"]`)))
	b.shot(shots, "02-new-run")
	b.click("[data-testid=start-run]")
	b.waitFor("the run page", `/^\/runs\/\d+$/.test(location.pathname) && document.querySelector("[data-testid=progress]")`, 10*time.Second)
	// The warm-up is held: the agent's tools are not known yet.
	b.waitFor("the note that the tools come at warm-up", `document.readyState === "complete" && document.querySelector("[data-testid=target-tools-pending]")`, 15*time.Second)
	warmup.open()
	return mustEval[string](b, "the run's path", "location.pathname")
}

// readToolAnalytics waits on the live run page for the run to finish and
// reads the agent's tool analytics: 3 calls per item, 1 in 3 failed, and
// the three tools it called.
func readToolAnalytics(t *testing.T, b0 *browser, shots string) {
	b := b0.withT(t)
	b.waitFor("the run to finish", `(document.querySelector("#progress [data-testid=status]") || {dataset: {}}).dataset.status === "FINISHED"`, 20*time.Second)
	n := len(agentJourneyTasks)
	// The table may first show an earlier refresh: wait for every item in it.
	b.check("the agents' tools over every item", fmt.Sprintf(`document.querySelector("[data-testid=agent-tools] [data-testid=tools-0]")?.innerText.trim() === "%d"`, n), 10*time.Second)
	cells := mustEval[[]string](b, "the tool analytics", `[...document.querySelectorAll("[data-testid=agent-tools] tbody tr")].flatMap(r => [...r.cells].map(c => c.innerText.trim()))`)
	want := []string{"Docs helper", fmt.Sprint(n), "3.0", fmt.Sprintf("33.3%% (%d of %d)", n, 3*n), "4.0", "0",
		fmt.Sprintf("docs · fail ×%d, docs · fetch ×%d, docs · search ×%d", n, n, n)}
	if len(cells) != len(want) || !strings.Contains(cells[0], want[0]) || !slices.Equal(cells[1:], want[1:]) {
		t.Errorf("tool analytics %q, want %q", cells, want)
	}
	// The tools frozen at warm-up replace the note that promised them, live.
	b.waitFor("the tools offered at warm-up", `document.querySelectorAll("[data-testid=run-target] [data-testid=target-tool]").length === 3 &&
		!document.querySelector("[data-testid=target-tools-pending]")`, 10*time.Second)
	tools := mustEval[[]string](b, "the tools offered", `[...document.querySelectorAll("[data-testid=target-tool]")].map(r => r.cells[0].textContent.trim() + "." + r.cells[1].textContent.trim()).sort()`)
	if want := []string{"docs.fail", "docs.fetch", "docs.search"}; !slices.Equal(tools, want) {
		t.Errorf("the run lists tools %q offered at warm-up, want %q", tools, want)
	}
	b.shot(shots, "03-run")
}

// readTrajectory opens the first item from the run page: its timeline shows
// each call under its turn with its arguments and result, the failed call
// marked in words, and the final answer.
func readTrajectory(t *testing.T, b0 *browser, runPath, shots string) {
	b := b0.withT(t)
	b.open(runPath)
	b.waitFor("the items table", `document.querySelector("[data-testid=item-row] [data-testid=item-link]")`, 10*time.Second)
	if got := b.text("[data-testid=item-row] [data-testid=item-tools]"); !strings.Contains(got, "3") || !strings.Contains(got, "1 failed") {
		t.Errorf("the item row's Tools cell is %q, want 3 calls with 1 failed", got)
	}
	b.click("[data-testid=item-row] [data-testid=item-link]")
	b.waitFor("the item page's trajectory", `/^\/items\/\d+/.test(location.pathname) && document.querySelector("[data-testid=trajectory]")`, 10*time.Second)
	question := mustEval[string](b, "the task", `document.querySelector("h1 code").innerText.trim()`)
	var q string
	for _, task := range agentJourneyTasks {
		if task.id == question {
			q = task.question
		}
	}
	if q == "" {
		t.Fatalf("the item page is of task %q, not one of the run's", question)
	}
	if got := b.text("[data-testid=trajectory-summary]"); !strings.Contains(got, "4 model calls") || !strings.Contains(got, "3 tool calls") || !strings.Contains(got, "1 failed") {
		t.Errorf("trajectory summary %q, want 4 model calls, 3 tool calls and 1 failed", got)
	}
	steps := mustEval[[]map[string]string](b, "the timeline", `(() => {
		const text = e => e ? e.textContent.trim().replace(/\s+/g, " ") : ""; // as written, not as styled
		return [...document.querySelectorAll("[data-testid=trajectory-turn]")].flatMap(turn =>
			[...turn.querySelectorAll("[data-testid=trajectory-step]")].map(s => {
				const labels = [...s.querySelectorAll(".turn-role")].map(text);
				const pres = [...s.querySelectorAll("pre")];
				return {turn: text(turn.querySelector("h3")), tool: text(s.querySelector("code.trajectory-tool")),
					error: text(s.querySelector("[data-testid=step-error]")), label: labels[1] || "",
					args: pres[0] ? pres[0].textContent : "", result: pres[1] ? pres[1].textContent : ""};
			}));
	})()`)
	wantArgs := func(k, v string) string {
		b, _ := json.MarshalIndent(map[string]string{k: v}, "", "  ")
		return string(b)
	}
	want := []map[string]string{
		{"turn": "Turn 1", "tool": "docs · search", "error": "", "label": "Result", "args": wantArgs("query", q), "result": "3 results for " + q + ": /docs/a, /docs/b, /docs/c"},
		{"turn": "Turn 2", "tool": "docs · fetch", "error": "", "label": "Result", "args": wantArgs("url", "/docs/a"), "result": "Page /docs/a: the answer is 42."},
		{"turn": "Turn 3", "tool": "docs · fail", "error": "✗ Error", "label": "Error", "args": "{}", "result": "no such city: Atlantis"},
	}
	if len(steps) != len(want) {
		t.Fatalf("the timeline has %d steps, want %d: %v", len(steps), len(want), steps)
	}
	for i := range want {
		for k, w := range want[i] {
			if got := steps[i][k]; got != w && !(k == "result" && strings.Contains(got, w)) {
				t.Errorf("step %d's %s is %q, want %q", i+1, k, got, w)
			}
		}
	}
	if end := b.text("[data-testid=trajectory-end]"); !strings.Contains(end, "Final answer") {
		t.Errorf("the trajectory ends %q, want the final answer", end)
	}
	if page := b.text("[data-testid=item-page]"); !strings.Contains(page, agentJourneyAnswer) {
		t.Errorf("the item page does not show the final answer %q", agentJourneyAnswer)
	}
	if checks := b.text("[data-testid=item-checks]"); !strings.Contains(checks, "tool_called") || !strings.Contains(checks, "1.00") {
		t.Errorf("the item's checks %q, want tool_called passed", checks)
	}
	b.shot(shots, "04-item")
}

// readToolColumns downloads the run's CSV from the export menu: every item
// row holds its 3 tool calls, 1 failed, over 4 model calls.
func readToolColumns(t *testing.T, b0 *browser, runPath string) {
	b := b0.withT(t)
	b.open(runPath)
	href := mustEval[string](b, "the CSV link", `(document.querySelector("[data-testid=export-csv]") || {}).href || ""`)
	if href == "" {
		t.Fatalf("no CSV export link\n%s", b.diagnose())
	}
	res, err := http.Get(href)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", href, res.Status)
	}
	recs, err := csv.NewReader(res.Body).ReadAll()
	if err != nil || len(recs) != len(agentJourneyTasks)+1 {
		t.Fatalf("CSV: %d records (want a header and %d items), err %v", len(recs), len(agentJourneyTasks), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"task_id", "tool_calls", "tool_call_count", "tool_errors", "turns"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("CSV header %q lacks %s", recs[0], h)
		}
	}
	for _, r := range recs[1:] {
		if r[col["tool_call_count"]] != "3" || r[col["tool_errors"]] != "1" || r[col["turns"]] != "4" {
			t.Errorf("item %s: %s calls, %s failed, %s turns; want 3, 1 and 4", r[col["task_id"]], r[col["tool_call_count"]], r[col["tool_errors"]], r[col["turns"]])
		}
		var calls trajectory.Calls
		if err := json.Unmarshal([]byte(r[col["tool_calls"]]), &calls); err != nil {
			t.Errorf("item %s: tool_calls %q: %v", r[col["task_id"]], r[col["tool_calls"]], err)
			continue
		}
		var names []string
		for _, c := range calls {
			names = append(names, fmt.Sprintf("%d:%s.%s:%v", c.Turn, c.Server, c.Name, c.IsError))
		}
		if want := []string{"1:docs.search:false", "2:docs.fetch:false", "3:docs.fail:true"}; !slices.Equal(names, want) {
			t.Errorf("item %s: tool_calls %q, want %q", r[col["task_id"]], names, want)
		}
	}
}
