package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"tribunal/trajectory"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// BenchmarkResult is what a target model answered, with the reference
// checks scored on it.
type BenchmarkResult struct {
	Request          string
	Response         string
	Answers          *string // a multi-turn task's answers as a JSON list
	TimeMs           int64
	PromptTokens     int64
	CompletionTokens int64
	TokensPerS       float64
	CostUSD          *float64
	CostSource       CostSource
	Scores           []Score
	// Weights are the run's (runs.ItemWeights), which weigh Scores into the
	// item's overall (Weigh); nil leaves the overall unknown.
	Weights []SourceWeight
	// Judged says judges follow; without judges the item completes now.
	Judged bool
	// Agent is what an agent target did for its answer; nil for a model target.
	Agent *AgentTrace
	// Imported keeps the item's time, tokens and cost as they were imported
	// (unknown ones stay unknown, not 0).
	Imported bool
}

// AgentTrace is what an agent did for one item: its tool calls, how many
// model calls (turns) it took, and the reasoning text a provider returned.
type AgentTrace struct {
	ToolCalls trajectory.Calls
	Turns     int
	Reasoning string
}

// columns are the item columns that store the trace.
func (a *AgentTrace) columns(updates map[string]any) {
	if a == nil {
		return
	}
	calls := a.ToolCalls
	if calls == nil {
		calls = trajectory.Calls{}
	}
	b, _ := json.Marshal(calls)
	updates["tool_calls"] = string(b)
	updates["turns"] = a.Turns
	var reasoning *string
	if a.Reasoning != "" {
		reasoning = &a.Reasoning
	}
	updates["reasoning"] = reasoning
}

// Completion is a claimed item's outcome, written by CompleteAll.
type Completion struct {
	Item       *Item
	updates    map[string]any
	scores     []Score
	violations []Violation
	// Next asks for a successor to take the item's place on its slot.
	Next bool

	// Err is set when the outcome was not written: ErrLeaseLost (wrapped)
	// when the claim no longer held.
	Err error
	// Successor is the item claimed in its place, if one was asked for and ready.
	Successor *Item
}

// BenchmarkCompletion stores the answer and its check scores, and hands the
// item to the judges (or completes it when the run has none).
func BenchmarkCompletion(it *Item, r BenchmarkResult) *Completion {
	updates := map[string]any{
		"status": ItemWaitingForJudge, "request": r.Request, "response": r.Response, "answers": r.Answers, "time_ms": r.TimeMs,
		"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "tokens_per_s": r.TokensPerS,
		"cost_usd": r.CostUSD, "cost_source": string(r.CostSource), "error": "", "worker_id": "", "lease_until": nil, "failures": 0, "next_retry_at": nil,
	}
	// The answer is an item's first write of scores: its overall starts here.
	updates["overall_sum"], updates["overall_weight"] = Weigh(r.Weights, r.Scores)
	r.Agent.columns(updates)
	if r.Imported {
		for _, k := range []string{"request", "response", "time_ms", "prompt_tokens", "completion_tokens", "tokens_per_s", "cost_usd", "cost_source"} {
			delete(updates, k)
		}
		if r.TokensPerS > 0 {
			updates["tokens_per_s"] = r.TokensPerS
		}
	}
	if !r.Judged {
		// Without judges the item is done, and its score is the mean of its checks (0 to 1).
		updates["status"] = ItemCompleted
		var sum, n float64
		for _, sc := range r.Scores {
			if strings.HasPrefix(sc.Source, "check:") {
				sum, n = sum+sc.Score, n+1
			}
		}
		if n > 0 {
			updates["score"] = sum / n
		}
	}
	return &Completion{Item: it, updates: updates, scores: r.Scores}
}

// CompleteBenchmark writes BenchmarkCompletion alone; with next, it claims
// the item's successor (see CompleteAll).
func (s *Store) CompleteBenchmark(ctx context.Context, it *Item, r BenchmarkResult, next *ClaimParams) (*Item, error) {
	return s.completeOne(ctx, BenchmarkCompletion(it, r), next)
}

// RetryItem puts a claimed item back to status with a retry time and the
// error seen; failed counts the attempt as a provider failure, else the
// item is handed back unworked and its claim is no call.
func (s *Store) RetryItem(ctx context.Context, it *Item, back ItemStatus, at time.Time, reason string, failed bool) error {
	updates := map[string]any{"status": back, "next_retry_at": at, "error": reason, "worker_id": "", "lease_until": nil}
	if failed {
		updates["failures"] = gorm.Expr("failures + 1")
	} else {
		uncalled(updates, it)
	}
	return s.updateClaimed(ctx, it, updates)
}

// FailItem marks a claimed item FAILED, keeping the reason and the phase it
// failed in; called says whether the claim made its provider call (a judge
// whose provider was deleted makes none).
func (s *Store) FailItem(ctx context.Context, it *Item, phase Phase, reason string, called bool) error {
	updates := map[string]any{"status": ItemFailed, "failed_phase": phase, "error": reason, "worker_id": "", "lease_until": nil}
	if !called {
		uncalled(updates, it)
	}
	return s.updateClaimed(ctx, it, updates)
}

