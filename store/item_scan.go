package store

import (
	"database/sql"
	"strings"
)

// The claim and the completion statements return whole items at the
// engine's rate; scanning them by hand, not through GORM's reflection,
// saves most of what reading them costs. itemColumns and itemFields must
// list every column of Item in the same order (TestItemColumns checks).

// itemColumn is a column of items as the claim and completion statements
// return it.
type itemColumn struct {
	name string
	// absent is the column's value (SQL) in a row where no item was
	// left-joined; empty for a column that may be NULL anyway.
	absent string
}

var itemColumns = []itemColumn{
	{"id", "0"}, {"run_id", "0"}, {"run_task_id", "0"}, {"run_target_id", "0"}, {"repeat_index", "0"},
	{"status", "''"}, {"worker_id", "''"}, {"claimed_at", ""}, {"lease_until", ""},
	{"attempts", "0"}, {"answer_attempts", "0"}, {"judge_attempts", "0"}, {"failures", "0"},
	{"last_attempt_at", ""}, {"next_retry_at", ""}, {"request", "'{}'"}, {"response", ""},
	{"time_ms", ""}, {"prompt_tokens", ""}, {"completion_tokens", ""}, {"tokens_per_s", ""},
	{"error", "''"}, {"failed_phase", "''"}, {"slot_key", "''"}, {"judge_pos", "0"},
	{"score", ""}, {"cost_usd", ""}, {"judge_cost_usd", "0"}, {"cost_source", "''"}, {"judge_cost_source", "''"},
	{"answers", ""}, {"tool_calls", ""}, {"turns", ""}, {"reasoning", ""}, {"updated_at", "now()"},
}

// itemFields are the scan destinations of itemColumns in it.
func itemFields(it *Item) []any {
	return []any{
		&it.ID, &it.RunID, &it.RunTaskID, &it.RunTargetID, &it.RepeatIndex,
		&it.Status, &it.WorkerID, &it.ClaimedAt, &it.LeaseUntil,
		&it.Attempts, &it.AnswerAttempts, &it.JudgeAttempts, &it.Failures,
		&it.LastAttemptAt, &it.NextRetryAt, &it.Request, &it.Response,
		&it.TimeMs, &it.PromptTokens, &it.CompletionTokens, &it.TokensPerS,
		&it.Error, &it.FailedPhase, &it.SlotKey, &it.JudgePos,
		&it.Score, &it.CostUSD, &it.JudgeCostUSD, &it.CostSource, &it.JudgeCostSource,
		&it.Answers, &it.ToolCalls, &it.Turns, &it.Reasoning, &it.UpdatedAt,
	}
}

// itemColumnList is the column list of items for a RETURNING or SELECT
// clause, each prefixed with table (if not empty).
func itemColumnList(table string) string {
	var b strings.Builder
	for i, c := range itemColumns {
		if i > 0 {
			b.WriteString(", ")
		}
		if table != "" {
			b.WriteString(table + ".")
		}
		b.WriteString(c.name)
	}
	return b.String()
}

// itemColumnsOrAbsent is the column list of items of a left-joined table:
// a column that is never NULL reads as its absent value where no row joined.
func itemColumnsOrAbsent(table string) string {
	var b strings.Builder
	for i, c := range itemColumns {
		if i > 0 {
			b.WriteString(", ")
		}
		if c.absent == "" {
			b.WriteString(table + "." + c.name)
			continue
		}
		b.WriteString("COALESCE(" + table + "." + c.name + ", " + c.absent + ")")
	}
	return b.String()
}

// scanItems reads rows of itemColumns, each after the columns of extra
// (scanned anew into the same destinations for every row), calling row
// after each.
func scanItems(rows *sql.Rows, extra []any, row func(it Item)) error {
	defer rows.Close()
	var it Item
	dest := append(extra, itemFields(&it)...)
	for rows.Next() {
		it = Item{}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		row(it)
	}
	return rows.Err()
}

// scanOne reads the one row of rows into dest.
func scanOne(rows *sql.Rows, dest ...any) error {
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
	}
	return rows.Err()
}
