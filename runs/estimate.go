package runs

import (
	"context"
	"fmt"
	"strings"

	"tribunal/engine"
	"tribunal/store"
)

// How a run's cost is estimated before it starts (Service.Estimate):
//
//   - calls: tasks × repeats per target, × turns for a multi-turn task; an
//     agent target counts one call per item, a floor (its tool loop may take
//     more turns, up to its max_turns).
//   - input tokens: the characters of what is sent (system prompt, the
//     prompt package prompt builds from the task and its use case, then the
//     conversation so far) ÷ CharsPerToken.
//   - output tokens per answer: the model's mean completion tokens in your
//     finished runs, else the target's max_tokens, else DefaultAnswerTokens.
//   - a judge's call reads the judge prompt template, the question, the
//     reference and the expected answer; it writes JudgeReplyTokens (or its
//     max_tokens, when lower). Pairwise judges read two answers per call,
//     every pair of targets in both orders.
//   - USD from the models' prices (Price.Cost); an unknown price leaves the
//     row's usd null and the total a lower bound (TotalUSD.Partial).
//   - low and high take half and twice the output tokens (EstimateBand).
const (
	CharsPerToken       = 4
	DefaultAnswerTokens = 512
	JudgeReplyTokens    = 300
	EstimateBand        = 2.0
)

// USDRange is a cost estimate with its band.
type USDRange struct {
	Low      float64 `json:"low"`
	Expected float64 `json:"expected"`
	High     float64 `json:"high"`
}

// EstimateRow is one target's or judge's share of a run's estimate.
type EstimateRow struct {
	TargetID     int64  `json:"target_id,omitempty"` // an agent target: the agent's id
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Name         string `json:"name"`
	Calls        int64  `json:"calls"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// USD is nil when the model has no price.
	USD *USDRange `json:"usd"`
	// Note says how a figure was reached where it is a guess (no history, agent floor, no price).
	Note string `json:"note,omitempty"`
}

// Estimate is what a run would cost, before it starts.
type Estimate struct {
	Tasks    int           `json:"tasks"`
	Targets  []EstimateRow `json:"targets"`
	Judges   []EstimateRow `json:"judges"`
	TotalUSD USDRange      `json:"total_usd"`
	// Partial: some row has no price, so the total leaves it out.
	Partial bool `json:"partial"`
}

func tokensOf(chars int) int64 { return int64((chars + CharsPerToken - 1) / CharsPerToken) }

// Estimate says what the run in would call and cost, without creating it:
// the one definition of a run's estimate (API, CLI and the new-run form).
func (s *Service) Estimate(ctx context.Context, in store.RunInput) (*Estimate, error) {
	b, err := s.store.EstimateBasis(ctx, in)
	if err != nil {
		return nil, err
	}
	repeats := int64(max(in.Repeats, 1))
	out := &Estimate{Tasks: len(b.Tasks), Targets: []EstimateRow{}, Judges: []EstimateRow{}}
	// Per target: answers and their mean size, which the judges read.
	var answers, answerTokens int64
	for _, tg := range b.Targets {
		row := EstimateRow{Provider: tg.ProviderName, Model: tg.Model, Name: tg.ProviderName + " / " + tg.Model}
		if tg.AgentID != nil {
			row.TargetID, row.Name = *tg.AgentID, tg.AgentName
		}
		perAnswer, note, err := s.answerTokens(ctx, tg)
		if err != nil {
			return nil, err
		}
		var notes []string
		if note != "" {
			notes = append(notes, note)
		}
		for _, t := range b.Tasks {
			sys := engine.SystemPromptFor(t.SystemPrompt, &tg, in.SystemPrompt)
			turns := t.TurnChars
			if tg.AgentID != nil {
				turns = turns[:1]
			}
			// Each turn sends the conversation so far: earlier turns and answers.
			sent := len(sys)
			for _, chars := range turns {
				sent += chars
				row.InputTokens += tokensOf(sent) * repeats
				row.OutputTokens += perAnswer * repeats
				row.Calls += repeats
				sent += int(perAnswer) * CharsPerToken
			}
		}
		if tg.AgentID != nil {
			notes = append(notes, "at least one call per item: an agent's tool loop may take more")
		}
		answers += int64(len(b.Tasks)) * repeats
		answerTokens += perAnswer * int64(len(b.Tasks)) * repeats
		row.USD, notes = priced(tg.Price, row, notes)
		row.Note = joinNotes(notes)
		out.Targets = append(out.Targets, row)
	}
	meanAnswer := int64(0)
	if answers > 0 {
		meanAnswer = answerTokens / answers
	}
	for _, j := range b.Judges {
		row := EstimateRow{Provider: j.ProviderName, Model: j.Model, Name: j.Name}
		reply := int64(JudgeReplyTokens)
		if m := j.Settings.MaxTokens; m != nil && *m > 0 && *m < reply {
			reply = *m
		}
		// Per task: one call per answer, or per ordered pair of targets.
		perTask, read := int64(len(b.Targets))*repeats, meanAnswer
		if in.Pairwise {
			perTask, read = int64(len(b.Targets)*(len(b.Targets)-1))*repeats, 2*meanAnswer
		}
		for _, t := range b.Tasks {
			row.InputTokens += perTask * (tokensOf(len(j.PromptTemplate)+len(t.Question)+len(t.Reference)) + read)
			row.Calls += perTask
		}
		row.OutputTokens = row.Calls * reply
		var notes []string
		row.USD, notes = priced(j.Price, row, notes)
		row.Note = joinNotes(notes)
		out.Judges = append(out.Judges, row)
	}
	for _, r := range append(append([]EstimateRow{}, out.Targets...), out.Judges...) {
		if r.USD == nil {
			out.Partial = true
			continue
		}
		out.TotalUSD.Low += r.USD.Low
		out.TotalUSD.Expected += r.USD.Expected
		out.TotalUSD.High += r.USD.High
	}
	return out, nil
}

// answerTokens is a target's expected completion tokens per answer, and a
// note when it is not from history.
func (s *Service) answerTokens(ctx context.Context, tg store.RunTarget) (int64, string, error) {
	if tg.ProviderID != nil {
		avg, n, err := s.store.AvgCompletionTokens(ctx, *tg.ProviderID, tg.Model)
		if err != nil {
			return 0, "", err
		}
		if n > 0 {
			return int64(avg + 0.5), "", nil
		}
	}
	if m := tg.Settings.MaxTokens; m != nil && *m > 0 {
		return *m, "no finished runs of this model yet: output assumed at max_tokens", nil
	}
	return DefaultAnswerTokens, fmt.Sprintf("no finished runs of this model yet: output assumed at %d tokens", DefaultAnswerTokens), nil
}

// priced is a row's cost band, or nil (and a note) when its price is unknown.
func priced(p store.Price, row EstimateRow, notes []string) (*USDRange, []string) {
	at := func(out float64) float64 {
		c := p.Cost(row.InputTokens, int64(out))
		if c == nil {
			return 0
		}
		return *c
	}
	if p.Cost(0, 0) == nil {
		return nil, append(notes, "no price for this model: set one on its provider")
	}
	o := float64(row.OutputTokens)
	return &USDRange{Low: at(o / EstimateBand), Expected: at(o), High: at(o * EstimateBand)}, notes
}

func joinNotes(notes []string) string { return strings.Join(notes, "; ") }