// FailAgentItem fails a claimed agent item in the benchmarking phase and
// keeps what the agent did before it failed (say, no final answer within
// its turns).
func (s *Store) FailAgentItem(ctx context.Context, it *Item, reason string, trace *AgentTrace) error {
	updates := map[string]any{"status": ItemFailed, "failed_phase": PhaseBenchmarking, "error": reason, "worker_id": "", "lease_until": nil}
	trace.columns(updates)
	return s.updateClaimed(ctx, it, updates)
}

// Verdict is one panel judge's outcome for an item.
type Verdict struct {
	Overall float64 // the judge's overall score, averaged into the item's score
	CostUSD float64
	// CostSource is where CostUSD came from; the item merges its judges'.
	CostSource CostSource
	Scores     []Score
	// Weights weigh Scores into the item's overall, as BenchmarkResult's do.
	Weights []SourceWeight
	// Violations are what the judge listed, when its style asks.
	Violations []Violation
	// Last says this was the panel's last judge: the item completes.
	Last bool
}

// JudgingCompletion stores one judge's scores and moves the item on to the
// next judge of the panel, or completes it. The item's score is the running
// mean of the panel's overall scores, so aggregates never need to average
// per item first.
func JudgingCompletion(it *Item, v Verdict) *Completion {
	updates := map[string]any{"error": "", "worker_id": "", "lease_until": nil, "next_retry_at": nil, "failures": 0,
		"judge_cost_usd": gorm.Expr("judge_cost_usd + ?", v.CostUSD),
		"score":          gorm.Expr("(COALESCE(score, 0) * judge_pos + ?) / (judge_pos + 1)", v.Overall)}
	// The verdict's scores add to the overall so far (NULL, unknown, stays so).
	sum, weight := Weigh(v.Weights, v.Scores)
	updates["overall_sum"], updates["overall_weight"] = gorm.Expr("overall_sum + ?", sum), gorm.Expr("overall_weight + ?", weight)
	// The claimed row is this write's base (the claim guards it): the first
	// judge's source stands alone, a later one merges into the panel's.
	if it.JudgePos == 0 {
		updates["judge_cost_source"] = string(v.CostSource)
	} else {
		updates["judge_cost_source"] = string(it.JudgeCostSource.Merge(v.CostSource))
	}
	if v.Last {
		updates["status"] = ItemCompleted
	} else {
		updates["status"] = ItemWaitingForJudge
		updates["judge_pos"] = gorm.Expr("judge_pos + 1")
	}
	return &Completion{Item: it, updates: updates, scores: v.Scores, violations: v.Violations}
}

// CompleteJudging writes JudgingCompletion alone; with next, it claims the
// item's successor (see CompleteAll).
func (s *Store) CompleteJudging(ctx context.Context, it *Item, v Verdict, next *ClaimParams) (*Item, error) {
	return s.completeOne(ctx, JudgingCompletion(it, v), next)
}

func (s *Store) completeOne(ctx context.Context, c *Completion, next *ClaimParams) (*Item, error) {
	c.Next = next != nil
	s.CompleteAll(ctx, []*Completion{c}, next)
	return c.Successor, c.Err
}

// CompleteAll writes claimed items' outcomes with their scores, each once:
// an outcome and its scores land only if its claim still holds. For every
// written completion that asks for one, it claims by next's terms an item
// to take its place on the slot (the next calls start with no claim round
// trip), as far as items are ready. It is one transaction on SQLite and
// on PostgreSQL one statement per kind of completion (answers, verdicts:
// those that set the same columns), one kind being the rule; should the batch fail as a whole, each
// completion is tried alone, so that one bad outcome fails only itself.
func (s *Store) CompleteAll(ctx context.Context, cs []*Completion, next *ClaimParams) {
	now := s.now()
	for _, c := range cs {
		storableUpdates(c.updates)
		c.updates["updated_at"] = now
		for i := range c.scores {
			// The statements take each score's item, run and target from the
			// item's row (completeAllOnce, sqliteWrite).
			sc := &c.scores[i]
			sc.CreatedAt = now
			sc.Reasoning, sc.Raw, sc.Note = storable(sc.Reasoning), storable(sc.Raw), storable(sc.Note)
		}
		for i := range c.violations {
			v := &c.violations[i]
			v.RunID, v.ItemID, v.CreatedAt = c.Item.RunID, c.Item.ID, now
			v.Detail = storable(v.Detail)
		}
	}
	if s.dialect == SQLite {
		s.completeEach(ctx, cs, next, s.completeAllSQLite)
		return
	}
	for _, group := range byPgSetShape(cs) {
		s.completeEach(ctx, group, next, func(ctx context.Context, cs []*Completion, next *ClaimParams) error {
			return s.completeAllOnce(ctx, cs, next, now)
		})
	}
}

