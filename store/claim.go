package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
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
// token for the result write; the phase's own count of calls (answer_attempts
// or judge_attempts) goes up with it.
func (s *Store) ClaimItems(ctx context.Context, p ClaimParams) ([]Item, error) {
	var items []Item
	err := s.Transact(ctx, func(tx *Store) error {
		if p.SlotLimit > 0 && s.dialect == Postgres {
			if err := tx.conn(ctx).Exec("SELECT pg_advisory_xact_lock(hashtext(?))", p.SlotKey).Error; err != nil {
				return fmt.Errorf("store: lock slot: %w", err)
			}
		}
		var err error
		items, err = tx.claim(ctx, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim items: %w", err)
	}
	slices.SortFunc(items, func(a, b Item) int { return cmp.Compare(a.ID, b.ID) })
	return items, nil
}

// claim runs the claim statement of ClaimItems (up to p.Limit items) in
// the caller's transaction. On SQLite it counts the slot first; on
// PostgreSQL the statement counts it.
func (s *Store) claim(ctx context.Context, p ClaimParams) ([]Item, error) {
	limit := max(p.Limit, 1)
	if p.SlotLimit > 0 && s.dialect == SQLite {
		inflight, err := s.slotInUse(ctx, p.SlotKey)
		if err != nil {
			return nil, err
		}
		if limit = min(limit, p.SlotLimit-int(inflight)); limit <= 0 {
			return nil, nil
		}
	}
	sql, args := s.claimSQL(p, "?", "0", limit)
	rows, err := s.rawQuery(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	var items []Item
	err = scanItems(rows, nil, func(it Item) { items = append(items, it) })
	return items, err
}

// claimSQL is the claim statement. It takes up to take items (an SQL
// expression with takeArgs) and, under a slot limit on PostgreSQL, no more
// than the slot has free once give of its holders (an SQL expression) are
// given back by the same statement: successors take their predecessors'
// places that way.
func (s *Store) claimSQL(p ClaimParams, take, give string, takeArgs ...any) (string, []any) {
	now := s.now()
	from, fromArgs := s.statusValue(p.From)
	args := append([]any{p.To, p.WorkerID, p.SlotKey, now, now.Add(p.Lease), now, now, p.RunID}, fromArgs...)
	args = append(args, now)
	cond := ""
	if p.TargetID != 0 {
		cond += " AND run_target_id = ?"
		args = append(args, p.TargetID)
	}
	if p.JudgePos != nil {
		cond += " AND judge_pos = ?"
		args = append(args, *p.JudgePos)
	}
	args = append(args, takeArgs...)
	// SQLite prepares a statement anew at every run when its LIMIT is a bare
	// bound parameter (the planner reads its value); a cast it does not read.
	lock, limitExpr := "", "CAST("+take+" AS INTEGER)"
	if s.dialect == Postgres {
		limitExpr = take
		lock = " FOR UPDATE SKIP LOCKED"
		if p.SlotLimit > 0 {
			// Under the slot's advisory lock, this statement's snapshot sees
			// every committed claim. A successor's claim needs no lock: it
			// swaps holders for others, so it never raises the count.
			limitExpr = "GREATEST(0, LEAST(" + take + ", ? + " + give + " - (" + slotInflightSQL + ")))"
			args = append(args, p.SlotLimit, p.SlotKey, p.SlotKey)
		}
	}
	calls := attemptsColumn(p.To)
	return `UPDATE items SET status = ?, worker_id = ?, slot_key = ?, claimed_at = ?, lease_until = ?,
			attempts = attempts + 1, ` + calls + ` = ` + calls + ` + 1, last_attempt_at = ?, updated_at = ?
		WHERE id IN (SELECT id FROM items WHERE run_id = ? AND status = ` + from + `
			AND (next_retry_at IS NULL OR next_retry_at <= ?)` + cond + `
			AND EXISTS (SELECT 1 FROM runs WHERE runs.id = items.run_id AND runs.status = 'RUNNING' AND runs.deleted_at IS NULL)
			ORDER BY id LIMIT ` + limitExpr + lock + `)
		RETURNING ` + itemColumnList(""), args
}

// attemptsColumn is the count of provider calls of the phase an item in
// status st is in.
func attemptsColumn(st ItemStatus) string {
	if st == ItemWaitingForJudge || st == ItemJudging {
		return "judge_attempts"
	}
	return "answer_attempts"
}

// uncalled takes back the call its claim counted, for a claim that ends
// without one.
func uncalled(updates map[string]any, it *Item) {
	calls := attemptsColumn(it.Status)
	updates[calls] = gorm.Expr(calls + " - 1")
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
	return s.updateLeased(s.claimed(ctx, it), "item", it.ID, updates)
}

// updateLeased writes updates to the leased row q selects as its claim left
// it (an item or a comparison): ErrLeaseLost when the claim no longer holds.
func (s *Store) updateLeased(q *gorm.DB, what string, id int64, updates map[string]any) error {
	storableUpdates(updates)
	updates["updated_at"] = s.now()
	res := q.Updates(updates)
	if res.Error != nil {
		return fmt.Errorf("store: update %s %d: %w", what, id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: update %s %d: %w", what, id, ErrLeaseLost)
	}
	return nil
}

// statusValue is an item status in a WHERE clause: on SQLite a literal, on
// PostgreSQL a parameter (its SQL text and arguments). SQLite weighs a
// status parameter against the items' partial indexes (WHERE status =
// 'FAILED', ...) when it plans, and so prepares the statement again each
// time that parameter is bound afresh, that is at every run: a tenth of
// the engine's CPU at zero latency. Statuses are this package's
// constants, which need no escaping (a test holds them to that); any other
// value stays a parameter.
func (s *Store) statusValue(st ItemStatus) (string, []any) {
	if s.dialect == SQLite && slices.Contains(ItemStatuses, st) {
		return "'" + string(st) + "'", nil
	}
	return "?", []any{st}
}
