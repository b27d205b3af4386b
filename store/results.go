package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// ItemView is one row of a run's results: the item with its task, target and judge score.
type ItemView struct {
	ID               int64      `json:"id"`
	TaskID           string     `json:"task_id" gorm:"column:task_key"`
	Category         string     `json:"category"`
	Subcategory      string     `json:"subcategory"`
	Question         string     `json:"question"`
	Reference        string     `json:"reference"`
	Provider         string     `json:"provider"`
	Model            string     `json:"model"`
	Status           ItemStatus `json:"status"`
	RepeatIndex      int        `json:"repeat"`
	Score            *float64   `json:"score"`
	Judge            string     `json:"judge"`
	Reasoning        string     `json:"reasoning"`
	Response         *string    `json:"response"`
	Error            string     `json:"error"`
	TimeMs           *int64     `json:"time_ms"`
	PromptTokens     *int64     `json:"prompt_tokens"`
	CompletionTokens *int64     `json:"tokens"`
	TokensPerS       *float64   `json:"tps"`
	CostUSD          *float64   `json:"cost_usd" gorm:"column:cost_usd"`
	// CostSource says where CostUSD (the answer's) came from; JudgeCostSource
	// where the judges' cost did.
	CostSource      CostSource `json:"cost_source"`
	JudgeCostSource CostSource `json:"judge_cost_source"`
	Grade           *string    `json:"grade"`
	AnswerAttempts  int        `json:"answer_attempts"`
	JudgeAttempts   int        `json:"judge_attempts"`
	FailedPhase     string     `json:"failed_phase,omitempty"`
	UpdatedAt       time.Time  `json:"updated_at"`
	// RunTargetID is the item's target.
	RunTargetID int64 `json:"-"`
	// AgentTarget says the target is an agent (AgentName and AgentVersion
	// name it); ToolCalls (JSON, trajectory.Calls), AgentTurns and
	// AgentReasoning are what it did, nil until it answered and for a model
	// target. Package runs turns them into the API's shape.
	AgentTarget    bool    `json:"-"`
	AgentName      string  `json:"-"`
	AgentVersion   int     `json:"-"`
	ToolCalls      *string `json:"-"`
	AgentTurns     *int    `json:"-"`
	AgentReasoning *string `json:"-"`
}

// ItemFilter narrows and pages a run's items.
type ItemFilter struct {
	Status  ItemStatus
	Model   string // matches the target's model name
	Page    int
	PerPage int
	AfterID int64 // keyset cursor: the page of items with a larger id
	// BeforeID is the keyset cursor back: the page of items just before it.
	BeforeID int64
	// Phase and Reason pick the failed items of one failure group
	// (RunFailures): the phase they failed in, their error's first line.
	Phase  Phase
	Reason string
	// Violation picks the items a judge found a violation of this category in.
	Violation string
	// Total, when set, is the filter's count as the caller knows it (an
	// ended run's counts, kept by package runs), spared a count of the run.
	Total *int64
}

// The item's score is the panel's mean overall score (or, without judges,
// the mean of its checks); the judge and reasoning shown are the first
// judge's, and without judges the judge is the checks (check:<type>).
const itemViewSelect = `i.id, rt.task_key, rt.category, rt.subcategory, rt.question, rt.reference,
	tg.provider_name AS provider, tg.model, i.status, i.repeat_index, i.score,
	COALESCE((SELECT COALESCE(j.name, sc.source) FROM scores sc LEFT JOIN run_judges j ON j.id = sc.run_judge_id
		WHERE sc.item_id = i.id AND sc.metric = 'score' ORDER BY sc.id LIMIT 1),
		(SELECT string_agg(sc.source, ' ' ORDER BY sc.id) FROM scores sc WHERE sc.item_id = i.id AND sc.source LIKE 'check:%'), '') AS judge,
	COALESCE((SELECT sc.reasoning FROM scores sc WHERE sc.item_id = i.id AND sc.metric = 'score' ORDER BY sc.id LIMIT 1), '') AS reasoning,
	i.response, i.error, i.time_ms, i.prompt_tokens, i.completion_tokens, i.tokens_per_s, i.cost_usd,
	i.cost_source, i.judge_cost_source,
	(SELECT g.grade FROM grades g WHERE g.item_id = i.id) AS grade,
	i.answer_attempts, i.judge_attempts, i.failed_phase, i.updated_at, i.run_target_id,
	CASE WHEN tg.agent IS NULL THEN 0 ELSE 1 END AS agent_target, tg.agent_name, tg.agent_version,
	i.tool_calls, i.turns AS agent_turns, i.reasoning AS agent_reasoning`

