package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"tribunal/format"
	"tribunal/store"
	"tribunal/trajectory"
)

// AgentTrace is what an agent target did for one item, as the API, the
// exports and the item page show it: the agent's name and version, its
// model calls (Turns), its tool calls in order and the reasoning text its
// provider returned. Turns and Reasoning are nil, and ToolCalls empty,
// until it answered. It is nested under "agent" because an item's "turns"
// (the conversation) and "reasoning" (the judge's) name other things.
type AgentTrace struct {
	Name      string           `json:"name"`
	Version   int              `json:"version"`
	Turns     *int             `json:"turns"`
	ToolCalls trajectory.Calls `json:"tool_calls"`
	// ToolErrors counts the tool calls that failed.
	ToolErrors int     `json:"tool_errors"`
	Reasoning  *string `json:"reasoning"`
	// Answered says the agent reached a final answer; false for one that
	// gave up (say, out of turns) and before it finished.
	Answered bool `json:"answered"`
}

// TurnCalls are the tool calls the agent asked for in one model call.
type TurnCalls struct {
	Turn  int
	Calls trajectory.Calls
}

// ByTurn groups the tool calls by the model call that asked for them, in order.
func (a *AgentTrace) ByTurn() []TurnCalls {
	var out []TurnCalls
	for _, c := range a.ToolCalls {
		if len(out) == 0 || out[len(out)-1].Turn != c.Turn {
			out = append(out, TurnCalls{Turn: c.Turn})
		}
		out[len(out)-1].Calls = append(out[len(out)-1].Calls, c)
	}
	return out
}

// agentTrace reads an agent item's stored columns; nil for a model target.
// A trajectory that does not decode (it never should: the engine writes
// it) shows as no calls rather than failing the whole page or export.
func agentTrace(agent bool, name string, version int, calls *string, turns *int, reasoning, response *string) *AgentTrace {
	if !agent {
		return nil
	}
	a := &AgentTrace{Name: name, Version: version, Turns: turns, ToolCalls: trajectory.Calls{}, Reasoning: reasoning,
		Answered: response != nil}
	if calls != nil {
		_ = json.Unmarshal([]byte(*calls), &a.ToolCalls)
		if a.ToolCalls == nil {
			a.ToolCalls = trajectory.Calls{}
		}
	}
	a.ToolErrors = a.ToolCalls.Errors()
	return a
}

// ItemRow is one item of a run as GET /api/runs/{id}/items, the JSON
// export and the items table show it: the store's row with what an agent
// did (absent for a model target).
type ItemRow struct {
	store.ItemView
	Agent *AgentTrace `json:"agent,omitempty"`
	// ToolCalls and Turns repeat the agent's trajectory and model calls at
	// the top level, where scripts look for them; null for a model target.
	ToolCalls trajectory.Calls `json:"tool_calls"`
	Turns     *int             `json:"turns,omitempty"`
}

// RowOf is the item row of a store row.
func RowOf(v *store.ItemView) ItemRow {
	row := ItemRow{ItemView: *v, Agent: agentTrace(v.AgentTarget, v.AgentName, v.AgentVersion, v.ToolCalls, v.AgentTurns,
		v.AgentReasoning, v.Response)}
	if row.Agent != nil {
		row.ToolCalls, row.Turns = row.Agent.ToolCalls, row.Agent.Turns
	}
	return row
}

// Items lists a page of a run's items, filtered, as ItemRows.
func (s *Service) Items(ctx context.Context, run *store.Run, f store.ItemFilter) (store.Page[ItemRow], error) {
	if err := s.knownTotal(ctx, run, &f); err != nil {
		return store.Page[ItemRow]{}, err
	}
	p, err := s.store.RunItems(ctx, run.ID, f)
	out := store.Page[ItemRow]{Total: p.Total, Page: p.Page, PerPage: p.PerPage, Items: make([]ItemRow, len(p.Items))}
	for i := range p.Items {
		out.Items[i] = RowOf(&p.Items[i])
	}
	return out, err
}

// ToolStats are an agent target's tool analytics over its items that have
// a trajectory (answered, or given up): seed 001's per-model tool block.
type ToolStats struct {
	// Items counts the agent's items with a trajectory; the means are over them.
	Items  int64 `json:"items"`
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	// CallsPerItem is Calls ÷ Items; nil before any item.
	CallsPerItem *float64 `json:"calls_per_item"`
	// ErrorRate is Errors ÷ Calls; nil before any call.
	ErrorRate *float64 `json:"error_rate"`
	// TurnsPerItem is the mean of the items' model calls; nil before any.
	TurnsPerItem *float64 `json:"turns_per_item"`
	// TopTools are the most called tools, most first (ties by name), at most TopToolsN.
	TopTools []ToolCount `json:"top_tools"`
	// NoFinalAnswer counts the items the agent ended without an answer.
	NoFinalAnswer int64 `json:"no_final_answer"`
}

