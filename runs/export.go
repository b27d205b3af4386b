package runs

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"tribunal/store"
)

// CSVHeader is the CSV export's columns, one row per item. best_overall and
// best_value mark the rows of the run's best model overall and best value;
// version is the target's model version (typed, or as the provider named it).
// tool_calls … turns are an agent item's: its tool calls (compact JSON, as
// AgentTrace's), how many, how many failed, and its model calls; empty for
// a model target's item. violations are what the judges said the answer
// violated (compact JSON, [{judge, category, detail}]), empty when none.
var CSVHeader = []string{"task_id", "category", "subcategory", "question", "reference", "provider", "model", "version", "status",
	"score", "judge", "reasoning", "response", "error", "time_ms", "tokens", "tps", "repeat", "cost_usd", "cost_source", "grade",
	"best_overall", "best_value", "answer_attempts", "judge_attempts",
	"tool_calls", "tool_call_count", "tool_errors", "turns", "violations"}

// csvBatch is how many rows share one violations query.
const csvBatch = 500

// WriteCSV writes a run's items as CSV, streaming them from the store so
// memory stays flat; it returns how many rows it wrote. The web export and
// `tribunal export` both call it, so their files are the same.
func (s *Service) WriteCSV(ctx context.Context, w io.Writer, run *store.Run) (rows int, err error) {
	_, sum, err := s.Results(ctx, run)
	if err != nil {
		return 0, err
	}
	best := map[int64][2]bool{}
	version := map[int64]string{}
	for _, t := range run.Targets {
		best[t.ID] = [2]bool{t.ID == sum.Best.OverallTargetID, t.ID == sum.Best.ValueTargetID}
		version[t.ID] = t.Version
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return 0, err
	}
	batch := make([]store.ItemView, 0, csvBatch)
	flush := func() error {
		ids := make([]int64, len(batch))
		for i := range batch {
			ids[i] = batch[i].ID
		}
		violations, err := s.store.ItemsViolations(ctx, ids)
		if err != nil {
			return err
		}
		for i := range batch {
			v := &batch[i]
			if err := cw.Write(append(csvRow(v, version[v.RunTargetID], best[v.RunTargetID]), violationsCell(violations[v.ID]))); err != nil {
				return err
			}
			rows++
		}
		batch = batch[:0]
		cw.Flush()
		return cw.Error()
	}
	err = s.store.EachRunItem(ctx, run.ID, func(v *store.ItemView) error {
		if batch = append(batch, *v); len(batch) == csvBatch {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return rows, err
}

// csvRow is one item; judge is the one whose reasoning is shown (or the checks).
func csvRow(v *store.ItemView, version string, best [2]bool) []string {
	f := func(p *float64, prec int) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', prec, 64)
	}
	n := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	resp, grade := "", ""
	if v.Response != nil {
		resp = *v.Response
	}
	if v.Grade != nil {
		grade = *v.Grade
	}
	row := []string{csvSafe(v.TaskID), csvSafe(v.Category), csvSafe(v.Subcategory), csvSafe(v.Question), csvSafe(v.Reference),
		csvSafe(v.Provider), csvSafe(v.Model), csvSafe(version), string(v.Status), f(v.Score, 2), csvSafe(v.Judge), csvSafe(v.Reasoning),
		csvSafe(resp), csvSafe(v.Error), n(v.TimeMs), n(v.CompletionTokens), f(v.TokensPerS, 2), strconv.Itoa(v.RepeatIndex),
		f(v.CostUSD, 6), string(v.CostSource), grade, strconv.FormatBool(best[0]), strconv.FormatBool(best[1]),
		strconv.Itoa(v.AnswerAttempts), strconv.Itoa(v.JudgeAttempts)}
	return append(row, agentCells(RowOf(v).Agent)...)
}

// agentCells are an agent item's last four cells; a model target's are empty.
func agentCells(a *AgentTrace) []string {
	if a == nil {
		return []string{"", "", "", ""}
	}
	turns := ""
	if a.Turns != nil {
		turns = strconv.Itoa(*a.Turns)
	}
	return []string{csvSafe(compactJSON(a.ToolCalls)), strconv.Itoa(len(a.ToolCalls)), strconv.Itoa(a.ToolErrors), turns}
}

// violationsCell is an item's violations as a CSV cell, "" when none.
func violationsCell(vs []store.ViolationView) string {
	if len(vs) == 0 {
		return ""
	}
	return compactJSON(vs)
}

// compactJSON is a value as a CSV cell. Unescaped <, > and &: a
// spreadsheet is no HTML page. Strings and numbers always encode.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// csvSafe defuses spreadsheet formulas: text a model or user wrote that
// starts with = + @ (or -x, but not a "- " list item) would otherwise run as
// a formula when the file is opened in a spreadsheet.
func csvSafe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '@', '\t', '\r':
		return "'" + s
	case '-':
		if len(s) > 1 && s[1] != ' ' && s[1] != '-' {
			return "'" + s
		}
	}
	return s
}
