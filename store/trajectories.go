package store

import (
	"context"
	"fmt"
)

// TraceRow is what an agent item did, as the tool analytics read it: the
// trajectory (JSON, trajectory.Calls), the model calls and whether it ended
// with an answer.
type TraceRow struct {
	RunTargetID int64
	ToolCalls   string
	Turns       *int
	Answered    bool
}

// EachTrace streams the run's items that have a trajectory (agent items
// that answered or gave up), reading only the columns the analytics need,
// so a large run's answers and prompts never enter memory.
func (s *Store) EachTrace(ctx context.Context, runID int64, fn func(TraceRow) error) error {
	rows, err := s.conn(ctx).Raw(`SELECT run_target_id, tool_calls, turns, CASE WHEN response IS NULL THEN 0 ELSE 1 END
		FROM items WHERE run_id = ? AND tool_calls IS NOT NULL ORDER BY id`, runID).Rows()
	if err != nil {
		return fmt.Errorf("store: run traces: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r TraceRow
		var answered int
		if err := rows.Scan(&r.RunTargetID, &r.ToolCalls, &r.Turns, &answered); err != nil {
			return fmt.Errorf("store: run traces: %w", err)
		}
		r.Answered = answered == 1
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: run traces: %w", err)
	}
	return nil
}
