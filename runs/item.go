package runs

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"tribunal/engine"
	"tribunal/prompt"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/trajectory"
)

// ItemDetail is everything about one item of a run, as the item page and
// GET /api/items/{id} show it.
type ItemDetail struct {
	ID        int64           `json:"id"`
	RunID     int64           `json:"run_id"`
	RunName   string          `json:"run_name"`
	RunStatus store.RunStatus `json:"run_status"`
	// Pairwise says the run judges answers in pairs: see Comparisons.
	Pairwise bool     `json:"pairwise"`
	Task     ItemTask `json:"task"`
	TargetID int64    `json:"target_id"`
	Provider string   `json:"provider"`
	Model    string   `json:"model"`
	// Repeat is the item's repeat, 1…Repeats.
	Repeat  int `json:"repeat"`
	Repeats int `json:"repeats"`

	Status store.ItemStatus `json:"status"`
	// FailedPhase and Error say where and why a FAILED item failed (Error
	// also holds the last error of an item being retried).
	FailedPhase string `json:"failed_phase,omitempty"`
	Error       string `json:"error,omitempty"`

	// Turns pairs each user turn with the model's answer to it.
	Turns []Turn `json:"turns"`
	// Response is the model's last answer; nil before it answered.
	Response *string `json:"response"`
	// SystemPrompt is the system prompt the model was sent, if any.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Agent is what an agent target did for the answer; absent for a model target.
	Agent *AgentTrace `json:"agent,omitempty"`
	// ToolCalls repeats the agent's trajectory at the top level; null for a model target.
	ToolCalls trajectory.Calls `json:"tool_calls"`

	// Score is the item's score on its judges' scale (the panel's mean), or
	// the mean of its checks (0–1) in a run without judges.
	Score *float64 `json:"score"`
	// Overall is the item's weighted overall, 0–100 (see ItemWeights); only
	// a COMPLETED item has one.
	Overall *float64 `json:"overall"`

	TimeMs           *int64   `json:"time_ms"`
	PromptTokens     *int64   `json:"prompt_tokens"`
	CompletionTokens *int64   `json:"completion_tokens"`
	TokensPerS       *float64 `json:"tokens_per_s"`
	// AnswerCostUSD is the model's call; nil when its price is unknown.
	AnswerCostUSD *float64 `json:"answer_cost_usd"`
	// JudgeCostUSD is every judge call's cost, pairwise ones included.
	JudgeCostUSD float64 `json:"judge_cost_usd"`
	// AnswerCostSource and JudgeCostSource say where the two costs came
	// from: reported by the provider, from the price table, mixed, or "" (unknown).
	AnswerCostSource store.CostSource `json:"answer_cost_source"`
	JudgeCostSource  store.CostSource `json:"judge_cost_source"`
	// CostUSD is the two together; nil when the answer's price is unknown.
	CostUSD  *float64     `json:"cost_usd"`
	Attempts ItemAttempts `json:"attempts"`

	Judges      []JudgeVerdict `json:"judges"`
	Checks      []ItemScore    `json:"checks"`
	Measures    []ItemScore    `json:"measures"`
	Comparisons []PairVerdict  `json:"comparisons"`
	Grade       *ItemGrade     `json:"grade"`
	// Place is where the item stands in the filtered list it was opened from.
	Place ItemPlace `json:"place"`
	// UpdatedAt is when the item last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// ItemTask is the task as the run froze it.
type ItemTask struct {
	TaskID      string `json:"task_id"`
	Category    string `json:"category"`
	Subcategory string `json:"subcategory,omitempty"`
	UseCase     string `json:"usecase,omitempty"`
	// UseCaseFields is what the saved use case added to the prompts, as the
	// run froze it; absent without one.
	UseCaseFields            *prompt.UseCase `json:"usecase_fields,omitempty"`
	Question                 string          `json:"question"`
	Reference                string          `json:"reference,omitempty"`
	Excellent                string          `json:"excellent,omitempty"`
	Good                     string          `json:"good,omitempty"`
	Pass                     string          `json:"pass,omitempty"`
	IncorrectAnswerDirection string          `json:"incorrect_answer_direction,omitempty"`
	Constraints              string          `json:"constraints,omitempty"`
	Examples                 string          `json:"examples,omitempty"`
	JudgeInstructions        string          `json:"judge_instructions,omitempty"`
	Tags                     []string        `json:"tags"`
	Checks                   []store.Check   `json:"checks"`
}

// Turn is one user turn and the model's answer to it ("" before it answered).
type Turn struct {
	Question string `json:"question"`
	// Sent is the user message as the model got it (package prompt wraps
	// the first question with the task's input, format, constraints and
	// examples); empty where it is the question itself, and on imported
	// runs, whose answers were never asked for by Tribunal.
	Sent   string `json:"sent,omitempty"`
	Answer string `json:"answer"`
}

// ItemAttempts counts the provider calls of each phase (a multi-turn
// conversation counts once) and the failed calls since the last success.
type ItemAttempts struct {
	Answer   int `json:"answer"`
	Judge    int `json:"judge"`
	Failures int `json:"failures"`
}

// JudgeVerdict is one judge of the run's panel on this item.
type JudgeVerdict struct {
	RunJudgeID int64  `json:"run_judge_id"`
	Name       string `json:"name"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	ScaleMin   int    `json:"scale_min"`
	ScaleMax   int    `json:"scale_max"`
	// Judged says this judge's verdict is stored; until then Prompt is what it will be sent.
	Judged bool            `json:"judged"`
	Prompt []PromptMessage `json:"prompt"`
	// PromptError says why the prompt could not be built.
	PromptError string `json:"prompt_error,omitempty"`
	// Raw is the judge's reply as it came.
	Raw string `json:"raw"`
	// Score is the judge's overall on its scale.
	Score  *float64    `json:"score"`
	Scores []ItemScore `json:"scores"`
	// AsksViolations says the judge's style lists violations; Violations
	// are those of its verdict, and ViolationsNote says what of its list
	// could not be read.
	AsksViolations bool               `json:"asks_violations"`
	Violations     []rubric.Violation `json:"violations"`
	ViolationsNote string             `json:"violations_note,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ItemScore is one metric's score of the item from one source.
type ItemScore struct {
	Source    string  `json:"source"`
	Metric    string  `json:"metric"`
	Score     float64 `json:"score"`
	Reasoning string  `json:"reasoning"`
	// Weight is the score's weight in the item's overall; 0 when it does not count.
	Weight float64 `json:"weight"`
}

// PairVerdict is one pairwise comparison the item's answer took part in.
type PairVerdict struct {
	ID         int64                  `json:"id"`
	Judge      string                 `json:"judge"`
	Status     store.ComparisonStatus `json:"status"`
	Opponent   string                 `json:"opponent"`
	OpponentID int64                  `json:"opponent_item_id"`
	// Side is the side this item's target held: "A" or "B".
	Side string `json:"side"`
	// Outcome is from this item's side: won, lost, tie, or "" until judged.
	Outcome     string  `json:"outcome"`
	Flipped     bool    `json:"flipped"`
	VerdictAB   string  `json:"verdict_ab"`
	VerdictBA   string  `json:"verdict_ba"`
	ReasoningAB string  `json:"reasoning_ab"`
	ReasoningBA string  `json:"reasoning_ba"`
	RawAB       string  `json:"raw_ab"`
	RawBA       string  `json:"raw_ba"`
	CostUSD     float64 `json:"cost_usd"`
	Error       string  `json:"error,omitempty"`
}

// ItemGrade is a person's grade of the item.
type ItemGrade struct {
	Grade     string    `json:"grade"`
	Notes     string    `json:"notes"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ItemPlace is where an item stands in a filtered list of its run's items.
// It holds no position: counting the items before one costs a big run
// more than the whole page, and the neighbours need no count.
type ItemPlace struct {
	// Prev and Next are the neighbouring items' ids; 0 at an end.
	Prev int64 `json:"prev_id"`
	Next int64 `json:"next_id"`
	// InList says the item itself matches the filter (its status may have
	// moved on since the list was shown).
	InList bool `json:"in_list"`
}

// ItemsPerPage is the items table's page size (store.RunItems' default).
const ItemsPerPage = 50

// Item assembles an item's detail, with its place among the run's items
// that match f (f's paging is ignored). An item of a deleted run, or none,
// is store.NotFoundError.
func (s *Service) Item(ctx context.Context, id int64, f store.ItemFilter) (*ItemDetail, error) {
	w, err := s.store.ItemWork(ctx, id)
	if err != nil {
		return nil, err
	}
	run, err := s.store.Run(ctx, w.RunID)
	if err != nil {
		return nil, err
	}
	d := itemDetail(run, w)
	if run.Kind != store.RunImported {
		sent, err := w.Task.SentTurns(ctx)
		if err != nil {
			return nil, fmt.Errorf("item %d: prompt as sent: %w", id, err)
		}
		for i := range d.Turns {
			if i < len(sent) && sent[i] != d.Turns[i].Question {
				d.Turns[i].Sent = sent[i]
			}
		}
	}
	rows, err := s.store.ItemScoreRows(ctx, id)
	if err != nil {
		return nil, err
	}
	s.scores(ctx, d, run, w, rows)
	vs, err := s.store.ItemViolations(ctx, id)
	if err != nil {
		return nil, err
	}
	for i := range d.Judges {
		for _, v := range vs {
			if v.RunJudgeID == d.Judges[i].RunJudgeID {
				d.Judges[i].Violations = append(d.Judges[i].Violations, rubric.Violation{Category: v.Category, Detail: v.Detail})
			}
		}
	}
	// The overall as the summary counts it: a COMPLETED item's only.
	if w.Status == store.ItemCompleted {
		o, err := s.store.ItemOverall(ctx, run.ID, id, ItemWeights(run))
		if err != nil {
			return nil, err
		}
		if o != nil {
			v := *o * 100
			d.Overall = &v
		}
	}
	if run.Options.Pairwise {
		if d.Comparisons, err = s.pairVerdicts(ctx, run, id); err != nil {
			return nil, err
		}
	}
	g, err := s.store.ItemGrade(ctx, id)
	if err != nil {
		return nil, err
	}
	if g != nil {
		d.Grade = &ItemGrade{Grade: g.Grade, Notes: g.Notes, UpdatedAt: g.UpdatedAt}
	}
	f.Page, f.PerPage, f.AfterID, f.BeforeID = 0, 0, 0, 0
	p, err := s.store.ItemPlace(ctx, run.ID, id, f)
	if err != nil {
		return nil, err
	}
	d.Place = ItemPlace{Prev: p.Prev, Next: p.Next, InList: p.Matches}
	return d, nil
}

// itemDetail is the item's own fields.
func itemDetail(run *store.Run, w *store.WorkItem) *ItemDetail {
	t := w.Task
	d := &ItemDetail{ID: w.ID, RunID: run.ID, RunName: run.Name, RunStatus: run.Status, Pairwise: run.Options.Pairwise,
		Task: ItemTask{TaskID: t.TaskKey, Category: t.Category, Subcategory: t.Subcategory, UseCase: t.UseCase,
			Question: t.Question, Reference: t.Reference, Excellent: t.Excellent, Good: t.Good, Pass: t.Pass,
			IncorrectAnswerDirection: t.IncorrectAnswerDirection, Constraints: t.Constraints, Examples: t.Examples,
			JudgeInstructions: t.JudgeInstructions, Tags: nonNil(t.Tags), Checks: nonNil(t.Checks), UseCaseFields: frozenUseCase(t.UseCaseFields)},
		TargetID: w.Target.ID, Provider: w.Target.ProviderName, Model: w.Target.Model, Repeat: w.RepeatIndex, Repeats: run.Repeats,
		Status: w.Status, FailedPhase: w.FailedPhase, Error: w.Error, Response: w.Response,
		SystemPrompt: engine.SystemPrompt(w, run.Options),
		Score:        w.Score, TimeMs: w.TimeMs, PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens,
		TokensPerS: w.TokensPerS, AnswerCostUSD: w.CostUSD, JudgeCostUSD: w.JudgeCostUSD,
		AnswerCostSource: w.CostSource, JudgeCostSource: w.JudgeCostSource,
		Attempts: ItemAttempts{Answer: w.AnswerAttempts, Judge: w.JudgeAttempts, Failures: w.Failures},
		Judges:   []JudgeVerdict{}, Checks: []ItemScore{}, Measures: []ItemScore{}, Comparisons: []PairVerdict{},
		UpdatedAt: w.UpdatedAt}
	d.Agent = agentTrace(w.Target.IsAgent(), w.Target.AgentName, w.Target.AgentVersion, w.ToolCalls, w.Turns, w.Reasoning, w.Response)
	if d.Agent != nil {
		d.ToolCalls = d.Agent.ToolCalls
	}
	if w.CostUSD != nil {
		total := *w.CostUSD + w.JudgeCostUSD
		d.CostUSD = &total
	}
	var answers []string
	if w.Response != nil {
		answers = engine.Answers(w)
	}
	for i, q := range t.AllTurns() {
		turn := Turn{Question: q}
		if i < len(answers) {
			turn.Answer = answers[i]
		}
		d.Turns = append(d.Turns, turn)
	}
	return d
}

// scores sorts the item's score rows by source: each judge's verdict with
// the prompt it was sent, the checks and the measured values, each with
// its weight by ItemWeights.
func (s *Service) scores(ctx context.Context, d *ItemDetail, run *store.Run, w *store.WorkItem, rows []store.Score) {
	weights := ItemWeights(run)
	byJudge := map[int64]*JudgeVerdict{}
	for _, j := range run.Judges {
		if run.Options.Pairwise {
			break // pairwise judges compare answers: see Comparisons
		}
		v := JudgeVerdict{RunJudgeID: j.ID, Name: j.Name, Provider: j.ProviderName, Model: j.Model,
			ScaleMin: j.ScaleMin, ScaleMax: j.ScaleMax, Prompt: []PromptMessage{}, Scores: []ItemScore{},
			AsksViolations: j.AsksViolations, Violations: []rubric.Violation{}}
		if w.Response != nil {
			msgs, err := engine.JudgePrompt(ctx, j, run.Options, w)
			if err != nil {
				v.PromptError = err.Error()
			}
			for _, m := range msgs {
				v.Prompt = append(v.Prompt, PromptMessage{Role: m.Role, Content: m.Content})
			}
		}
		d.Judges = append(d.Judges, v)
		byJudge[j.ID] = &d.Judges[len(d.Judges)-1]
	}
	for _, r := range rows {
		sc := ItemScore{Source: r.Source, Metric: r.Metric, Score: r.Score, Reasoning: r.Reasoning,
			Weight: weightOf(weights, r.Source, r.Metric)}
		switch {
		case r.RunJudgeID != nil && byJudge[*r.RunJudgeID] != nil:
			v := byJudge[*r.RunJudgeID]
			v.Judged = true
			v.Raw = cmp.Or(v.Raw, r.Raw)
			if r.Metric == rubric.Overall {
				v.Score = &r.Score
				v.ViolationsNote = r.Note
			}
			v.Scores = append(v.Scores, sc)
		case strings.HasPrefix(r.Source, "check:"):
			d.Checks = append(d.Checks, sc)
		case r.Source == "measure":
			d.Measures = append(d.Measures, sc)
		}
	}
}

// pairVerdicts lists the comparisons of a pairwise run the item took part in.
func (s *Service) pairVerdicts(ctx context.Context, run *store.Run, itemID int64) ([]PairVerdict, error) {
	cs, err := s.store.ItemComparisons(ctx, itemID)
	if err != nil {
		return nil, err
	}
	targets, judges := map[int64]string{}, map[int64]string{}
	for _, t := range run.Targets {
		targets[t.ID] = t.Label()
	}
	for _, j := range run.Judges {
		judges[j.ID] = j.Name
	}
	out := []PairVerdict{}
	for _, c := range cs {
		v := PairVerdict{ID: c.ID, Judge: judges[c.RunJudgeID], Status: c.Status, Flipped: c.Flipped,
			VerdictAB: c.VerdictAB, VerdictBA: c.VerdictBA, ReasoningAB: c.ReasoningAB, ReasoningBA: c.ReasoningBA,
			RawAB: c.RawAB, RawBA: c.RawBA, CostUSD: c.CostUSD, Error: c.Error, Side: rubric.PickA}
		mine, theirs := rubric.PickA, rubric.PickB
		v.Opponent, v.OpponentID = targets[c.TargetB], c.ItemB
		if c.ItemB == itemID {
			v.Side, mine, theirs = rubric.PickB, rubric.PickB, rubric.PickA
			v.Opponent, v.OpponentID = targets[c.TargetA], c.ItemA
		}
		switch c.Winner {
		case mine:
			v.Outcome = "won"
		case theirs:
			v.Outcome = "lost"
		case rubric.PickTie:
			v.Outcome = "tie"
		}
		out = append(out, v)
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// frozenUseCase is nil for a task that froze no use case.
func frozenUseCase(u prompt.UseCase) *prompt.UseCase {
	if u.Goal == "" && u.Notes == "" && len(u.Constraints) == 0 {
		return nil
	}
	return &u
}
