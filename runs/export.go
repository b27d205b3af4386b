package runs

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"tribunal/spreadsheet"
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

// WriteCSV writes a run's items as CSV, streaming them from the store so
// memory stays flat; it returns how many rows it wrote. The web export and
// `tribunal export` both call it, so their files are the same. Each row is
// built in one reused buffer, as encoding/csv would write it.
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
	bw := bufio.NewWriterSize(w, 64<<10)
	var line csvLine
	for _, h := range CSVHeader {
		line.text(h)
	}
	if _, err := bw.Write(line.end()); err != nil {
		return 0, err
	}
	err = s.store.EachExportItem(ctx, run.ID, func(v *store.ExportItem) error {
		line.reset()
		csvRow(&line, v, version[v.RunTargetID], best[v.RunTargetID])
		if _, err := bw.Write(line.end()); err != nil {
			return err
		}
		rows++
		return nil
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return rows, err
}

// csvRow is one item's cells; judge is the one whose reasoning is shown (or the checks).
func csvRow(l *csvLine, v *store.ExportItem, version string, best [2]bool) {
	for _, s := range [...]string{v.TaskID, v.Category, v.Subcategory, v.Question, v.Reference, v.Provider, v.Model, version} {
		l.text(spreadsheet.Defuse(s))
	}
	l.text(string(v.Status))
	l.float(v.Score, 2)
	l.text(spreadsheet.Defuse(v.Judge))
	l.text(spreadsheet.Defuse(v.Reasoning))
	l.text(spreadsheet.Defuse(deref(v.Response)))
	l.text(spreadsheet.Defuse(v.Error))
	l.int(v.TimeMs)
	l.int(v.CompletionTokens)
	l.float(v.TokensPerS, 2)
	l.int64(int64(v.RepeatIndex))
	l.float(v.CostUSD, 6)
	l.text(string(v.CostSource))
	l.text(deref(v.Grade))
	l.bool(best[0])
	l.bool(best[1])
	l.int64(int64(v.AnswerAttempts))
	l.int64(int64(v.JudgeAttempts))
	for _, c := range agentCells(agentTrace(v.AgentTarget, v.AgentName, v.AgentVersion, v.ToolCalls, v.AgentTurns, v.AgentReasoning, v.Response)) {
		l.text(c)
	}
	l.text(violationsCell(v.Violations))
}

// deref is *p, or "" when p is nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// agentCells are an agent item's last four cells; a model target's are empty.
func agentCells(a *AgentTrace) [4]string {
	if a == nil {
		return [4]string{}
	}
	turns := ""
	if a.Turns != nil {
		turns = strconv.Itoa(*a.Turns)
	}
	return [4]string{spreadsheet.Defuse(compactJSON(a.ToolCalls)), strconv.Itoa(len(a.ToolCalls)), strconv.Itoa(a.ToolErrors), turns}
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
