package store

import (
	"context"
	"fmt"
	"strings"
)

// targetMeasures reads the Moments of each measure of each target of the
// run from the measure's distinct values and their counts (a few thousand
// rows where the items are a million): the counts give the sums, the
// extremes and the median alike, so no other scan aggregates the measures.
// The measures are integers, so the sums and the mean of the middle two
// are exact. Targets without a value of a measure have no entry for it.
func (s *Store) targetMeasures(ctx context.Context, runID int64) (map[int64]*[3]Moments, error) {
	query, args := s.measureCountsSelect(runID)
	rows, err := s.conn(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: run %d measures: %w", runID, err)
	}
	defer rows.Close()
	out := map[int64]*[3]Moments{}
	var run valueCounts
	for rows.Next() {
		var measure int
		var target, x, n int64
		if err := rows.Scan(&measure, &target, &x, &n); err != nil {
			return nil, fmt.Errorf("store: run %d measures: %w", runID, err)
		}
		if run.measure != measure || run.target != target {
			run.fold(out)
			run = valueCounts{measure: measure, target: target}
		}
		run.xs, run.ns = append(run.xs, x), append(run.ns, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run %d measures: %w", runID, err)
	}
	run.fold(out)
	return out, nil
}

// measureCountsSelect counts each target's distinct values of each measure,
// ordered by measure, target and value. PostgreSQL counts all three in one
// scan of the items (grouping sets, one hash table each), where a union
// scans them once per measure; SQLite has no grouping sets.
func (s *Store) measureCountsSelect(runID int64) (string, []any) {
	if s.dialect == Postgres {
		cols := "i." + strings.Join(measureColumns, ", i.")
		sets := make([]string, len(measureColumns))
		which := "CASE"
		for j, col := range measureColumns {
			sets[j] = fmt.Sprintf("(i.run_target_id, i.%s)", col)
			which += fmt.Sprintf(" WHEN GROUPING(i.%s) = 0 THEN %d", col, j)
		}
		// In each set the measures not grouped are NULL, so COALESCE is the
		// grouped one's value; its NULL group (items without it) is left out.
		return fmt.Sprintf(`SELECT %[1]s END AS measure, i.run_target_id, COALESCE(%[2]s) AS x, COUNT(*) AS n
			FROM items i WHERE i.run_id = ?
			GROUP BY GROUPING SETS (%[3]s) HAVING COALESCE(%[2]s) IS NOT NULL
			ORDER BY 1, 2, 3`, which, cols, strings.Join(sets, ", ")), []any{runID}
	}
	arms := make([]string, len(measureColumns))
	args := make([]any, len(measureColumns))
	for j, col := range measureColumns {
		arms[j] = fmt.Sprintf(`SELECT %[1]d AS measure, i.run_target_id, i.%[2]s AS x, COUNT(*) AS n FROM items i
			WHERE i.run_id = ? AND i.%[2]s IS NOT NULL GROUP BY i.run_target_id, i.%[2]s`, j, col)
		args[j] = runID
	}
	return strings.Join(arms, " UNION ALL ") + " ORDER BY 1, 2, 3", args
}

// valueCounts are one target's distinct values of one measure, in
// increasing order, with their counts.
type valueCounts struct {
	measure int
	target  int64
	xs, ns  []int64
}

// fold adds the values' Moments to out.
func (v *valueCounts) fold(out map[int64]*[3]Moments) {
	if len(v.xs) == 0 {
		return
	}
	var m Moments
	var sum int64
	for i, x := range v.xs {
		m.N += v.ns[i]
		sum += x * v.ns[i]
		m.SumSq += float64(x) * float64(x) * float64(v.ns[i])
	}
	m.Sum, m.Min, m.Max = float64(sum), float64(v.xs[0]), float64(v.xs[len(v.xs)-1])
	m.Median = float64(v.at((m.N-1)/2)+v.at(m.N/2)) / 2
	if out[v.target] == nil {
		out[v.target] = &[3]Moments{}
	}
	out[v.target][v.measure] = m
}

// at is the value at position k (from 0) of the values in order.
func (v *valueCounts) at(k int64) int64 {
	for i, n := range v.ns {
		if k < n {
			return v.xs[i]
		}
		k -= n
	}
	return v.xs[len(v.xs)-1]
}