// itemFilterQuery is the filter on items alone (no joins), so counting and
// skipping ahead stay index-only however large the run. A model filter is
// resolved to its target ids first, which stand for the run (a target is
// one run's): the planner then walks the target's (target, id) index alone
// for the model's items in id order, where with the run's id beside it, the
// index cannot answer, and at a million items PostgreSQL would rather sort
// a scan of the table than fetch each row to check it.
func (s *Store) itemFilterQuery(ctx context.Context, runID int64, f ItemFilter) (*gorm.DB, error) {
	q := s.conn(ctx).Table("items i")
	if f.Model == "" {
		q = q.Where("i.run_id = ?", runID)
	} else {
		var targets []int64
		if err := s.conn(ctx).Model(&RunTarget{}).Where("run_id = ? AND model = ?", runID, f.Model).Pluck("id", &targets).Error; err != nil {
			return nil, fmt.Errorf("store: filter items by model: %w", err)
		}
		if len(targets) == 1 {
			q = q.Where("i.run_target_id = ?", targets[0])
		} else {
			q = q.Where("i.run_target_id IN ?", append(targets, 0)) // 0: no target, so an unknown model matches nothing
		}
	}
	if f.Status != "" {
		q = q.Where("i.status = ?", f.Status)
	}
	if f.Phase != "" || f.Reason != "" {
		// A failure group's items are FAILED (a retry clears failed_phase);
		// the literal lets both databases use the partial idx_items_failures.
		q = q.Where("i.status = 'FAILED'")
	}
	if f.Phase != "" {
		q = q.Where("i.failed_phase = ?", f.Phase)
	}
	if f.Reason != "" {
		q = q.Where(s.failureReason("i.error")+" = ?", f.Reason)
	}
	if f.Violation != "" {
		// Driven from the run's violations of the category (an index range),
		// not probed once per item of the run.
		q = q.Where("i.id IN (SELECT v.item_id FROM violations v WHERE v.run_id = ? AND v.category = ?)", runID, f.Violation)
	}
	return q, nil
}

// itemsInOrder is itemFilterQuery in id order, descending when desc.
func (s *Store) itemsInOrder(ctx context.Context, runID int64, f ItemFilter, desc bool) (*gorm.DB, error) {
	q, err := s.itemFilterQuery(ctx, runID, f)
	if err != nil {
		return nil, err
	}
	if desc {
		return q.Order("i.id DESC"), nil
	}
	return q.Order("i.id"), nil
}

func itemViews(q *gorm.DB) *gorm.DB {
	return q.Select(itemViewSelect).
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Joins("JOIN run_targets tg ON tg.id = i.run_target_id")
}

// RunItems lists a run's items in id order, filtered and paginated. The
// items pages link by keyset: AfterID and BeforeID are the ids around the
// page, and the last page is read from the end, so neither costs more at
// page 10,000 than at page 1. A page asked for by number alone starts at
// an id worked out from the run's span when its ids are dense (all items,
// unfiltered), else found by walking the index from the nearer end.
func (s *Store) RunItems(ctx context.Context, runID int64, f ItemFilter) (Page[ItemView], error) {
	page, perPage := normPage(f.Page, f.PerPage, 50)
	out := Page[ItemView]{Page: page, PerPage: perPage, Items: []ItemView{}}
	if f.Total != nil {
		out.Total = *f.Total
	} else {
		q, err := s.itemFilterQuery(ctx, runID, f)
		if err != nil {
			return out, err
		}
		if err := q.Count(&out.Total).Error; err != nil {
			return out, fmt.Errorf("store: count run items: %w", err)
		}
	}
	from := f.AfterID // the page starts after from, or ends before until
	until, skip, limit := f.BeforeID, 0, perPage
	if from == 0 && until == 0 && page > 1 && f.unfiltered() && int64(page-1)*int64(perPage) < out.Total {
		id, err := s.denseItemID(ctx, runID, out.Total, int64(page-1)*int64(perPage)-1)
		if err != nil {
			return out, err
		}
		from = id
	}
	fromEnd := false // rows read backwards, turned round once read
	switch {
	case from > 0:
	case until > 0:
		fromEnd = true
	case page > 1 && int64(page-1)*int64(perPage) >= out.Total:
		return out, nil // past the last page
	case page > 1 && int64(page)*int64(perPage) > out.Total-out.Total/2:
		// The second half: the page's rows counted from the last.
		end := min(int64(page)*int64(perPage), out.Total)
		fromEnd, skip, limit = true, int(out.Total-end), int(end-int64(page-1)*int64(perPage))
	case page > 1:
		// The first half: the index walked for the id before the page.
		id, err := s.seekItems(ctx, runID, f, (page-1)*perPage-1)
		if err != nil || id == 0 {
			return out, err
		}
		from = id
	}
	q, err := s.itemsInOrder(ctx, runID, f, fromEnd)
	if err != nil {
		return out, err
	}
	if from > 0 {
		q = q.Where("i.id > ?", from)
	}
	if until > 0 {
		q = q.Where("i.id < ?", until)
	}
	if err := itemViews(q).Offset(skip).Limit(limit).Scan(&out.Items).Error; err != nil {
		return out, fmt.Errorf("store: run items: %w", err)
	}
	if fromEnd {
		slices.Reverse(out.Items)
	}
	return out, nil
}