// completeEach writes cs with write, and each alone should the batch fail.
func (s *Store) completeEach(ctx context.Context, cs []*Completion, next *ClaimParams, write func(context.Context, []*Completion, *ClaimParams) error) {
	for _, c := range cs {
		c.Err, c.Successor = nil, nil
	}
	err := write(ctx, cs, next)
	if err == nil {
		return
	}
	if len(cs) == 1 {
		cs[0].Err, cs[0].Successor = err, nil
		return
	}
	for _, c := range cs {
		s.completeEach(ctx, []*Completion{c}, next, write)
	}
}

// give hands the claimed successors to the written completions that asked.
func give(cs []*Completion, successors []Item) {
	slices.SortFunc(successors, func(a, b Item) int { return cmp.Compare(a.ID, b.ID) })
	for _, c := range cs {
		if c.Err == nil && c.Next && len(successors) > 0 {
			c.Successor, successors = &successors[0], successors[1:]
		}
	}
}

func leaseLost(it *Item) error { return fmt.Errorf("store: complete item %d: %w", it.ID, ErrLeaseLost) }

// storable replaces NUL characters, which PostgreSQL text cannot hold: a
// model reply carrying one would otherwise be refused on every attempt.
func storable(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// storableUpdates makes the text values of an item's updates storable.
func storableUpdates(updates map[string]any) {
	for k, v := range updates {
		switch x := v.(type) {
		case string:
			updates[k] = storable(x)
		case *string:
			if x != nil {
				t := storable(*x)
				updates[k] = &t
			}
		}
	}
}

// setClause renders updates as a SET list in a fixed column order, so the
// same updates give the same statement text, with its arguments.
func setClause(updates map[string]any) (string, []any) {
	cols := make([]string, 0, len(updates))
	for c := range updates {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	var args []any
	sets := make([]string, len(cols))
	for i, c := range cols {
		if e, ok := updates[c].(clause.Expr); ok {
			sets[i] = c + " = " + e.SQL
			args = append(args, e.Vars...)
			continue
		}
		sets[i] = c + " = ?"
		args = append(args, updates[c])
	}
	return strings.Join(sets, ", "), args
}

// RescueExpired returns items whose lease ran out (their worker died) to the
// state they were claimed from, and such pairwise comparisons to NEW, so
// another worker picks them up; it reports how many it freed. Each WHERE is
// its lease index's own predicate, so both databases use that index.
func (s *Store) RescueExpired(ctx context.Context) (int64, error) {
	now := s.now()
	res := s.conn(ctx).Exec(`UPDATE items SET
			status = CASE status WHEN 'IN_PROGRESS' THEN 'NEW' ELSE 'WAITING_FOR_JUDGE' END,
			worker_id = '', lease_until = NULL, updated_at = ?
		WHERE status IN ('IN_PROGRESS', 'JUDGING') AND lease_until < ?`, now, now)
	if res.Error != nil {
		return 0, fmt.Errorf("store: rescue items: %w", res.Error)
	}
	n, err := s.rescueComparisons(ctx, now)
	return res.RowsAffected + n, err
}

// Progress counts a run's items by status.
type Progress struct {
	Total    int64                `json:"total"`
	ByStatus map[ItemStatus]int64 `json:"by_status"`
}

// Count returns the number of items in one status.
func (p Progress) Count(st ItemStatus) int64 { return p.ByStatus[st] }

// Benchmarked counts items past the benchmarking phase.
func (p Progress) Benchmarked() int64 {
	return p.Total - p.ByStatus[ItemNew] - p.ByStatus[ItemInProgress]
}

// Done counts items that need nothing more: COMPLETED or FAILED.
func (p Progress) Done() int64 { return p.ByStatus[ItemCompleted] + p.ByStatus[ItemFailed] }

// RunProgress counts a run's items by status.
func (s *Store) RunProgress(ctx context.Context, runID int64) (Progress, error) {
	type row struct {
		Status ItemStatus
		N      int64
	}
	var rows []row
	if err := s.conn(ctx).Model(&Item{}).Select("status, COUNT(*) AS n").Where("run_id = ?", runID).Group("status").Scan(&rows).Error; err != nil {
		return Progress{}, fmt.Errorf("store: run progress: %w", err)
	}
	p := Progress{ByStatus: map[ItemStatus]int64{}}
	for _, st := range ItemStatuses {
		p.ByStatus[st] = 0
	}
	for _, r := range rows {
		p.ByStatus[r.Status] = r.N
		p.Total += r.N
	}
	return p, nil
}

// RenewLease pushes a claimed item's lease forward while its call runs.
func (s *Store) RenewLease(ctx context.Context, it *Item, lease time.Duration) error {
	res := s.claimed(ctx, it).Update("lease_until", s.now().Add(lease))
	if res.Error != nil {
		return fmt.Errorf("store: renew lease of item %d: %w", it.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: renew lease of item %d: %w", it.ID, ErrLeaseLost)
	}
	return nil
}
