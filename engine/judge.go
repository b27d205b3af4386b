package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"tribunal/llm"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/trajectory"
)

// panelJudge is a run judge ready to judge: its template parsed and the
// metrics the run switched on.
type panelJudge struct {
	store.RunJudge
	tmpl    *template.Template
	metrics []rubric.Metric
	schema  json.RawMessage // the verdict's JSON schema, made once
	system  string          // the system prompt, the same for every item
	err     error           // an unusable template fails the judge's items with this
}

func newPanelJudge(ctx context.Context, j store.RunJudge, opts store.RunOptions) panelJudge {
	pj := panelJudge{RunJudge: j}
	text := j.PromptTemplate
	if strings.TrimSpace(text) == "" {
		text = rubric.DefaultTemplate // runs made before styles existed
	}
	if pj.ScaleMax <= pj.ScaleMin {
		pj.ScaleMin, pj.ScaleMax = 1, 10
	}
	pj.tmpl, pj.err = rubric.Parse(ctx, text)
	for _, m := range j.Metrics {
		if opts.MetricOn(m.Name) {
			pj.metrics = append(pj.metrics, m)
		}
	}
	if len(pj.metrics) == 0 {
		pj.metrics = j.Metrics // the run switched on checks only; a judge still scores all its metrics
	}
	if len(pj.metrics) == 0 {
		pj.metrics = []rubric.Metric{{Name: rubric.Overall, Weight: 1}}
	}
	pj.schema = rubric.Schema(pj.metrics, pj.ScaleMin, pj.ScaleMax, pj.AsksViolations)
	pj.system = rubric.SystemPrompt(pj.PersonalityName, pj.PersonalityDescription, pj.metrics, pj.ScaleMin, pj.ScaleMax, pj.AsksViolations)
	return pj
}

// judgeRequest builds the judge call for an item.
func (pj *panelJudge) judgeRequest(ctx context.Context, w *store.WorkItem) (llm.Request, error) {
	calls, err := toolCalls(w)
	if err != nil {
		return llm.Request{}, err
	}
	in := rubric.Input{Question: w.Task.Question, Turns: w.Task.AllTurns(), Answers: answers(w),
		Reference: w.Task.Reference, Excellent: w.Task.Excellent, Good: w.Task.Good, Pass: w.Task.Pass,
		IncorrectAnswerDirection: w.Task.IncorrectAnswerDirection, Constraints: w.Task.Constraints,
		JudgeInstructions: w.Task.JudgeInstructions, ToolCalls: calls.CompactWithin(judgeToolCallsMax),
		UseCase: w.Task.JudgeUseCase(), Metrics: pj.metrics, ScaleMin: pj.ScaleMin, ScaleMax: pj.ScaleMax}
	if w.Turns != nil {
		in.AgentTurns = *w.Turns
	}
	if len(in.Answers) > 0 {
		in.Response = in.Answers[len(in.Answers)-1]
	}
	prompt, err := rubric.Render(ctx, pj.tmpl, in)
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{Model: pj.Model, SchemaName: "verdict",
		JSONSchema:  pj.schema,
		Temperature: pj.Settings.Temperature, MaxTokens: pj.Settings.MaxTokens, ReasoningEffort: pj.Settings.ReasoningEffort,
		Messages: []llm.Message{
			{Role: "system", Content: pj.system},
			{Role: "user", Content: prompt},
		}}, nil
}

// JudgePrompt is the prompt a run judge is sent for an item, built by the
// code that sends it, so a page can show it as sent.
func JudgePrompt(ctx context.Context, j store.RunJudge, opts store.RunOptions, w *store.WorkItem) ([]llm.Message, error) {
	pj := newPanelJudge(ctx, j, opts)
	if pj.err != nil {
		return nil, pj.err
	}
	req, err := pj.judgeRequest(ctx, w)
	if err != nil {
		return nil, err
	}
	return req.Messages, nil
}

// Answers is the model's answer to each turn of an item's task.
func Answers(w *store.WorkItem) []string { return answers(w) }

// answers is the model's answer to each turn of the item's task. A lone
// answer to a conversation (an imported one: no answer per turn) answers
// its last turn; the turns before it have none.
func answers(w *store.WorkItem) []string {
	if w.Answers != nil {
		if list, err := decodeAnswers(*w.Answers); err == nil {
			return list
		}
	}
	if w.Response != nil {
		out := make([]string, len(w.Task.AllTurns()))
		out[len(out)-1] = *w.Response
		return out
	}
	return []string{""}
}

// toolCalls is the item's trajectory: nil for a model target.
func toolCalls(w *store.WorkItem) (trajectory.Calls, error) {
	if w.ToolCalls == nil {
		return nil, nil
	}
	var calls trajectory.Calls
	if err := json.Unmarshal([]byte(*w.ToolCalls), &calls); err != nil {
		return nil, fmt.Errorf("the item's tool calls do not decode: %w", err)
	}
	return calls, nil
}

// judgeToolCallsMax bounds the trajectory in a judge's prompt to well within
// rubric.MaxOutput, so a long agent run leaves room for its answer.
const judgeToolCallsMax = 64 << 10

