package store

import (
	"context"
	"fmt"
	"strings"
)

// Synthetic results (CompleteSynthetic) are made up from each item's id, so
// a run of any size fills in a few statements and every fill of the same
// run gives the same numbers.
const (
	// syntheticFailEvery: one item in syntheticFailEvery fails.
	syntheticFailEvery = 50
	// syntheticViolationEvery: one judged item in syntheticViolationEvery
	// draws a violation from each judge whose style asks for them.
	syntheticViolationEvery = 10
	// syntheticJudgeTokens are a judge call's prompt and completion tokens.
	syntheticJudgePromptTokens, syntheticJudgeCompletionTokens = 400, 60
)

// CompleteSynthetic finishes every item of a run that is neither COMPLETED
// nor FAILED with made-up results in the shape the engine writes them: an
// answer with its time, tokens and cost; then each judge's verdict (a score
// row per metric, the overall, violations when the style asks) and the
// item's score, the mean of the panel's overalls. One item in 50 fails in
// the benchmarking phase instead. It exists for benchmarks of big runs
// (package bench) and reports the items it wrote. Like the engine, it keeps
// the items' overalls, weighed by weights (the run's, runs.ItemWeights),
// here all at once from their scores. The run's status is left as it is.
func (s *Store) CompleteSynthetic(ctx context.Context, runID int64, weights []SourceWeight) (int64, error) {
	judges, err := s.RunJudges(ctx, runID)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.Transact(ctx, func(tx *Store) error {
		for _, j := range judges {
			if err := tx.insertSyntheticVerdicts(ctx, runID, j); err != nil {
				return err
			}
		}
		n, err = tx.updateSynthetic(ctx, runID, judges)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: complete run %d synthetically: %w", runID, err)
	}
	// The overalls' fill is planned on statistics that still see every
	// item NEW: a plan for a handful of rows, which took minutes on a
	// million, whenever autovacuum had not caught up first.
	if err := s.afterFill(ctx, `ANALYZE items, scores`); err != nil {
		return 0, err
	}
	if err := s.FillItemOveralls(ctx, runID, weights); err != nil {
		return 0, err
	}
	// Then the pages the overalls rewrote are marked all-visible, so that
	// an index holding every column a page reads answers it alone.
	if err := s.afterFill(ctx, `VACUUM (ANALYZE)`); err != nil {
		return 0, err
	}
	return n, nil
}

// afterFill runs statement, PostgreSQL's upkeep, after a fill's writes: it
// does what autovacuum does while a real run writes its items over hours,
// and a fill's minute leaves no time for. Without it the statements run
// next would be planned for an empty run, or for a million heap reads.
// SQLite plans without gathered statistics unless asked to keep them, and
// has no visibility map.
func (s *Store) afterFill(ctx context.Context, statement string) error {
	if s.dialect != Postgres {
		return nil
	}
	if err := s.conn(ctx).Exec(statement).Error; err != nil {
		return fmt.Errorf("store: after the fill, %s: %w", statement, err)
	}
	return nil
}

// syntheticPending selects the items a fill writes and, with judged, only
// those it completes.
func syntheticPending(judged bool) string {
	w := `run_id = ? AND status NOT IN ('COMPLETED', 'FAILED')`
	if judged {
		w += fmt.Sprintf(` AND id %% %d <> 7`, syntheticFailEvery)
	}
	return w
}

// syntheticScore is the SQL of judge j's score on the m-th metric of an item:
// spread over the whole scale, differently per metric and judge.
func syntheticScore(j RunJudge, m int) string {
	span := max(j.ScaleMax-j.ScaleMin, 0) + 1
	return fmt.Sprintf("(%d + ((id * %d + %d) %% %d))", j.ScaleMin, 7+3*m, 13*j.Position+m, span)
}

// syntheticOverall is the SQL of judge j's overall: the weighted mean of its
// metrics, as rubric.ParseVerdict weighs it.
func syntheticOverall(j RunJudge) string {
	if len(j.Metrics) <= 1 {
		return "1.0 * " + syntheticScore(j, 0)
	}
	var weights float64
	terms := make([]string, len(j.Metrics))
	for i, m := range j.Metrics {
		terms[i] = fmt.Sprintf("%g * %s", m.Weight, syntheticScore(j, i))
		weights += m.Weight
	}
	if weights <= 0 {
		for i := range terms {
			terms[i] = syntheticScore(j, i)
		}
		return fmt.Sprintf("(%s) / %d.0", strings.Join(terms, " + "), len(terms))
	}
	return fmt.Sprintf("(%s) / %g", strings.Join(terms, " + "), weights)
}

// insertSyntheticVerdicts writes judge j's score rows, and its violations
// when its style asks, on the items the fill completes.
func (s *Store) insertSyntheticVerdicts(ctx context.Context, runID int64, j RunJudge) error {
	now := s.now()
	insert := func(metric, score, reasoning, note string) error {
		q := fmt.Sprintf(`INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, reasoning, raw, note, created_at)
			SELECT run_id, id, run_target_id, %s, ?, ?, ?, %s, ?, '{}', ?, ? FROM items WHERE %s`, answerLengthOf(syntheticAnswer), score, syntheticPending(true))
		return s.conn(ctx).Exec(q, j.ID, j.Source(), metric, reasoning, note, now, runID).Error
	}
	for i, m := range j.Metrics {
		if err := insert(m.Name, "1.0 * "+syntheticScore(j, i), "synthetic "+m.Name, ""); err != nil {
			return fmt.Errorf("insert %s scores: %w", m.Name, err)
		}
	}
	if len(j.Metrics) != 1 || j.Metrics[0].Name != "score" {
		if err := insert("score", syntheticOverall(j), "weighted mean of the metrics", ""); err != nil {
			return fmt.Errorf("insert overall scores: %w", err)
		}
	}
	if !j.AsksViolations {
		return nil
	}
	q := fmt.Sprintf(`INSERT INTO violations (run_id, item_id, run_judge_id, category, detail, created_at)
		SELECT run_id, id, ?, CASE WHEN id %% 3 = 0 THEN 'format' ELSE 'over_max' END, 'synthetic violation', ?
		FROM items WHERE %s AND id %% %d = %d`, syntheticPending(true), syntheticViolationEvery, j.Position%syntheticViolationEvery)
	if err := s.conn(ctx).Exec(q, j.ID, now, runID).Error; err != nil {
		return fmt.Errorf("insert violations: %w", err)
	}
	return nil
}

// syntheticAnswer is the SQL of an item's made-up answer. Its verdicts,
// written first, take their answer length from it.
const syntheticAnswer = `'Synthetic answer ' || id || ': the result is ' || (id % 97) || '.'`

// updateSynthetic writes the items' answers, costs and outcomes.
func (s *Store) updateSynthetic(ctx context.Context, runID int64, judges []RunJudge) (int64, error) {
	score, judgeCost, judgeSource := "NULL", 0.0, CostUnknown
	if len(judges) > 0 {
		overalls := make([]string, len(judges))
		for i, j := range judges {
			overalls[i] = syntheticOverall(j)
			c, src := j.Price.CallCost(nil, syntheticJudgePromptTokens, syntheticJudgeCompletionTokens)
			if c != nil {
				judgeCost += *c
			}
			if i == 0 {
				judgeSource = src
			} else {
				judgeSource = judgeSource.Merge(src)
			}
		}
		score = fmt.Sprintf("(%s) / %d.0", strings.Join(overalls, " + "), len(judges))
	}
	failed := fmt.Sprintf("id %% %d = 7", syntheticFailEvery)
	if len(judges) == 0 {
		failed = "1 = 0"
	}
	// Tokens and time are spread per item; the cost follows the target's price.
	const (
		pt = "(50 + items.id % 200)"
		ct = "(100 + (items.id * 13) % 400)"
		ms = "(200 + (items.id * 37) % 1800)"
	)
	price := `(SELECT t.input_per_mtok * ` + pt + ` / 1e6 + t.output_per_mtok * ` + ct + ` / 1e6 FROM run_targets t WHERE t.id = items.run_target_id)`
	q := `UPDATE items SET
		status = CASE WHEN ` + failed + ` THEN 'FAILED' ELSE 'COMPLETED' END,
		failed_phase = CASE WHEN ` + failed + ` THEN 'BENCHMARKING' ELSE '' END,
		error = CASE WHEN ` + failed + ` THEN 'synthetic: the provider answered 500' ELSE '' END,
		request = ?,
		response = CASE WHEN ` + failed + ` THEN NULL ELSE ` + syntheticAnswer + ` END,
		time_ms = ` + ms + `, prompt_tokens = ` + pt + `, completion_tokens = ` + ct + `,
		tokens_per_s = 1000.0 * ` + ct + ` / ` + ms + `,
		cost_usd = ` + price + `,
		cost_source = CASE WHEN ` + price + ` IS NULL THEN '' ELSE 'price_table' END,
		score = CASE WHEN ` + failed + ` THEN NULL ELSE ` + score + ` END,
		judge_cost_usd = CASE WHEN ` + failed + ` THEN 0 ELSE ? END,
		judge_cost_source = CASE WHEN ` + failed + ` THEN '' ELSE ? END,
		judge_pos = ?, attempts = attempts + ?, answer_attempts = 1,
		judge_attempts = CASE WHEN ` + failed + ` THEN 0 ELSE ? END,
		worker_id = '', lease_until = NULL, next_retry_at = NULL, last_attempt_at = ?, updated_at = ?,
		overall_sum = NULL, overall_weight = NULL
		WHERE ` + syntheticPending(false)
	now := s.now()
	res := s.conn(ctx).Exec(q, `{"messages":[],"settings":{}}`, judgeCost, string(judgeSource),
		max(len(judges)-1, 0), 1+len(judges), len(judges), now, now, runID)
	if res.Error != nil {
		return 0, fmt.Errorf("update items: %w", res.Error)
	}
	return res.RowsAffected, nil
}
