package report

import (
	"fmt"
	"strconv"

	"tribunal/runs"
)

// violationTable is the report's table of the judges' violations: a row
// per model, a cell per category ("violations (items)").
type violationTable struct {
	Categories []string
	// Rows is empty when the judges found none.
	Rows []violationRow
}

type violationRow struct {
	Label string
	Cells []string
	Total string
}

// violationTableOf lays out the summary's violations; nil when no judge
// of the run lists them.
func violationTableOf(v *runs.Violations, labels map[int64]string) *violationTable {
	if v == nil {
		return nil
	}
	t := &violationTable{Categories: v.Categories}
	if v.Total == 0 {
		return t
	}
	for _, m := range v.PerModel {
		row := violationRow{Label: labels[m.TargetID], Total: strconv.FormatInt(m.Total, 10)}
		for _, c := range v.Categories {
			cell := "0"
			if n, ok := m.ByCategory[c]; ok {
				cell = fmt.Sprintf("%d (%d)", n.Violations, n.Items)
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
