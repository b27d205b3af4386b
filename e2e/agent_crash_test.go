package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/mcpclient/mcptest"
	"tribunal/store/storetest"
)

// agentCrashTasks is the size of the agent run killed mid-trajectory.
const agentCrashTasks = 16

func TestAgentCrashMidTrajectorySQLite(t *testing.T) {
	t.Parallel()
	testAgentCrash(t, t.TempDir(), "")
}

func TestAgentCrashMidTrajectoryPostgres(t *testing.T) {
	t.Parallel()
	testAgentCrash(t, t.TempDir(), storetest.PostgresURL(t))
}

// testAgentCrash kills the process (SIGKILL) while agents are in the middle
// of their trajectories, restarts it, and checks that every item ends with
// exactly one result: its own three tool calls, once, and one verdict.
func testAgentCrash(t *testing.T, dataDir, dbURL string) {
	mcp := mcptest.Start(t)
	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() || len(r.Tools) == 0 {
			return llmtest.DefaultReply(r)
		}
		if turn := r.Turn(); turn <= 3 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call(fmt.Sprintf("c%d", turn), "slow", `{}`)}}
		}
		return llmtest.Reply{Content: "Done: " + r.Question()}
	})
	env := newCrashEnv(t, dataDir, dbURL)
	proc := env.start(false)

	var prov, agent, col, run struct {
		ID int64 `json:"id"`
	}
	mustDo(t, proc, http.MethodPost, "/api/providers", map[string]any{"name": "fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE",
		"base_url": fake.URL, "concurrency": 4, "timeout_seconds": 2}, &prov, http.StatusCreated)
	mustDo(t, proc, http.MethodPost, "/api/agents", map[string]any{"name": "slow agent", "provider_id": prov.ID, "model": "fake-small",
		"mcp_servers": []map[string]any{{"name": "tools", "url": mcp.URL}}}, &agent, http.StatusCreated)
	keys := make([]string, agentCrashTasks)
	for i := range keys {
		keys[i] = fmt.Sprintf("agent-%02d", i)
		mustDo(t, proc, http.MethodPost, "/api/tasks", map[string]any{"task_id": keys[i], "category": "crash",
			"question": "Question " + keys[i]}, nil, http.StatusCreated)
	}
	mustDo(t, proc, http.MethodPost, "/api/collections", map[string]any{"name": "Agents", "task_ids": keys}, &col, http.StatusCreated)
	mustDo(t, proc, http.MethodPost, "/api/runs", map[string]any{"name": "Agent crash",
		"judge":   map[string]any{"provider_id": prov.ID, "model": "fake-judge"},
		"targets": []map[string]any{{"agent_id": agent.ID}}, "collection_ids": []int64{col.ID}}, &run, http.StatusCreated)

	// Kill while tool calls are running: items are then part-way through.
	deadline := time.Now().Add(20 * time.Second)
	for mcp.InFlight() == 0 || mcp.Count("slow") < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("no tool call in flight after 20s (%d calls so far)", mcp.Count("slow"))
		}
		time.Sleep(2 * time.Millisecond)
	}
	proc.kill()
	callsAtKill := mcp.Count("slow")
	db := crashSQL(t, dataDir, dbURL)
	held := crashHeldBy(t, db, run.ID, proc.pid)
	db.Close()
	t.Logf("killed %s with %d tool calls made and %d item(s) in flight", proc.name, callsAtKill, held)
	if held == 0 {
		t.Fatal("the kill found no item in flight")
	}

	proc = env.start(false)
	restarted := time.Now()
	defer func() { t.Logf("the run finished %v after the restart", time.Since(restarted).Round(time.Millisecond)) }()
	deadline = time.Now().Add(crashRunTimeout)
	for {
		var r crashRun
		if _, _, err := crashDo(http.MethodGet, fmt.Sprintf("%s/api/runs/%d", proc.url, run.ID), nil, &r); err == nil && !(r.Status == "RUNNING" || r.Status == "PENDING") {
			if r.Status != "FINISHED" || r.Progress.Completed != agentCrashTasks {
				t.Fatalf("run ended %s (%s), items %v", r.Status, r.Error, r.Progress.ByStatus)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not finished after %v", crashRunTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	proc.kill()

	db = crashSQL(t, dataDir, dbURL)
	defer db.Close()
	rows, err := db.Query(fmt.Sprintf("SELECT id, status, tool_calls, turns FROM items WHERE run_id = %d", run.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	var ids []int64
	for rows.Next() {
		var id int64
		var status, calls string
		var turns int
		if err := rows.Scan(&id, &status, &calls, &turns); err != nil {
			t.Fatal(err)
		}
		n++
		var list []struct {
			Turn int    `json:"turn"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(calls), &list); err != nil {
			t.Fatalf("item %d tool_calls: %v", id, err)
		}
		if status != "COMPLETED" || turns != 4 || len(list) != 3 || list[0].Turn != 1 || list[2].Turn != 3 {
			t.Errorf("item %d: %s, %d turns, calls %+v; want COMPLETED after 4 turns and 3 calls", id, status, turns, list)
		}
		ids = append(ids, id)
	}
	rows.Close() // the one connection is needed for the counts
	for _, id := range ids {
		if v := crashCount(t, db, "SELECT COUNT(*) FROM scores WHERE item_id = %d", id); v != 1 { // the default judge gives one score
			t.Errorf("item %d has %d scores, want the one verdict", id, v)
		}
	}
	if n != agentCrashTasks {
		t.Errorf("%d items, want %d", n, agentCrashTasks)
	}
	// The interrupted trajectories were started again: the server saw more
	// calls than the results hold, and the results hold exactly 3 per item.
	if total := mcp.Count("slow"); total <= 3*agentCrashTasks {
		t.Errorf("the MCP server saw %d calls, want more than %d (the killed items' calls were redone)", total, 3*agentCrashTasks)
	}
}