// unfiltered says whether f lists all of a run's items.
func (f ItemFilter) unfiltered() bool {
	return f.Status == "" && f.Model == "" && f.Phase == "" && f.Reason == "" && f.Violation == ""
}

// denseItemID returns the id of a run's item at position n (from 0) when
// the run's ids are dense, as one creation statement makes them: its
// lowest to highest id span exactly total ids, so every id between is one
// of its items. It is 0 otherwise, and the caller walks the index. Two
// index seeks answer at any depth, where a walk reads n index entries.
func (s *Store) denseItemID(ctx context.Context, runID, total, n int64) (int64, error) {
	var span struct{ Lo, Hi int64 }
	// Two subqueries, not MIN and MAX in one: SQLite seeks the index for a
	// lone MIN or MAX only.
	err := s.conn(ctx).Raw(`SELECT COALESCE((SELECT MIN(id) FROM items WHERE run_id = ?), 0) AS lo,
		COALESCE((SELECT MAX(id) FROM items WHERE run_id = ?), 0) AS hi`, runID, runID).Scan(&span).Error
	if err != nil {
		return 0, fmt.Errorf("store: run item span: %w", err)
	}
	if span.Lo == 0 || span.Hi-span.Lo+1 != total {
		return 0, nil
	}
	return span.Lo + n, nil
}

