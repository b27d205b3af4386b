package handlers_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/trajectory"
)

// agentRun is itemRun with model "evil" made an agent ("Scout", v3) whose
// first item called two tools (the second failed, on arguments that are no
// JSON) in 2 model calls; it returns a fresh app on the same store (its
// caches never saw the run without the trace), the run and evil's items.
func agentRun(t *testing.T, st *store.Store) (*app, int64, []store.ItemView) {
	t.Helper()
	runID, evil := itemRun(t, newApp(t, st, itemScript))
	run, err := st.Run(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	storetest.MakeAgentTarget(t, st, run.Targets[0].ID, "Scout", 3)
	storetest.SetTrace(t, st, evil[0].ID, trajectory.Calls{
		{Turn: 1, Server: "web", Name: "search", Arguments: `{"q": "<b>sum</b>", "n": 2}`, Result: `=HYPERLINK("http://evil.example","x")`, DurationMs: 40},
		{Turn: 2, Server: "web", Name: "fetch", Arguments: `not json`, Result: "<script>alert(3)</script> refused", IsError: true, DurationMs: 7},
	}, 2, "<i>Search first.</i>")
	return newApp(t, st, itemScript), runID, evil
}

// The items API, an item's API, the JSON export and the summary carry an
// agent item's trace (arguments as JSON, or the string sent) and the
// agent's tool analytics; a model target's carry none.
func TestAgentItemAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a, runID, evil := agentRun(t, st)
		type agentJSON struct {
			Name      string
			Version   int
			Turns     *int
			Reasoning *string
			ToolCalls []struct {
				Name      string
				Arguments json.RawMessage
				IsError   bool `json:"is_error"`
			} `json:"tool_calls"`
			ToolErrors int `json:"tool_errors"`
		}
		check := func(where string, ag *agentJSON) {
			t.Helper()
			if ag == nil || ag.Name != "Scout" || ag.Version != 3 || ag.Turns == nil || *ag.Turns != 2 || ag.Reasoning == nil ||
				*ag.Reasoning != "<i>Search first.</i>" || len(ag.ToolCalls) != 2 || ag.ToolErrors != 1 || !ag.ToolCalls[1].IsError {
				t.Fatalf("%s: agent %+v", where, ag)
			}
			var args map[string]any
			if err := json.Unmarshal(ag.ToolCalls[0].Arguments, &args); err != nil || args["q"] != "<b>sum</b>" || args["n"] != 2.0 {
				t.Errorf("%s: arguments %s are not the JSON object sent (%v)", where, ag.ToolCalls[0].Arguments, err)
			}
			if string(ag.ToolCalls[1].Arguments) != `"not json"` {
				t.Errorf("%s: broken arguments %s, want the string sent", where, ag.ToolCalls[1].Arguments)
			}
		}
		var page struct {
			Items []struct {
				ID    int64
				Model string
				Agent *agentJSON
			}
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items", runID)}, 200, &page)
		for _, it := range page.Items {
			switch {
			case it.ID == evil[0].ID:
				check("items API", it.Agent)
			case it.Model == "plain" && it.Agent != nil:
				t.Errorf("model item %d has an agent: %+v", it.ID, it.Agent)
			case it.Model == "evil" && (it.Agent == nil || len(it.Agent.ToolCalls) != 0 || it.Agent.Turns != nil):
				t.Errorf("agent item %d without a trace: %+v", it.ID, it.Agent)
			}
		}
		var item struct{ Agent *agentJSON }
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d", evil[0].ID)}, 200, &item)
		check("item API", item.Agent)

		var export struct {
			Items []struct {
				ID    int64
				Agent *agentJSON
			}
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/export?format=json", runID)}, 200, &export)
		if i := slices.IndexFunc(export.Items, func(it struct {
			ID    int64
			Agent *agentJSON
		}) bool {
			return it.ID == evil[0].ID
		}); i < 0 {
			t.Error("the JSON export lacks the agent item")
		} else {
			check("JSON export", export.Items[i].Agent)
		}

		var got struct {
			Summary struct {
				Models []runs.ModelScore `json:"models"`
			}
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", runID)}, 200, &got)
		tools := 0
		for _, m := range got.Summary.Models {
			if m.Tools != nil {
				tools++
				if m.Tools.Calls != 2 || m.Tools.Errors != 1 || m.Tools.Items != 1 || len(m.Tools.TopTools) != 2 {
					t.Errorf("tool analytics %+v", m.Tools)
				}
			}
		}
		if tools != 1 {
			t.Errorf("%d targets with tool analytics, want the agent alone", tools)
		}
	})
}

// The CSV export ends with the agent columns; a tool result that looks
// like a formula stays inside its JSON cell, and no cell starts a formula.
func TestAgentCSV(t *testing.T) {
	a, runID, evil := agentRun(t, storetest.SQLite(t))
	res, err := http.Get(fmt.Sprintf("%s/api/runs/%d/export", a.srv.URL, runID))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rows, err := csv.NewReader(res.Body).ReadAll()
	if err != nil || len(rows) != 7 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	head := rows[0]
	at := slices.Index(head, "tool_calls")
	if want := []string{"tool_calls", "tool_call_count", "tool_errors", "turns"}; at < 0 || !slices.Equal(head[at:at+4], want) {
		t.Fatalf("header %v; want the agent columns %v", head, want)
	}
	col := func(row []string, name string) string { return row[slices.Index(head, name)] }
	seen := 0
	for _, r := range rows[1:] {
		for _, c := range r {
			if c != "" && strings.ContainsRune("=+@", rune(c[0])) {
				t.Errorf("cell %q starts a formula", c)
			}
		}
		if col(r, "model") == "plain" {
			if col(r, "tool_calls")+col(r, "tool_call_count")+col(r, "turns") != "" {
				t.Errorf("a model item has agent cells: %v", r[len(r)-4:])
			}
			continue
		}
		if col(r, "tool_call_count") != "2" {
			continue
		}
		seen++
		var calls trajectory.Calls
		if err := json.Unmarshal([]byte(col(r, "tool_calls")), &calls); err != nil || len(calls) != 2 || !strings.HasPrefix(calls[0].Result, "=HYPERLINK") {
			t.Errorf("tool_calls cell %q: %v", col(r, "tool_calls"), err)
		}
		if col(r, "tool_errors") != "1" || col(r, "turns") != "2" {
			t.Errorf("agent cells %v", r[len(r)-4:])
		}
	}
	if seen != 1 {
		t.Errorf("%d rows with the trace, want 1 (item %d)", seen, evil[0].ID)
	}
}

// The item page shows the trajectory: a step per call by turn, the failed
// one badged, arguments indented and everything escaped; the run page
// names the agent, shows its tools and a Tools cell per item.
func TestAgentItemPage(t *testing.T) {
	a, runID, evil := agentRun(t, storetest.SQLite(t))
	res, doc, body := a.get(t, fmt.Sprintf("/items/%d", evil[0].ID))
	if res.StatusCode != 200 {
		t.Fatalf("item page: %d", res.StatusCode)
	}
	if n := doc.Find("h1").Length(); n != 1 {
		t.Errorf("%d h1", n)
	}
	if h1 := doc.Find("h1").Text(); !strings.Contains(h1, "Scout") {
		t.Errorf("h1 %q does not name the agent", h1)
	}
	tr := doc.Find("[data-testid=trajectory]")
	if tr.Find("[data-testid=trajectory-turn]").Length() != 2 || tr.Find("[data-testid=trajectory-step]").Length() != 2 {
		t.Fatalf("trajectory %q", tr.Text())
	}
	failed := tr.Find("[data-testid=trajectory-step][data-error]")
	if failed.Length() != 1 || !strings.Contains(failed.Find("[data-testid=step-error]").Text(), "Error") ||
		!strings.Contains(failed.Text(), "web · fetch") || !strings.Contains(failed.Find("pre").First().Text(), "not json") {
		t.Errorf("failed step %q", failed.Text())
	}
	if args := tr.Find("pre.trajectory-json").First().Text(); !strings.Contains(args, "\n  \"q\": \"<b>sum</b>\"") {
		t.Errorf("arguments not indented JSON: %q", args)
	}
	if tr.Find("b, i, script").Length() != 0 || strings.Contains(body, "<script>alert(3)") || strings.Contains(body, "<i>Search") {
		t.Error("model text was not escaped")
	}
	if r := tr.Find("[data-testid=trajectory-reasoning] pre").Text(); r != "<i>Search first.</i>" {
		t.Errorf("reasoning %q", r)
	}
	if got := doc.Find("[data-testid=item-turns]").Text(); strings.TrimSpace(got) != "2" {
		t.Errorf("turns %q", got)
	}
	if !strings.Contains(doc.Find("[data-testid=trajectory-end]").Text(), "Final answer") {
		t.Errorf("end %q", doc.Find("[data-testid=trajectory-end]").Text())
	}
	// A model target's item has no trajectory.
	_, plainDoc, _ := a.get(t, fmt.Sprintf("/items/%d", evil[0].ID+1))
	if plainDoc.Find("[data-testid=item-page]").Length() != 1 {
		t.Fatal("no item page")
	}

	_, doc, _ = a.get(t, fmt.Sprintf("/runs/%d", runID))
	tools := doc.Find("[data-testid=agent-tools] tbody tr")
	if tools.Length() != 1 || !strings.Contains(tools.Text(), "Scout") || !strings.Contains(tools.Text(), "agent v3") ||
		!strings.Contains(tools.Text(), "web · search ×1") || !strings.Contains(tools.Text(), "50.0% (1 of 2)") {
		t.Errorf("tool analytics row %q", tools.Text())
	}
	cells := doc.Find("[data-testid=item-tools]")
	if cells.Length() != 6 || !strings.Contains(cells.Text(), "🔧 2") || !strings.Contains(cells.Text(), "1 failed") {
		t.Errorf("tools cells %q", cells.Text())
	}
}