// ToolCount is how often one tool was called.
type ToolCount struct {
	Server string `json:"server,omitempty"`
	Name   string `json:"name"`
	Calls  int64  `json:"calls"`
}

// TopToolsN is how many tools ToolStats.TopTools lists.
const TopToolsN = 5

// toolTally accumulates one target's traces for toolStatsOf.
type toolTally struct {
	items, calls, errors, turnItems, turns, noAnswer int64
	tools                                            map[ToolCount]int64 // by server and name (Calls 0)
}

// toolStatsOf defines every tool analytic: it reads the run's trajectories
// (one streamed scan of four columns) and gives each agent target of the
// run its ToolStats, zero before any item; model targets get none.
func toolStatsOf(ctx context.Context, st *store.Store, run *store.Run) (map[int64]*ToolStats, error) {
	out := map[int64]*ToolStats{}
	tallies := map[int64]*toolTally{}
	for _, t := range run.Targets {
		if t.IsAgent() {
			out[t.ID], tallies[t.ID] = &ToolStats{TopTools: []ToolCount{}}, &toolTally{tools: map[ToolCount]int64{}}
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	err := st.EachTrace(ctx, run.ID, func(r store.TraceRow) error {
		tl := tallies[r.RunTargetID]
		if tl == nil {
			return nil
		}
		// Only the names and outcomes: results and arguments are skipped.
		var calls []struct {
			Server, Name string
			IsError      bool `json:"is_error"`
		}
		_ = json.Unmarshal([]byte(r.ToolCalls), &calls) // the engine writes valid JSON; see agentTrace
		tl.items++
		tl.calls += int64(len(calls))
		for _, c := range calls {
			if c.IsError {
				tl.errors++
			}
			tl.tools[ToolCount{Server: c.Server, Name: c.Name}]++
		}
		if r.Turns != nil {
			tl.turnItems++
			tl.turns += int64(*r.Turns)
		}
		if !r.Answered {
			tl.noAnswer++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, tl := range tallies {
		ts := out[id]
		ts.Items, ts.Calls, ts.Errors, ts.NoFinalAnswer = tl.items, tl.calls, tl.errors, tl.noAnswer
		ts.CallsPerItem = ratio(tl.calls, tl.items)
		ts.ErrorRate = ratio(tl.errors, tl.calls)
		ts.TurnsPerItem = ratio(tl.turns, tl.turnItems)
		for k, n := range tl.tools {
			k.Calls = n
			ts.TopTools = append(ts.TopTools, k)
		}
		slices.SortFunc(ts.TopTools, func(a, b ToolCount) int {
			return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Server, b.Server))
		})
		ts.TopTools = ts.TopTools[:min(len(ts.TopTools), TopToolsN)]
	}
	return out, nil
}

// ratio is a ÷ b; nil when b is 0.
func ratio(a, b int64) *float64 {
	if b == 0 {
		return nil
	}
	r := float64(a) / float64(b)
	return &r
}

// ToolColumns name ToolStats.Cells' columns, with what each means.
var ToolColumns = [][2]string{
	{"Items", "Items with a trajectory: answered, or ended without an answer"},
	{"Tool calls / item", "Mean tool calls per item"},
	{"Tool errors", "Failed calls ÷ calls"},
	{"Turns / item", "Mean model calls per item"},
	{"No final answer", "Items the agent ended without an answer (say, out of turns)"},
	{"Most used tools", fmt.Sprintf("The %d most called tools, with their calls", TopToolsN)},
}

// Cells write the tool analytics as the run page and the report show them
// (ToolColumns); "–" for nothing measured.
func (ts ToolStats) Cells() []string {
	errs := format.Pct(ts.ErrorRate)
	if ts.Calls > 0 {
		errs += fmt.Sprintf(" (%d of %d)", ts.Errors, ts.Calls)
	}
	tools := make([]string, len(ts.TopTools))
	for i, t := range ts.TopTools {
		tools[i] = t.String()
	}
	top := strings.Join(tools, ", ")
	if top == "" {
		top = format.None
	}
	return []string{strconv.FormatInt(ts.Items, 10), format.Num(ts.CallsPerItem, 1), errs, format.Num(ts.TurnsPerItem, 1),
		strconv.FormatInt(ts.NoFinalAnswer, 10), top}
}

// String names the tool with its server and calls: "web · search ×4".
func (c ToolCount) String() string {
	name := c.Name
	if c.Server != "" {
		name = c.Server + " · " + name
	}
	return fmt.Sprintf("%s ×%d", name, c.Calls)
}