// seekItems walks the filtered items' index past skip of them and returns
// the next id; 0 past the end.
func (s *Store) seekItems(ctx context.Context, runID int64, f ItemFilter, skip int) (int64, error) {
	q, err := s.itemsInOrder(ctx, runID, f, false)
	if err != nil {
		return 0, err
	}
	var ids []int64
	if err := q.Select("i.id").Offset(skip).Limit(1).Pluck("i.id", &ids).Error; err != nil {
		return 0, fmt.Errorf("store: seek run items: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}

// CurrentWork names what a run is doing right now, from its newest claim.
type CurrentWork struct {
	TaskID   string     `json:"task_id"`
	Provider string     `json:"provider"`
	Model    string     `json:"model"`
	Status   ItemStatus `json:"status"`
	// AgentName and AgentVersion name the agent when the target is one.
	AgentName    string `json:"agent_name,omitempty"`
	AgentVersion int    `json:"agent_version,omitempty"`
}

// Label names the target at work as RunTarget.Label does.
func (w CurrentWork) Label() string {
	return RunTarget{ProviderName: w.Provider, Model: w.Model, AgentName: w.AgentName, AgentVersion: w.AgentVersion}.Label()
}

// RunCurrent returns the most recently claimed item still in flight, if any.
func (s *Store) RunCurrent(ctx context.Context, runID int64) (*CurrentWork, error) {
	var rows []CurrentWork
	err := s.conn(ctx).Table("items i").
		Select("rt.task_key AS task_id, tg.provider_name AS provider, tg.model, i.status, tg.agent_name, tg.agent_version").
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Joins("JOIN run_targets tg ON tg.id = i.run_target_id").
		Where("i.run_id = ? AND i.status IN ?", runID, []ItemStatus{ItemInProgress, ItemJudging}).
		Order("i.claimed_at DESC").Limit(1).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: run current: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// Stats are averages over a set of items; nil when nothing was measured.
type Stats struct {
	Items        int64    `json:"items"`
	Completed    int64    `json:"completed"`
	Failed       int64    `json:"failed"`
	Scored       int64    `json:"scored"`
	Passed       int64    `json:"passed"`
	PassRate     *float64 `json:"pass_rate" gorm:"-"`
	AvgScore     *float64 `json:"avg_score"`
	AvgTimeMs    *float64 `json:"avg_time_ms"`
	AvgTPS       *float64 `json:"avg_tps"`
	AvgTokens    *float64 `json:"avg_tokens"`
	CostUSD      *float64 `json:"cost_usd" gorm:"column:cost_usd"`
	JudgeCostUSD *float64 `json:"judge_cost_usd" gorm:"column:judge_cost_usd"`
	// CostSource says where CostUSD came from over the items with a cost:
	// their one source, or mixed; JudgeCostSource the same for the judges.
	CostSource      CostSource `json:"cost_source"`
	JudgeCostSource CostSource `json:"judge_cost_source"`
}

// TotalCostUSD is what the models and the judges cost together; nil when neither has a price.
func (st Stats) TotalCostUSD() *float64 {
	if st.CostUSD == nil && st.JudgeCostUSD == nil {
		return nil
	}
	var c float64
	for _, p := range []*float64{st.CostUSD, st.JudgeCostUSD} {
		if p != nil {
			c += *p
		}
	}
	return &c
}

func (st *Stats) finish() {
	if st.Scored > 0 {
		r := float64(st.Passed) / float64(st.Scored)
		st.PassRate = &r
	}
}

// ModelStats are the Stats of one target.
type ModelStats struct {
	TargetID int64  `json:"target_id"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Label names the target for people (RunTarget.Label).
	Label string `json:"label"`
	Stats
}

// TaskStats are the Stats of one task across targets.
type TaskStats struct {
	TaskID   string `json:"task_id" gorm:"column:task_key"`
	Category string `json:"category"`
	Stats
}

// RunSummary aggregates a run's results overall, per model and per task.
type RunSummary struct {
	Overall  Stats        `json:"overall"`
	PerModel []ModelStats `json:"per_model"`
	// PerTask covers the run's first tasks (by task_id) up to the limit asked for.
	PerTask []TaskStats `json:"per_task"`
	// Tasks is how many tasks the run has in all.
	Tasks int64 `json:"tasks"`
	// PassThreshold is the score an item needs to pass.
	PassThreshold float64 `json:"pass_threshold"`
}

// statsSelect aggregates items alone: an item carries its panel's mean
// score, so no join with the scores is needed. Its one placeholder is the
// pass threshold.
var statsSelect = `COUNT(*) AS items,
	SUM(CASE WHEN i.status = 'COMPLETED' THEN 1 ELSE 0 END) AS completed,
	SUM(CASE WHEN i.status = 'FAILED' THEN 1 ELSE 0 END) AS failed,
	COUNT(i.score) AS scored, SUM(CASE WHEN i.score >= ? THEN 1 ELSE 0 END) AS passed,
	AVG(i.score) AS avg_score, AVG(i.time_ms) AS avg_time_ms, AVG(i.tokens_per_s) AS avg_tps,
	AVG(i.completion_tokens) AS avg_tokens, SUM(i.cost_usd) AS cost_usd, SUM(i.judge_cost_usd) AS judge_cost_usd,
	` + sourceOf("CASE WHEN i.cost_usd IS NOT NULL THEN i.cost_source END") + ` AS cost_source,
	` + sourceOf("NULLIF(i.judge_cost_source, '')") + ` AS judge_cost_source`

// sourceOf aggregates the cost sources x gives (NULL: no cost to count)
// into one: ” for none, their one source, or 'mixed'.
func sourceOf(x string) string {
	return "CASE WHEN MIN(" + x + ") IS NULL THEN '' WHEN MIN(" + x + ") = MAX(" + x + ") THEN MIN(" + x + ") ELSE 'mixed' END"
}

// PassThreshold is the score an item needs to pass: the middle of the
// judges' scale, or 0.5 for checks (which score 0 to 1) without judges.
func PassThreshold(judges []RunJudge) float64 {
	if len(judges) == 0 {
		return 0.5
	}
	return float64(judges[0].ScaleMin+judges[0].ScaleMax) / 2
}
