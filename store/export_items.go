package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ExportItem is one item as the exports write it: the row the items pages
// show, with every score, the violations and the human grade's notes.
type ExportItem struct {
	ItemView
	// Scores are the item's scores in id order, each Judge being the
	// judge's name or, for a check, its source.
	Scores []ScoreView
	// Violations are what the judges said the answer violated, by judge
	// and in the order each listed them.
	Violations []ViolationView
	// GradeNotes accompany the human grade (ItemView.Grade).
	GradeNotes string
}

// itemExportBatch is how many items one round of EachExportItem reads.
const itemExportBatch = 2000

// exportItemSelect reads a batch of items alone: joining each to its task
// costs PostgreSQL an index probe per item, ten times the item's own read,
// where the batch's tasks (consecutive items mostly have consecutive
// tasks) come in one range read, and the run's few targets once.
const exportItemSelect = `SELECT id, run_task_id, run_target_id, status, repeat_index, score,
	response, error, time_ms, prompt_tokens, completion_tokens, tokens_per_s, cost_usd,
	cost_source, judge_cost_source, answer_attempts, judge_attempts, failed_phase, updated_at,
	tool_calls, turns, reasoning
	FROM items WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`

// EachRunItem streams every item of a run in id order, as RunItems shows
// them; see EachExportItem (the item is valid only during the call).
func (s *Store) EachRunItem(ctx context.Context, runID int64, fn func(*ItemView) error) error {
	return s.EachExportItem(ctx, runID, func(it *ExportItem) error { return fn(&it.ItemView) })
}

// EachExportItem streams every item of a run in id order with its scores,
// violations and grade, a batch at a time so memory stays flat however
// large the run: one keyset read of the items, then one read each of the
// batch's tasks, scores, grades and violations, scanned without
// reflection. The next batch is read while fn writes this one, so the
// database, the reading and the writing overlap. The item passed to fn,
// its slices and the values its pointer fields point to are valid only
// during the call: the buffers behind them are reused; copy what you keep.
func (s *Store) EachExportItem(ctx context.Context, runID int64, fn func(*ExportItem) error) error {
	first, err := s.newItemBatch(ctx, runID)
	if err != nil {
		return err
	}
	return s.withExportReader(ctx, func(r exportReader) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		free := make(chan *itemBatch, 2)
		free <- first
		free <- first.sibling()
		ready := make(chan *itemBatch)
		var readErr error
		go func() { // the only user of r until ready closes
			defer close(ready)
			readErr = readBatches(ctx, r, free, ready)
		}()
		var fnErr error
		for b := range ready {
			for i := range b.items {
				if fnErr == nil {
					fnErr = fn(&b.items[i])
				}
			}
			if fnErr != nil {
				cancel() // and drain ready until the reader stops
			}
			free <- b
		}
		if fnErr != nil {
			return fnErr
		}
		return readErr
	})
}

