package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ClaimParams says which items to claim and for whom.
type ClaimParams struct {
	RunID    int64
	TargetID int64 // 0: any target of the run
	From     ItemStatus
	To       ItemStatus
	WorkerID string
	Lease    time.Duration
	Limit    int
	// SlotKey names the (provider, model) the calls go to; with SlotLimit > 0
	// at most SlotLimit items hold it at once, across every worker process.
	SlotKey   string
	SlotLimit int
	// JudgePos, when set, claims only items waiting for that judge of the panel.
	JudgePos *int
}

// SlotKey is the concurrency key of a provider's model.
func SlotKey(providerID *int64, model string) string {
	id := int64(0)
	if providerID != nil {
		id = *providerID
	}
	return fmt.Sprintf("%d:%s", id, model)
}

// ClaimItems atomically moves up to Limit ready items of a RUNNING run from
// From to To under a lease held by WorkerID, and returns them. On PostgreSQL
// the candidate rows are locked with FOR UPDATE SKIP LOCKED so concurrent
// workers never claim the same item; SQLite has a single writer, so the same
// UPDATE … WHERE id IN (SELECT …) is atomic there without the lock clause.
// The slot count and the claim share a transaction (and, on PostgreSQL, an
// advisory lock on the slot), so the per-(provider, model) limit holds across
// processes. Attempts is incremented and, never reset, doubles as the claim
// token for the result write.
func (s *Store) ClaimItems(ctx context.Context, p ClaimParams) ([]Item, error) {
	var items []Item
	err := s.Transact(ctx, func(tx *Store) error {
		if p.SlotLimit > 0 && s.dialect == Postgres {
			if err := tx.conn(ctx).Exec("SELECT pg_advisory_xact_lock(hashtext(?))", p.SlotKey).Error; err != nil {
				return fmt.Errorf("store: lock slot: %w", err)
			}
		}
		var err error
		items, err = tx.claim(ctx, p, "", 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim items: %w", err)
	}
	slices.SortFunc(items, func(a, b Item) int { return cmp.Compare(a.ID, b.ID) })
	return items, nil
}

// claim runs the claim statement of ClaimItems; cond narrows the candidates
// further, and held is how many of the slot's holders the caller is giving
// back in the same statement (a successor takes its predecessor's place).
func (s *Store) claim(ctx context.Context, p ClaimParams, cond string, held int) ([]Item, error) {
	limit := max(p.Limit, 1)
	if p.SlotLimit > 0 && s.dialect == SQLite {
		// PostgreSQL counts inside the claim statement below.
		inflight, err := s.slotInUse(ctx, p.SlotKey)
		if err != nil {
			return nil, err
		}
		if limit = min(limit, p.SlotLimit+held-int(inflight)); limit <= 0 {
			return nil, nil
		}
	}
	sql, args := s.claimSQL(p, cond, limit, held)
	var items []Item
	if err := s.rawScan(ctx, &items, sql, args...); err != nil {
		return nil, err
	}
	return items, nil
}

// claimSQL is the claim statement; see claim.
func (s *Store) claimSQL(p ClaimParams, cond string, limit, held int) (string, []any) {
	now := s.now()
	args := []any{p.To, p.WorkerID, p.SlotKey, now, now.Add(p.Lease), now, now, p.RunID, p.From, now}
	if p.TargetID != 0 {
		cond += " AND run_target_id = ?"
		args = append(args, p.TargetID)
	}
	if p.JudgePos != nil {
		cond += " AND judge_pos = ?"
		args = append(args, *p.JudgePos)
	}
	args = append(args, limit)
	lock, limitExpr := "", "?"
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
		if p.SlotLimit > 0 {
			// Under the slot's advisory lock, this statement's snapshot sees
			// every committed claim. A successor's claim needs no lock: it
			// swaps one holder for another, so it never raises the count.
			limitExpr = "GREATEST(0, LEAST(?, ? - (" + slotInflightSQL + ")))"
			args = append(args, p.SlotLimit+held, p.SlotKey, p.SlotKey)
		}
	}
	return `UPDATE items SET status = ?, worker_id = ?, slot_key = ?, claimed_at = ?, lease_until = ?,
			attempts = attempts + 1, last_attempt_at = ?, updated_at = ?
		WHERE id IN (SELECT id FROM items WHERE run_id = ? AND status = ?
			AND (next_retry_at IS NULL OR next_retry_at <= ?)` + cond + `
			AND EXISTS (SELECT 1 FROM runs WHERE runs.id = items.run_id AND runs.status = 'RUNNING')
			ORDER BY id LIMIT ` + limitExpr + lock + `)
		RETURNING *`, args
}

// claimed restricts a write to the item as this claim left it, so a worker
// whose lease expired and was re-claimed elsewhere cannot write a result twice.
func (s *Store) claimed(ctx context.Context, it *Item) *gorm.DB {
	return s.conn(ctx).Model(&Item{}).
		Where("id = ? AND status = ? AND worker_id = ? AND attempts = ?", it.ID, it.Status, it.WorkerID, it.Attempts)
}

// ErrLeaseLost means the item was taken from this worker (lease expired, run deleted).
var ErrLeaseLost = &ConflictError{Message: "item lease lost"}

// updateClaimed writes a claimed item's outcome.
func (s *Store) updateClaimed(ctx context.Context, it *Item, updates map[string]any) error {
	storableUpdates(updates)
	updates["updated_at"] = s.now()
	res := s.claimed(ctx, it).Updates(updates)
	if res.Error != nil {
		return fmt.Errorf("store: update item %d: %w", it.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: update item %d: %w", it.ID, ErrLeaseLost)
	}
	return nil
}

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
	Scores           []Score
	// Judged says judges follow; without judges the item completes now.
	Judged bool
}

// CompleteBenchmark stores the answer and its check scores, and hands the
// item to the judges (or completes it when the run has none). With next, the
// same write claims the item's successor on its slot (see completeClaimed).
func (s *Store) CompleteBenchmark(ctx context.Context, it *Item, r BenchmarkResult, next *ClaimParams) (*Item, error) {
	updates := map[string]any{
		"status": ItemWaitingForJudge, "request": r.Request, "response": r.Response, "answers": r.Answers, "time_ms": r.TimeMs,
		"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "tokens_per_s": r.TokensPerS,
		"cost_usd": r.CostUSD, "error": "", "worker_id": "", "lease_until": nil, "failures": 0, "next_retry_at": nil,
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
	return s.completeClaimed(ctx, it, updates, r.Scores, next)
}

// RetryItem puts a claimed item back to status with a retry time and the
// error seen; failed counts the attempt as a provider failure.
func (s *Store) RetryItem(ctx context.Context, it *Item, back ItemStatus, at time.Time, reason string, failed bool) error {
	updates := map[string]any{"status": back, "next_retry_at": at, "error": reason, "worker_id": "", "lease_until": nil}
	if failed {
		updates["failures"] = gorm.Expr("failures + 1")
	}
	return s.updateClaimed(ctx, it, updates)
}

// FailItem marks a claimed item FAILED, keeping the reason and the phase it failed in.
func (s *Store) FailItem(ctx context.Context, it *Item, phase Phase, reason string) error {
	return s.updateClaimed(ctx, it, map[string]any{
		"status": ItemFailed, "failed_phase": phase, "error": reason, "worker_id": "", "lease_until": nil,
	})
}

// Verdict is one panel judge's outcome for an item.
type Verdict struct {
	Overall float64 // the judge's overall score, averaged into the item's score
	CostUSD float64
	Scores  []Score
	// Last says this was the panel's last judge: the item completes.
	Last bool
}

// CompleteJudging stores one judge's scores and moves the item on to the
// next judge of the panel, or completes it, once. The item's score is the
// running mean of the panel's overall scores, so aggregates never need to
// average per item first. With next, the same write claims the item's
// successor on its slot (see completeClaimed).
func (s *Store) CompleteJudging(ctx context.Context, it *Item, v Verdict, next *ClaimParams) (*Item, error) {
	updates := map[string]any{"error": "", "worker_id": "", "lease_until": nil, "next_retry_at": nil, "failures": 0,
		"judge_cost_usd": gorm.Expr("judge_cost_usd + ?", v.CostUSD),
		"score":          gorm.Expr("(COALESCE(score, 0) * judge_pos + ?) / (judge_pos + 1)", v.Overall)}
	if v.Last {
		updates["status"] = ItemCompleted
	} else {
		updates["status"] = ItemWaitingForJudge
		updates["judge_pos"] = gorm.Expr("judge_pos + 1")
	}
	return s.completeClaimed(ctx, it, updates, v.Scores, next)
}

// completeClaimed writes a claimed item's outcome together with its scores,
// once: the scores land only if the claim still holds. With next, it also
// claims one item by next's terms to take this one's place on its slot and
// returns it (nil when none is ready): the caller goes straight on to the
// next call, with no claim round trip between calls.
func (s *Store) completeClaimed(ctx context.Context, it *Item, updates map[string]any, scores []Score, next *ClaimParams) (*Item, error) {
	now := s.now()
	storableUpdates(updates)
	for i := range scores {
		sc := &scores[i]
		sc.RunID, sc.ItemID, sc.CreatedAt = it.RunID, it.ID, now
		sc.Reasoning, sc.Raw = storable(sc.Reasoning), storable(sc.Raw)
	}
	if s.dialect == Postgres {
		return s.completeOnce(ctx, it, updates, scores, next, now)
	}
	updates["updated_at"] = now
	sets, args := setClause(updates)
	update := "UPDATE items SET " + sets + " WHERE id = ? AND status = ? AND worker_id = ? AND attempts = ?"
	args = append(args, it.ID, it.Status, it.WorkerID, it.Attempts)
	if err := s.prepared.prepare(ctx, update); err != nil {
		return nil, err
	}
	var successor *Item
	err := s.Transact(ctx, func(tx *Store) error {
		n, err := tx.rawExec(ctx, update, args...)
		if err != nil {
			return fmt.Errorf("store: update item %d: %w", it.ID, err)
		}
		if n == 0 {
			return fmt.Errorf("store: update item %d: %w", it.ID, ErrLeaseLost)
		}
		if len(scores) > 0 {
			if err := tx.conn(ctx).Create(&scores).Error; err != nil {
				return fmt.Errorf("store: save scores: %w", err)
			}
		}
		if next == nil {
			return nil
		}
		p := *next
		p.Limit = 1
		// The item is written already, so the slot count no longer holds it.
		items, err := tx.claim(ctx, p, "", 0)
		if err != nil {
			return fmt.Errorf("store: claim successor: %w", err)
		}
		if len(items) > 0 {
			successor = &items[0]
		}
		return nil
	})
	return successor, err
}

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

// completeOnce is completeClaimed in one PostgreSQL statement: the scores
// are inserted, and the successor claimed, only if the claimed item could be
// updated.
func (s *Store) completeOnce(ctx context.Context, it *Item, updates map[string]any, scores []Score, next *ClaimParams, now time.Time) (*Item, error) {
	updates["updated_at"] = now
	sets, args := setClause(updates)
	args = append(args, it.ID, it.Status, it.WorkerID, it.Attempts)
	sql := `WITH done AS (
			UPDATE items SET ` + sets + `
			WHERE id = ? AND status = ? AND worker_id = ? AND attempts = ? RETURNING id, run_id)`
	if len(scores) > 0 {
		values := make([]string, len(scores))
		args = append(args, now)
		for i, sc := range scores {
			values[i] = "(?::bigint, ?::text, ?::text, ?::double precision, ?::text, ?::text)"
			args = append(args, sc.RunJudgeID, sc.Source, sc.Metric, sc.Score, sc.Reasoning, sc.Raw)
		}
		sql += `, saved AS (INSERT INTO scores (run_id, item_id, run_judge_id, source, metric, score, reasoning, raw, created_at)
			SELECT done.run_id, done.id, v.judge, v.source, v.metric, v.score, v.reasoning, v.raw, ?
			FROM done CROSS JOIN (VALUES ` + strings.Join(values, ", ") + `) AS v(judge, source, metric, score, reasoning, raw))`
	}
	// One row: whether the item was written, and the successor's columns
	// (NULL when there is none).
	result := ` SELECT (SELECT COUNT(*) FROM done) AS written`
	if next != nil {
		p := *next
		p.Limit = 1
		claim, claimArgs := s.claimSQL(p, " AND EXISTS (SELECT 1 FROM done)", 1, 1)
		sql += `, successor AS (` + claim + `)`
		args = append(args, claimArgs...)
		result += `, successor.* FROM (SELECT 1) AS one LEFT JOIN successor ON true`
	}
	var row struct {
		Written int64
		Item
	}
	if err := s.rawScan(ctx, &row, sql+result, args...); err != nil {
		return nil, fmt.Errorf("store: complete item %d: %w", it.ID, err)
	}
	if row.Written == 0 {
		return nil, fmt.Errorf("store: complete item %d: %w", it.ID, ErrLeaseLost)
	}
	if row.ID == 0 {
		return nil, nil
	}
	return &row.Item, nil
}

// FailTargetItems fails every NEW item of a target, e.g. after its warm-up failed.
func (s *Store) FailTargetItems(ctx context.Context, targetID int64, reason string) (int64, error) {
	res := s.conn(ctx).Model(&Item{}).Where("run_target_id = ? AND status = ?", targetID, ItemNew).
		Updates(map[string]any{"status": ItemFailed, "failed_phase": PhaseBenchmarking, "error": reason, "updated_at": s.now()})
	if res.Error != nil {
		return 0, fmt.Errorf("store: fail target items: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// ClaimWarmup gives one worker the right to warm a target up: true when this
// worker holds it (a lease, so a dead worker's warm-up is taken over).
func (s *Store) ClaimWarmup(ctx context.Context, targetID int64, workerID string, lease time.Duration) (bool, error) {
	now := s.now()
	res := s.conn(ctx).Model(&RunTarget{}).
		Where("id = ? AND warmup_status = ? AND (warmup_worker = '' OR warmup_until < ?)", targetID, WarmupPending, now).
		Updates(map[string]any{"warmup_worker": workerID, "warmup_until": now.Add(lease)})
	if res.Error != nil {
		return false, fmt.Errorf("store: claim warm-up: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// RenewWarmup extends this worker's warm-up lease while the warm-up call runs.
func (s *Store) RenewWarmup(ctx context.Context, targetID int64, workerID string, lease time.Duration) error {
	err := s.conn(ctx).Model(&RunTarget{}).Where("id = ? AND warmup_worker = ? AND warmup_status = ?", targetID, workerID, WarmupPending).
		Update("warmup_until", s.now().Add(lease)).Error
	if err != nil {
		return fmt.Errorf("store: renew warm-up: %w", err)
	}
	return nil
}

// SetWarmup records the outcome of a target's warm-up call.
func (s *Store) SetWarmup(ctx context.Context, targetID int64, status, reason string) error {
	err := s.conn(ctx).Model(&RunTarget{}).Where("id = ?", targetID).
		Updates(map[string]any{"warmup_status": status, "warmup_error": reason, "warmup_worker": "", "warmup_until": nil}).Error
	if err != nil {
		return fmt.Errorf("store: set warm-up: %w", err)
	}
	return nil
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

// Percent is Done as a percentage of Total.
func (p Progress) Percent() int {
	if p.Total == 0 {
		return 0
	}
	return int(p.Done() * 100 / p.Total)
}

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

// WorkItem is a claimed item with what the engine needs to run it.
type WorkItem struct {
	Item
	Task   RunTask
	Target RunTarget
}

// RunTasksFrom lists up to limit of a run's frozen tasks from id fromID on,
// in id order: the engine loads the tasks its claims need a window at a time.
func (s *Store) RunTasksFrom(ctx context.Context, runID, fromID int64, limit int) ([]RunTask, error) {
	var tasks []RunTask
	if err := s.conn(ctx).Where("run_id = ? AND id >= ?", runID, fromID).Order("id").Limit(limit).Find(&tasks).Error; err != nil {
		return nil, fmt.Errorf("store: run tasks from %d: %w", fromID, err)
	}
	return tasks, nil
}

// RunTargets lists a run's targets in order.
func (s *Store) RunTargets(ctx context.Context, runID int64) ([]RunTarget, error) {
	var ts []RunTarget
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("position").Find(&ts).Error; err != nil {
		return nil, fmt.Errorf("store: run targets: %w", err)
	}
	return ts, nil
}

// NextTarget returns the first target (by position) of a run whose items are
// not all benchmarked (NEW or IN_PROGRESS remain), or nil when benchmarking is
// done. Groups thus run one after another, never overlapping.
func (s *Store) NextTarget(ctx context.Context, runID int64) (*RunTarget, error) {
	var t RunTarget
	err := s.conn(ctx).Where("run_id = ? AND EXISTS (SELECT 1 FROM items i WHERE i.run_target_id = run_targets.id AND i.status IN ?)",
		runID, []ItemStatus{ItemNew, ItemInProgress}).
		Order("position").Take(&t).Error
	if err == gorm.ErrRecordNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: next target: %w", err)
	}
	return &t, nil
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