// judge asks a panel judge for its verdict on the item and stores it (its
// scores weighed by the run's weights into the item's overall); it
// returns the successor claimed with the verdict, if any (see chain).
func (e *Engine) judge(ctx context.Context, pj *panelJudge, last bool, weights []store.SourceWeight, p *store.Provider, client *llm.Client, w *store.WorkItem) *store.Item {
	stop := e.renewLease(ctx, &w.Item)
	defer stop()
	req, err := pj.judgeRequest(ctx, w)
	if err != nil {
		e.failNow(ctx, w, store.PhaseJudging, fmt.Sprintf("judge %s: %v", pj.Name, err), false)
		return nil
	}
	resp, err := e.chat(ctx, p, client, req)
	var le *llm.Error
	if errors.As(err, &le) && le.StatusCode == 400 {
		// Some OpenAI-compatible servers reject response_format; the prompt
		// asks for the same JSON, and the reply is validated either way.
		req.JSONSchema = nil
		resp, err = e.chat(ctx, p, client, req)
	}
	if err != nil {
		e.callFailed(ctx, w, store.PhaseJudging, fmt.Errorf("judge %s: %w", pj.Name, err), "")
		return nil
	}
	v, perr := rubric.ParseVerdict(resp.Text, pj.metrics, pj.ScaleMin, pj.ScaleMax, pj.AsksViolations)
	if perr != nil {
		e.callFailed(ctx, w, store.PhaseJudging, fmt.Errorf("judge %s: %w", pj.Name, perr), resp.Text)
		return nil
	}
	verdict := store.Verdict{Overall: v.Overall, Scores: pj.scores(v, resp.Text), Violations: pj.violations(v), Last: last, Weights: weights}
	usd, src := pj.Price.CallCost(resp.CostUSD, resp.PromptTokens, resp.CompletionTokens)
	if usd != nil {
		verdict.CostUSD = *usd
	}
	verdict.CostSource = src
	entry := itemLog(w, store.LogInfo, "verdict", fmt.Sprintf("⚖ %s · %s: %s scores %s%s", w.Target.Label(), w.Task.TaskKey, pj.Name,
		formatScore(v.Overall, pj.ScaleMax), violationsNote(v)), judgeLogDetail(v.Reasoning(), req, resp.Text))
	c := store.JudgingCompletion(&w.Item, verdict)
	e.complete(ctx, c, e.successor(ctx, w, p))
	if c.Err != nil {
		e.notStored(ctx, w, store.PhaseJudging, c.Err)
		return nil
	}
	if c.Successor != nil {
		e.judgeTook(w.RunID, w.JudgePos)
	}
	if !last {
		e.markJudgeWork(w.RunID, w.JudgePos+1)
	}
	e.logs.add(entry)
	return c.Successor
}

// scores are a verdict's score rows: one per metric, and the overall (the
// weighted mean) unless the only metric is the overall. The overall row
// carries the note on the violations.
func (pj *panelJudge) scores(v rubric.Verdict, raw string) []store.Score {
	id := pj.ID
	scores := make([]store.Score, 0, len(v.Scores)+1)
	for _, s := range v.Scores {
		scores = append(scores, store.Score{RunJudgeID: &id, Source: pj.Source(), Metric: s.Metric, Score: s.Score, Reasoning: s.Reasoning, Raw: raw})
	}
	if len(v.Scores) > 1 || v.Scores[0].Metric != rubric.Overall {
		scores = append(scores, store.Score{RunJudgeID: &id, Source: pj.Source(), Metric: rubric.Overall, Score: v.Overall,
			Reasoning: "weighted mean of the metrics"})
	}
	scores[len(scores)-1].Note = v.Note
	return scores
}

// violations are the verdict's violations as the store keeps them.
func (pj *panelJudge) violations(v rubric.Verdict) []store.Violation {
	out := make([]store.Violation, len(v.Violations))
	for i, x := range v.Violations {
		out[i] = store.Violation{RunJudgeID: pj.ID, Category: x.Category, Detail: x.Detail}
	}
	return out
}

// violationsNote sums up a verdict's violations for its live-log line.
func violationsNote(v rubric.Verdict) string {
	s := ""
	if n := len(v.Violations); n > 0 {
		s = fmt.Sprintf(" · %d violation(s)", n)
	}
	if v.Note != "" {
		s += " · " + v.Note
	}
	return s
}

// judgeLogDetail is a verdict's live-log detail: the reasoning, then the
// prompt the judge saw and its raw reply, so a surprising score can be
// checked from the log as an answer can.
func judgeLogDetail(reasoning string, req llm.Request, raw string) string {
	var b strings.Builder
	b.WriteString("REASONING\n" + reasoning + "\n\nPROMPT\n")
	for _, m := range req.Messages {
		b.WriteString("[" + m.Role + "]\n" + m.Content + "\n")
	}
	b.WriteString("\nRAW REPLY\n" + raw)
	return b.String()
}

func formatScore(v float64, scaleMax int) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".") + fmt.Sprintf("/%d", scaleMax)
}
