package runs

import (
	"context"
	"fmt"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/trajectory"
)

// agentFixture is a finished run of two targets over three tasks, the
// first made an agent whose items carry trajectories: t00 two calls (one
// failed) in 3 model calls, t01 one call in 2, t02 seven calls in 5 and no
// final answer. It returns the run as read again and the agent's items by task.
func agentFixture(t *testing.T, st *store.Store) (*bench, *store.Run, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	b := newBench(t, st, 3, map[string]int{"agent": 8, "plain": 5}, nil)
	run := b.run(t, store.RunInput{}, "agent", "plain")
	agentID := run.Targets[0].ID
	storetest.MakeAgentTarget(t, st, agentID, "Researcher", 2)
	page, err := st.RunItems(ctx, run.ID, store.ItemFilter{Model: "agent"})
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("agent items %+v, %v", page.Items, err)
	}
	items := map[string]int64{}
	for _, it := range page.Items {
		items[it.TaskID] = it.ID
	}
	call := func(turn int, server, name string, failed bool) trajectory.Call {
		return trajectory.Call{Turn: turn, Server: server, Name: name, Arguments: `{"q": "x"}`, Result: "ok", IsError: failed, DurationMs: 12}
	}
	storetest.SetTrace(t, st, items["t00"], trajectory.Calls{call(1, "web", "search", false), call(2, "web", "search", true)}, 3, "I should search.")
	storetest.SetTrace(t, st, items["t01"], trajectory.Calls{call(1, "docs", "fetch", false)}, 2, "")
	storetest.SetTrace(t, st, items["t02"], trajectory.Calls{call(1, "web", "search", false), call(1, "web", "search", false),
		call(2, "docs", "fetch", false), call(3, "", "zeta", false), call(3, "", "math", false), call(4, "", "lookup", false),
		call(4, "", "calc", false)}, 5, "")
	if _, err := storetest.DB(t, st).Exec(fmt.Sprintf("UPDATE items SET response = NULL, status = 'FAILED' WHERE id = %d", items["t02"])); err != nil {
		t.Fatal(err)
	}
	if run, err = st.Run(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	return b, run, items
}

// An agent's tool analytics come out exactly over its trajectories (an
// error among them, an item without a final answer, a sixth tool left out
// of the top five); a model target has no tool block.
func TestToolAnalytics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, run, _ := agentFixture(t, st)
		_, sum := b.summary(t, run)
		agent, plain := overallOf(t, run, sum, "agent"), overallOf(t, run, sum, "plain")
		if plain.Tools != nil {
			t.Errorf("a model target has tools %+v", plain.Tools)
		}
		ts := agent.Tools
		if ts == nil {
			t.Fatal("the agent has no tool analytics")
		}
		if ts.Items != 3 || ts.Calls != 10 || ts.Errors != 1 || ts.NoFinalAnswer != 1 {
			t.Errorf("counts %+v: want 3 items, 10 calls, 1 error, 1 without an answer", ts)
		}
		if ts.CallsPerItem == nil || !near(*ts.CallsPerItem, 10.0/3) || ts.ErrorRate == nil || !near(*ts.ErrorRate, 0.1) ||
			ts.TurnsPerItem == nil || !near(*ts.TurnsPerItem, 10.0/3) {
			t.Errorf("rates %v %v %v: want 10/3, 0.1, 10/3", ts.CallsPerItem, ts.ErrorRate, ts.TurnsPerItem)
		}
		want := []ToolCount{{"web", "search", 4}, {"docs", "fetch", 2}, {"", "calc", 1}, {"", "lookup", 1}, {"", "math", 1}}
		if fmt.Sprint(ts.TopTools) != fmt.Sprint(want) {
			t.Errorf("top tools %v, want %v", ts.TopTools, want)
		}
		for _, pm := range sum.PerModel {
			if pm.TargetID == agent.TargetID && pm.Label != "Researcher (agent v2)" {
				t.Errorf("agent label %q", pm.Label)
			}
		}
	})
}

// An agent item's detail and row carry its trajectory, model calls and
// reasoning; a model target's carry none.
func TestAgentItemTrace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b, run, items := agentFixture(t, st)
		d, err := b.svc.Item(ctx, items["t00"], store.ItemFilter{})
		if err != nil {
			t.Fatal(err)
		}
		a := d.Agent
		if a == nil || a.Name != "Researcher" || a.Version != 2 || a.Turns == nil || *a.Turns != 3 || len(a.ToolCalls) != 2 ||
			a.ToolErrors != 1 || a.Reasoning == nil || *a.Reasoning != "I should search." || !a.Answered {
			t.Fatalf("agent trace %+v", a)
		}
		if g := a.ByTurn(); len(g) != 2 || g[1].Turn != 2 || !g[1].Calls[0].IsError {
			t.Errorf("by turn %+v", g)
		}
		if d, err = b.svc.Item(ctx, items["t02"], store.ItemFilter{}); err != nil || d.Agent.Answered || d.Agent.Reasoning != nil {
			t.Errorf("the item without an answer: %+v, %v", d.Agent, err)
		}
		rows, err := b.svc.Items(ctx, run, store.ItemFilter{})
		if err != nil || len(rows.Items) != 6 {
			t.Fatalf("rows %d, %v", len(rows.Items), err)
		}
		for _, r := range rows.Items {
			if (r.Model == "agent") != (r.Agent != nil) {
				t.Errorf("item %d of %s: agent %+v", r.ID, r.Model, r.Agent)
			}
			if r.ID == items["t02"] && len(r.Agent.ToolCalls) != 7 {
				t.Errorf("row of t02 has %d calls", len(r.Agent.ToolCalls))
			}
		}
	})
}
