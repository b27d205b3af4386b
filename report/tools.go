package report

import "tribunal/runs"

// toolRow is one agent target's tool analytics (runs.ToolStats.Cells).
type toolRow struct {
	Label string
	Cells []string
}

// toolRows lists the agent targets' tool analytics, in the per-model
// table's order; empty when the run has no agent.
func toolRows(sum *runs.Summary) []toolRow {
	tools := map[int64]*runs.ToolStats{}
	for _, m := range sum.Models {
		tools[m.TargetID] = m.Tools
	}
	var out []toolRow
	for _, pm := range sum.PerModel {
		if ts := tools[pm.TargetID]; ts != nil {
			out = append(out, toolRow{Label: pm.Label, Cells: ts.Cells()})
		}
	}
	return out
}