// readBatches fills the batches that come back on free with the run's
// items in id order and sends each on ready, until the last (short) batch.
func readBatches(ctx context.Context, r exportReader, free <-chan *itemBatch, ready chan<- *itemBatch) error {
	var after int64
	for {
		var b *itemBatch
		select {
		case b = <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := b.read(ctx, r, after); err != nil {
			return err
		}
		select {
		case ready <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		if len(b.items) < itemExportBatch {
			return nil
		}
		after = b.items[len(b.items)-1].ID
	}
}

// itemBatch holds one batch of EachExportItem; its buffers are reused
// from batch to batch (see export_scan.go).
type itemBatch struct {
	runID   int64
	judges  map[int64]string
	targets map[int64]exportTarget
	tasks   *taskCache // shared by the batches of one export, read by its reader only

	items      []ExportItem
	taskIDs    []int64 // each item's run task
	texts      []itemText
	values     []itemValues
	at         map[int64]int
	scores     []ScoreView
	scoreRows  []scoreRow
	violations []ViolationView

	text   textBuf
	dests  itemDests
	scored scoreRow // the score row being scanned
}

// itemText is where an item's text columns lie in its batch's text.
type itemText struct {
	status, response, error, costSource, judgeCostSource, failedPhase, toolCalls, reasoning span
}

// itemValues hold what an item's nullable fields point at.
type itemValues struct {
	timeMs, promptTokens, completionTokens int64
	score, tokensPerS, costUSD             float64
	turns                                  int
	response, toolCalls, reasoning         string
}

// itemDests are the scan destinations of a row, pointed at each row's
// fields in turn, and args, the list of them Scan takes (a list per row
// was a third of what the reads allocated).
type itemDests struct {
	args                                   []any
	task                                   int64
	text                                   [8]spanDest
	timeMs, promptTokens, completionTokens nullNumber[int64]
	score, tokensPerS, costUSD             nullNumber[float64]
	turns                                  nullNumber[int]
}

// scoreRow is one score as scanned, its text as spans.
type scoreRow struct {
	itemID, judge             int64
	score                     float64
	source, metric, reasoning span
}

// exportTarget is what an item shows of its target.
type exportTarget struct {
	provider, model string
	agent           bool
	agentName       string
	agentVersion    int
}

// exportTask is what an item shows of its task.
type exportTask struct {
	key, category, subcategory, question, reference string
}

// newItemBatch reads a run's judges' names and its targets, which every
// batch shares.
func (s *Store) newItemBatch(ctx context.Context, runID int64) (*itemBatch, error) {
	judges, err := s.runJudgeNames(ctx, runID)
	if err != nil {
		return nil, err
	}
	b := (&itemBatch{runID: runID, judges: judges, targets: map[int64]exportTarget{}, tasks: newTaskCache()}).sibling()
	rows, err := s.conn(ctx).Raw(`SELECT id, provider_name, model, agent IS NOT NULL, agent_name, agent_version
		FROM run_targets WHERE run_id = ?`, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: export targets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var t exportTarget
		if err := rows.Scan(&id, &t.provider, &t.model, &t.agent, &t.agentName, &t.agentVersion); err != nil {
			return nil, fmt.Errorf("store: export targets: %w", err)
		}
		b.targets[id] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: export targets: %w", err)
	}
	return b, nil
}

// sibling is an empty batch of the same export, with buffers of its own.
func (b *itemBatch) sibling() *itemBatch {
	n := &itemBatch{runID: b.runID, judges: b.judges, targets: b.targets, tasks: b.tasks,
		items: make([]ExportItem, 0, itemExportBatch), texts: make([]itemText, 0, itemExportBatch),
		values: make([]itemValues, 0, itemExportBatch), at: make(map[int64]int, itemExportBatch)}
	for i := range n.dests.text {
		n.dests.text[i].buf = &n.text
	}
	return n
}

// runJudgeNames maps a run's judges' ids to their names.
func (s *Store) runJudgeNames(ctx context.Context, runID int64) (map[int64]string, error) {
	var judges []RunJudge
	if err := s.conn(ctx).Select("id, name").Where("run_id = ?", runID).Find(&judges).Error; err != nil {
		return nil, fmt.Errorf("store: run judges: %w", err)
	}
	names := make(map[int64]string, len(judges))
	for _, j := range judges {
		names[j.ID] = j.Name
	}
	return names, nil
}

// read replaces the batch with the run's next items after id after, in full.
func (b *itemBatch) read(ctx context.Context, r exportReader, after int64) error {
	if err := b.readItems(ctx, r, after); err != nil {
		return err
	}
	if len(b.items) == 0 {
		return nil
	}
	ids := make([]int64, len(b.items))
	for i := range b.items {
		ids[i] = b.items[i].ID
	}
	if err := b.readTasks(ctx, r); err != nil {
		return err
	}
	if err := b.readScores(ctx, r, ids); err != nil {
		return err
	}
	if err := b.readGrades(ctx, r, ids); err != nil {
		return err
	}
	return b.readViolations(ctx, r, ids)
}

// readItems reads the items of the batch with their targets' names.
func (b *itemBatch) readItems(ctx context.Context, r exportReader, after int64) error {
	b.items, b.taskIDs, b.texts, b.values = b.items[:0], b.taskIDs[:0], b.texts[:0], b.values[:0]
	b.text.reset()
	clear(b.at)
	err := r.each(ctx, exportItemSelect, []any{b.runID, after, itemExportBatch}, func(row rowScanner) error {
		n := len(b.items) // < itemExportBatch, the LIMIT: the slices' arrays, which rows point into, never move
		b.items, b.texts, b.values = b.items[:n+1], b.texts[:n+1], b.values[:n+1]
		v, t, x, d := &b.items[n], &b.texts[n], &b.values[n], &b.dests
		*v = ExportItem{}
		d.args = append(d.args[:0], &v.ID, &d.task, &v.RunTargetID, d.text[0].to(&t.status), &v.RepeatIndex, d.score.to(&v.Score, &x.score),
			d.text[1].to(&t.response), d.text[2].to(&t.error), d.timeMs.to(&v.TimeMs, &x.timeMs),
			d.promptTokens.to(&v.PromptTokens, &x.promptTokens), d.completionTokens.to(&v.CompletionTokens, &x.completionTokens),
			d.tokensPerS.to(&v.TokensPerS, &x.tokensPerS), d.costUSD.to(&v.CostUSD, &x.costUSD),
			d.text[3].to(&t.costSource), d.text[4].to(&t.judgeCostSource), &v.AnswerAttempts, &v.JudgeAttempts,
			d.text[5].to(&t.failedPhase), &v.UpdatedAt, d.text[6].to(&t.toolCalls), d.turns.to(&v.AgentTurns, &x.turns),
			d.text[7].to(&t.reasoning))
		if err := row.Scan(d.args...); err != nil {
			return err
		}
		tg := b.targets[v.RunTargetID]
		v.Provider, v.Model, v.AgentTarget, v.AgentName, v.AgentVersion = tg.provider, tg.model, tg.agent, tg.agentName, tg.agentVersion
		b.at[v.ID] = n
		b.taskIDs = append(b.taskIDs, d.task)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: export run items: %w", err)
	}
	b.setItemText()
	return nil
}

// setItemText sets the items' text fields from the batch's text.
func (b *itemBatch) setItemText() {
	all := b.text.String()
	nullable := func(s span, dst **string, val *string) {
		if !s.null {
			*val = s.in(all)
			*dst = val
		}
	}
	for i := range b.items {
		v, t, x := &b.items[i], &b.texts[i], &b.values[i]
		v.Status, v.Error, v.FailedPhase = ItemStatus(t.status.in(all)), t.error.in(all), t.failedPhase.in(all)
		v.CostSource, v.JudgeCostSource = CostSource(t.costSource.in(all)), CostSource(t.judgeCostSource.in(all))
		nullable(t.response, &v.Response, &x.response)
		nullable(t.toolCalls, &v.ToolCalls, &x.toolCalls)
		nullable(t.reasoning, &v.AgentReasoning, &x.reasoning)
	}
}

// readTasks reads the batch's tasks that the export has not kept and sets
// each item's.
func (b *itemBatch) readTasks(ctx context.Context, r exportReader) error {
	var missing []int64
	for _, id := range b.taskIDs {
		if _, ok := b.tasks.get(id); !ok {
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	b.tasks.forget()
	err := r.byIDs("id", missing, func(where string, args []any, _ func(int64) bool) error {
		return r.each(ctx, `SELECT id, task_key, category, subcategory, question, reference FROM run_tasks
			WHERE run_id = ? AND `+where, append([]any{b.runID}, args...), func(row rowScanner) error {
			var id int64
			var t exportTask
			if err := row.Scan(&id, &t.key, &t.category, &t.subcategory, &t.question, &t.reference); err != nil {
				return err
			}
			b.tasks.add(id, t)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export tasks: %w", err)
	}
	for i := range b.items {
		t, _ := b.tasks.get(b.taskIDs[i])
		v := &b.items[i]
		v.TaskID, v.Category, v.Subcategory, v.Question, v.Reference = t.key, t.category, t.subcategory, t.question, t.reference
	}
	return nil
}

// taskCacheBytes bounds the text of the tasks an export keeps. A run's
// items are task × target × repeat, so the tasks of one batch come back in
// later ones: kept, each is read once per export instead of once per target
// and repeat (20 times over in a 50k-task, 10-model, 2-repeat run, whose
// tasks hold 5 MB of text).
const taskCacheBytes = 16 << 20

// taskCache holds the tasks an export has read: those it keeps, up to
// taskCacheBytes, and the current batch's others.
type taskCache struct {
	kept  map[int64]exportTask
	bytes int
	batch map[int64]exportTask
}

func newTaskCache() *taskCache {
	return &taskCache{kept: map[int64]exportTask{}, batch: map[int64]exportTask{}}
}

func (c *taskCache) get(id int64) (exportTask, bool) {
	if t, ok := c.kept[id]; ok {
		return t, true
	}
	t, ok := c.batch[id]
	return t, ok
}

// add keeps t while the kept tasks' text stays within taskCacheBytes, else
// holds it for the current batch only.
func (c *taskCache) add(id int64, t exportTask) {
	size := len(t.key) + len(t.category) + len(t.subcategory) + len(t.question) + len(t.reference)
	if c.bytes+size > taskCacheBytes {
		c.batch[id] = t
		return
	}
	c.kept[id] = t
	c.bytes += size
}

// forget drops the tasks held for the last batch only.
func (c *taskCache) forget() { clear(c.batch) }

// readScores reads the batch's scores and sets each item's, with its judge
// and reasoning as itemViewSelect defines them: the first judge's verdict
// (its overall score row), else the checks that scored the item, named in
// id order.
func (b *itemBatch) readScores(ctx context.Context, r exportReader, ids []int64) error {
	b.scoreRows = b.scoreRows[:0]
	b.text.reset()
	sc, d := &b.scored, &b.dests.text
	err := r.byIDs("item_id", ids, func(where string, args []any, keep func(int64) bool) error {
		return r.each(ctx, `SELECT item_id, COALESCE(run_judge_id, 0), source, metric, score, reasoning FROM scores
			WHERE `+where+` ORDER BY item_id, id`, args, func(row rowScanner) error {
			mark := len(b.text.b)
			b.dests.args = append(b.dests.args[:0], &sc.itemID, &sc.judge, d[0].to(&sc.source), d[1].to(&sc.metric), &sc.score, d[2].to(&sc.reasoning))
			if err := row.Scan(b.dests.args...); err != nil {
				return err
			}
			if !keep(sc.itemID) {
				b.text.b = b.text.b[:mark]
				return nil
			}
			b.scoreRows = append(b.scoreRows, *sc)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export scores: %w", err)
	}
	b.setScores()
	return nil
}

// setScores turns the batch's score rows into its items' scores, judge and
// reasoning.
func (b *itemBatch) setScores() {
	all := b.text.String()
	b.scores = slices.Grow(b.scores[:0], len(b.scoreRows))
	judged := map[int64]bool{}
	var checks map[int64][]string
	for _, row := range b.scoreRows {
		sc := ScoreView{ItemID: row.itemID, Judge: row.source.in(all), Metric: row.metric.in(all), Score: row.score, Reasoning: row.reasoning.in(all)}
		source := sc.Judge
		if name, ok := b.judges[row.judge]; ok {
			sc.Judge = name // COALESCE(j.name, sc.source)
		}
		v := &b.items[b.at[sc.ItemID]]
		switch {
		case sc.Metric == "score" && !judged[sc.ItemID]:
			judged[sc.ItemID], v.Judge, v.Reasoning = true, sc.Judge, sc.Reasoning
		case strings.HasPrefix(source, "check:"):
			if checks == nil {
				checks = map[int64][]string{}
			}
			checks[sc.ItemID] = append(checks[sc.ItemID], source)
		}
		b.scores = append(b.scores, sc)
	}
	for id, sources := range checks {
		if !judged[id] {
			b.items[b.at[id]].Judge = strings.Join(sources, " ")
		}
	}
	forEachRun(b.scores, func(sc ScoreView) int64 { return sc.ItemID }, func(id int64, run []ScoreView) {
		b.items[b.at[id]].Scores = run
	})
}

// readGrades sets the grade and its notes of each item of the batch that has one.
func (b *itemBatch) readGrades(ctx context.Context, r exportReader, ids []int64) error {
	err := r.byIDs("item_id", ids, func(where string, args []any, keep func(int64) bool) error {
		return r.each(ctx, `SELECT item_id, grade, notes FROM grades WHERE `+where, args, func(row rowScanner) error {
			var id int64
			var grade, notes string
			if err := row.Scan(&id, &grade, &notes); err != nil {
				return err
			}
			if keep(id) {
				v := &b.items[b.at[id]]
				v.Grade, v.GradeNotes = &grade, notes
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export grades: %w", err)
	}
	return nil
}

// readViolations reads the batch's violations and sets each item's.
func (b *itemBatch) readViolations(ctx context.Context, r exportReader, ids []int64) error {
	b.violations = b.violations[:0]
	err := r.byIDs("item_id", ids, func(where string, args []any, keep func(int64) bool) error {
		return r.each(ctx, `SELECT item_id, run_judge_id, category, detail FROM violations
			WHERE `+where+` ORDER BY item_id, run_judge_id, id`, args, func(row rowScanner) error {
			var v ViolationView
			var judge int64
			if err := row.Scan(&v.ItemID, &judge, &v.Category, &v.Detail); err != nil {
				return err
			}
			name, ok := b.judges[judge]
			if ok && keep(v.ItemID) {
				v.Judge = name
				b.violations = append(b.violations, v)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: export violations: %w", err)
	}
	forEachRun(b.violations, func(v ViolationView) int64 { return v.ItemID }, func(id int64, run []ViolationView) {
		b.items[b.at[id]].Violations = run
	})
	return nil
}

// forEachRun calls fn on each run of consecutive elements of s that share
// a key, with a full slice expression so that no run can grow into the next.
func forEachRun[T any](s []T, key func(T) int64, fn func(int64, []T)) {
	for start := 0; start < len(s); {
		k, end := key(s[start]), start+1
		for end < len(s) && key(s[end]) == k {
			end++
		}
		fn(k, s[start:end:end])
		start = end
	}
}
