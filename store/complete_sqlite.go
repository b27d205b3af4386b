package store

import (
	"context"
	"fmt"
	"strings"
)

// completeAllSQLite is CompleteAll in one SQLite transaction: each
// completion's update, then its scores and violations if the update took,
// then the claim of the successors. Every statement is prepared once (see
// stmtCache): the connection they share is the one every write waits for.
func (s *Store) completeAllSQLite(ctx context.Context, cs []*Completion, next *ClaimParams) error {
	writes := make([]sqliteWrite, len(cs))
	for i, c := range cs {
		writes[i].build(s, c)
		for _, text := range []string{writes[i].update, writes[i].scores, writes[i].violations} {
			if text == "" {
				continue
			}
			if err := s.prepared.prepare(ctx, text); err != nil {
				return err
			}
		}
	}
	return s.Transact(ctx, func(tx *Store) error {
		wanted := 0
		for i, c := range cs {
			c.Err = nil
			written, err := writes[i].run(ctx, tx)
			if err != nil {
				return fmt.Errorf("store: complete item %d: %w", c.Item.ID, err)
			}
			if !written {
				c.Err = leaseLost(c.Item)
				continue
			}
			if c.Next {
				wanted++
			}
		}
		if next == nil || wanted == 0 {
			return nil
		}
		p := *next
		p.Limit = wanted
		// The items are written already, so the slot count no longer holds them.
		successors, err := tx.claim(ctx, p)
		if err != nil {
			return fmt.Errorf("store: claim successors: %w", err)
		}
		give(cs, successors)
		return nil
	})
}

// sqliteWrite is one completion's statements ("" for none) and their arguments.
type sqliteWrite struct {
	update, scores, violations             string
	updateArgs, scoresArgs, violationsArgs []any
}

func (w *sqliteWrite) build(s *Store, c *Completion) {
	sets, args := setClause(c.updates)
	status, statusArgs := s.statusValue(c.Item.Status)
	w.update = "UPDATE items SET " + sets + " WHERE id = ? AND status = " + status + " AND worker_id = ? AND attempts = ?"
	w.updateArgs = append(append(append(args, c.Item.ID), statusArgs...), c.Item.WorkerID, c.Item.Attempts)
	if len(c.scores) > 0 {
		// The item's run, target and answer length are read from its row as
		// this transaction just wrote it, as PostgreSQL's statement reads them.
		w.scores = `INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, reasoning, raw, note, created_at)
			SELECT i.run_id, i.id, i.run_target_id, ` + answerLengthOf("i.response") + `, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8
			FROM items i, (VALUES ` + rowsOf(len(c.scores), 8) + `) v WHERE i.id = ?`
		for _, sc := range c.scores {
			w.scoresArgs = append(w.scoresArgs, sc.RunJudgeID, sc.Source, sc.Metric, sc.Score, sc.Reasoning, sc.Raw, sc.Note, sc.CreatedAt)
		}
		w.scoresArgs = append(w.scoresArgs, c.Item.ID)
	}
	if len(c.violations) > 0 {
		w.violations = "INSERT INTO violations (run_id, item_id, run_judge_id, category, detail, created_at) VALUES " +
			rowsOf(len(c.violations), 6)
		for _, v := range c.violations {
			w.violationsArgs = append(w.violationsArgs, v.RunID, v.ItemID, v.RunJudgeID, v.Category, v.Detail, v.CreatedAt)
		}
	}
}

// run writes the completion in tx; written is false when its claim no
// longer held, and then nothing is written.
func (w *sqliteWrite) run(ctx context.Context, tx *Store) (written bool, err error) {
	n, err := tx.rawExec(ctx, w.update, w.updateArgs...)
	if err != nil || n == 0 {
		return false, err
	}
	if w.scores != "" {
		if _, err := tx.rawExec(ctx, w.scores, w.scoresArgs...); err != nil {
			return false, fmt.Errorf("save scores: %w", err)
		}
	}
	if w.violations != "" {
		if _, err := tx.rawExec(ctx, w.violations, w.violationsArgs...); err != nil {
			return false, fmt.Errorf("save violations: %w", err)
		}
	}
	return true, nil
}

// rowsOf is a VALUES list of n rows of width placeholders.
func rowsOf(n, width int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}
