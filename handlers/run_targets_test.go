package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/mcpclient/mcptest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunTargetsFollowWarmup: while an agent's warm-up runs, the run page's
// note that its tools come at warm-up sits in the live section and asks for
// the targets again on each log event; once the warm-up has frozen them,
// the targets partial lists the tools. A warm-up that failed, or a run that
// has ended, asks nothing more.
func TestRunTargetsFollowWarmup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		held := make(chan struct{})
		var once sync.Once
		release := func() { once.Do(func() { close(held) }) }
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsWarmup() {
				<-held
			}
			return llmtest.DefaultReply(r)
		})
		t.Cleanup(release) // before the fake stops: it waits for its calls
		mcp := mcptest.Start(t)
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL})
		if err != nil {
			t.Fatal(err)
		}
		tk, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "t", Category: "c", Question: "q", Reference: "r"})
		if err != nil {
			t.Fatal(err)
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{ID: tk.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		pid := p.ID
		docs, err := st.CreateAgent(ctx, store.AgentInput{Name: "Docs", ProviderID: &pid, Model: "fake-small",
			MCPServers: []store.MCPServer{{Name: "docs", URL: mcp.URL, AllowedTools: []string{"search"}}}})
		if err != nil {
			t.Fatal(err)
		}
		// Nothing listens there: its warm-up, the run's first, fails without
		// reaching the model.
		gone, err := st.CreateAgent(ctx, store.AgentInput{Name: "Gone", ProviderID: &pid, Model: "fake-small",
			MCPServers: []store.MCPServer{{Name: "gone", URL: "http://127.0.0.1:1/mcp"}}})
		if err != nil {
			t.Fatal(err)
		}
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"agent_id":%d},{"agent_id":%d}],"collection_ids":[%d]}`,
			p.ID, gone.ID, docs.ID, col.ID)}, 201, &run)
		targets := fmt.Sprintf("/runs/%d/targets", run.ID)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			r, err := st.Run(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Targets[0].WarmupStatus == store.WarmupFailed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the unreachable agent's warm-up did not fail: %q", r.Targets[0].WarmupStatus)
			}
		}

		// The warm-up of Docs is held: its tools are not known yet.
		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		notes := doc.Find("[sse-connect] [data-testid=run-targets] [data-testid=target-tools-pending]")
		if notes.Length() != 2 {
			t.Fatalf("%d notes of tools to come inside the live section, want 2 (one per agent)", notes.Length())
		}
		waiting := notes.Last()
		if waiting.AttrOr("hx-get", "") != targets || !strings.Contains(waiting.AttrOr("hx-trigger", ""), "sse:log") ||
			waiting.AttrOr("hx-target", "") != "#run-targets" || doc.Find("#run-targets").Length() != 1 {
			h, _ := goquery.OuterHtml(waiting)
			t.Errorf("the note of a warm-up under way does not follow the run: %s", h)
		}
		if _, ok := notes.First().Attr("hx-get"); ok {
			t.Error("the note of a failed warm-up keeps asking for tools that will not come")
		}
		_, doc, _ = a.get(t, targets)
		if doc.Find("#run-targets [data-testid=target-tools-pending]").Length() != 2 || doc.Find("[data-testid=target-tool]").Length() != 0 {
			t.Errorf("the targets before the warm-up: %s", doc.Text())
		}

		release()
		waitEnded(t, st, run.ID)
		_, doc, _ = a.get(t, targets)
		if got := strings.Join(doc.Find("#run-targets [data-testid=target-tool] td").Map(func(_ int, c *goquery.Selection) string { return c.Text() })[:2], " · "); got != "docs · search" {
			t.Errorf("the targets after the warm-up list %q, want docs · search", got)
		}
		pending := doc.Find("[data-testid=target-tools-pending]")
		if _, ok := pending.Attr("hx-get"); pending.Length() != 1 || ok {
			t.Errorf("an ended run shows %d notes of tools to come (want the failed agent's), asking again: %v", pending.Length(), ok)
		}
		a.do(t, call{method: "GET", path: "/runs/99999/targets"}, 404, nil)
	})
}
