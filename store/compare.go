package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
)

// TaskResult is one target's result on one task of a run, averaged over repeats.
type TaskResult struct {
	RunTargetID int64    `json:"target_id"`
	TaskKey     string   `json:"task_id" gorm:"column:task_key"`
	Category    string   `json:"category"`
	UseCase     string   `json:"usecase" gorm:"column:usecase"`
	Items       int64    `json:"items"`
	Scored      int64    `json:"scored"`
	Passed      int64    `json:"passed"`
	Score       *float64 `json:"score"` // mean over the repeats that were scored
	MinScore    *float64 `json:"min_score"`
	MaxScore    *float64 `json:"max_score"`
	TimeMs      *float64 `json:"time_ms"`
	TPS         *float64 `json:"tps"`
	CostUSD     *float64 `json:"cost_usd" gorm:"column:cost_usd"`
}

// TaskResults lists every (target, task) result of a run, for statistics
// over tasks: confidence intervals, paired tests and repeat consistency.
func (s *Store) TaskResults(ctx context.Context, runID int64) ([]TaskResult, error) {
	var out []TaskResult
	err := s.EachTargetTaskResults(ctx, runID, 1, func(rows []TaskResult) error {
		out = append(out, rows...)
		return nil
	})
	return out, err
}

// EachTargetTaskResults calls fn with the task results of each of the
// run's targets, one target at a time, each in task id order, without
// holding them all: a million-item run has half a million. The targets are
// read in up to parts ranges of consecutive ids side by side, each in
// target order on a connection of its own (on SQLite's one connection, in
// turn; within a transaction, in one range), so fn is called from as many
// goroutines at once (never two at once with one target's results). The
// rows passed become fn's: it may keep them. An error from fn ends the read
// and is returned.
func (s *Store) EachTargetTaskResults(ctx context.Context, runID int64, parts int, fn func(rows []TaskResult) error) error {
	if parts < 1 || s.inTransaction() {
		parts = 1 // a transaction is one connection: its reads cannot go side by side
	}
	judges, err := s.RunJudges(ctx, runID)
	if err != nil {
		return err
	}
	var ids []int64
	if err := s.conn(ctx).Raw(`SELECT id FROM run_targets WHERE run_id = ? ORDER BY id`, runID).Scan(&ids).Error; err != nil {
		return fmt.Errorf("store: task results: %w", err)
	}
	tasks, err := s.taskNames(ctx, runID)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, r := range targetRanges(ids, parts) {
		g.Go(func() error {
			return s.eachTargetInRange(gctx, runID, r, PassThreshold(judges), tasks, fn)
		})
	}
	return g.Wait()
}

// targetRange is the run targets with ids from first to last.
type targetRange struct{ first, last int64 }

// targetRanges splits sorted target ids into at most n ranges of
// consecutive ids, about as many targets each.
func targetRanges(ids []int64, n int) []targetRange {
	var out []targetRange
	for p := range n {
		from, to := p*len(ids)/n, (p+1)*len(ids)/n
		if from < to {
			out = append(out, targetRange{ids[from], ids[to-1]})
		}
	}
	return out
}

// eachTargetInRange is EachTargetTaskResults for the targets in r.
func (s *Store) eachTargetInRange(ctx context.Context, runID int64, r targetRange, pass float64, tasks runTaskNames, fn func(rows []TaskResult) error) error {
	// One target's results at a time, put in task id order here, each in
	// its task's place: the database groups the items in the order of the
	// (target, task) index and so needs no sort of its own, and the tasks'
	// order is the same for every target.
	target := make([]TaskResult, len(tasks.names))
	var placed []int // the places filled, in arrival order
	flush := func() error {
		if len(placed) == 0 {
			return nil
		}
		slices.Sort(placed)
		rows := make([]TaskResult, 0, len(placed))
		for _, p := range placed {
			rows = append(rows, target[p])
		}
		placed = placed[:0]
		return fn(rows)
	}
	err := s.streamedRead(ctx, func(tx *Store) error {
		return tx.eachTargetTaskGroup(ctx, runID, r.first, r.last, pass, func(r TaskResult, taskID int64) error {
			if len(placed) > 0 && target[placed[0]].RunTargetID != r.RunTargetID {
				if err := flush(); err != nil {
					return err
				}
			}
			p, ok := tasks.placeOf(taskID)
			if !ok {
				return fmt.Errorf("store: task results: run task %d is not the run's", taskID)
			}
			name := tasks.names[p]
			r.TaskKey, r.Category, r.UseCase = name.key, name.category, name.usecase
			target[p] = r
			placed = append(placed, p)
			return nil
		})
	})
	if err != nil {
		return err
	}
	return flush()
}

// streamedRead runs fn, a read of a run's items grouped in the order of an
// index, in a transaction that, on PostgreSQL, walks that index: the
// planner would rather sort a parallel scan's rows, or a bitmap scan's
// (spilling to disk at a million items, and more than twice as slow), not
// knowing the index walk streams the groups with no sort at all.
func (s *Store) streamedRead(ctx context.Context, fn func(tx *Store) error) error {
	return s.plannedRead(ctx, fn, `SET LOCAL enable_seqscan = off`, `SET LOCAL enable_bitmapscan = off`,
		`SET LOCAL enable_sort = off`, `SET LOCAL max_parallel_workers_per_gather = 0`)
}

// plannedRead runs fn in a transaction that, on PostgreSQL, first applies
// the planner settings given (SET LOCAL, so for this read alone).
func (s *Store) plannedRead(ctx context.Context, fn func(tx *Store) error, settings ...string) error {
	return s.Transact(ctx, func(tx *Store) error {
		if s.dialect == Postgres {
			for _, set := range settings {
				if err := tx.conn(ctx).Exec(set).Error; err != nil {
					return fmt.Errorf("store: plan a read (%s): %w", set, err)
				}
			}
		}
		return fn(tx)
	})
}

// eachTargetTaskGroup calls fn with the items of the run's targets first
// to last grouped by (target, task), in (target, task row id) order, the
// task's names left empty. The
// rows are scanned by hand: GORM's reflective scan allocated several times
// their size.
func (s *Store) eachTargetTaskGroup(ctx context.Context, runID, first, last int64, pass float64, fn func(r TaskResult, taskID int64) error) error {
	rows, err := s.conn(ctx).Raw(`SELECT i.run_target_id, i.run_task_id, COUNT(*) AS items, COUNT(i.score) AS scored,
			SUM(CASE WHEN i.score >= ? THEN 1 ELSE 0 END) AS passed, AVG(i.score) AS score, MIN(i.score) AS min_score,
			MAX(i.score) AS max_score, AVG(CAST(i.time_ms AS DOUBLE PRECISION)) AS time_ms, AVG(i.tokens_per_s) AS tps, SUM(i.cost_usd) AS cost_usd
		FROM items i WHERE i.run_id = ? AND i.run_target_id BETWEEN ? AND ?
		GROUP BY i.run_target_id, i.run_task_id
		ORDER BY i.run_target_id, i.run_task_id`, pass, runID, first, last).Rows()
	if err != nil {
		return fmt.Errorf("store: task results: %w", err)
	}
	defer rows.Close()
	// The scan's destinations are made once, not per row; the rows'
	// numbers are cut from slabs of up to a thousand rows' (a million-item
	// run's half a million rows had an allocation each), and arrive as the driver
	// gives them: scanned into sql.NullFloat64, each took a reflective
	// conversion.
	var slab []float64
	read := 0 // rows read so far
	var scanned TaskResult
	var taskID int64
	var nums [6]any
	dest := []any{&scanned.RunTargetID, &taskID, &scanned.Items, &scanned.Scored, &scanned.Passed,
		&nums[0], &nums[1], &nums[2], &nums[3], &nums[4], &nums[5]}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("store: task results: %w", err)
		}
		r := scanned
		if len(slab) < len(nums) {
			slab = make([]float64, len(nums)*min(max(read, 16), 1024)) // room for as many rows again
		}
		read++
		vals := slab[:len(nums):len(nums)]
		slab = slab[len(nums):]
		for i, p := range [...]**float64{&r.Score, &r.MinScore, &r.MaxScore, &r.TimeMs, &r.TPS, &r.CostUSD} {
			ok, err := floatOf(nums[i], &vals[i])
			if err != nil {
				return fmt.Errorf("store: task results: %w", err)
			}
			if ok {
				*p = &vals[i]
			}
		}
		if err := fn(r, taskID); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: task results: %w", err)
	}
	return nil
}

// floatOf reads a nullable number as a driver gives it into dst, as
// sql.NullFloat64 would: false for NULL.
func floatOf(v any, dst *float64) (bool, error) {
	switch v := v.(type) {
	case nil:
		return false, nil
	case float64:
		*dst = v
	case int64:
		*dst = float64(v)
	case []byte:
		return floatOf(string(v), dst)
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false, fmt.Errorf("read a number: %w", err)
		}
		*dst = f
	default:
		return false, fmt.Errorf("read a number: unexpected %T", v)
	}
	return true, nil
}

// taskName is what a task result names its task by.
type taskName struct{ key, category, usecase string }

// runTaskNames are a run's task names in task id order (by key, then by
// row id), and each row id's place in that order.
type runTaskNames struct {
	names []taskName
	// place maps a row id to its place: dense, by id less the lowest,
	// when the run's rows have about consecutive ids (they are created
	// together), else by map. Half a million look-ups a million-item run's
	// statistics make were a tenth of their CPU through a map.
	dense  []int32
	lowest int64
	place  map[int64]int
}

// placeOf is the place of the run task with row id id.
func (n runTaskNames) placeOf(id int64) (int, bool) {
	if n.place != nil {
		p, ok := n.place[id]
		return p, ok
	}
	if i := id - n.lowest; i >= 0 && i < int64(len(n.dense)) && n.dense[i] >= 0 {
		return int(n.dense[i]), true
	}
	return 0, false
}

// index sets where each row id's place is found; ids[p] is the row id at
// place p.
func (n *runTaskNames) index(ids []int64) {
	if len(ids) == 0 {
		n.place = map[int64]int{}
		return
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	if span := hi - lo; span < 0 || span >= 2*int64(len(ids))+1024 { // < 0: overflowed
		n.place = make(map[int64]int, len(ids))
		for p, id := range ids {
			n.place[id] = p
		}
		return
	}
	n.dense, n.lowest = make([]int32, hi-lo+1), lo
	for i := range n.dense {
		n.dense[i] = -1
	}
	for p, id := range ids {
		n.dense[id-lo] = int32(p)
	}
}

// taskNames reads the names of each of the run's tasks.
func (s *Store) taskNames(ctx context.Context, runID int64) (runTaskNames, error) {
	rows, err := s.conn(ctx).Raw(`SELECT id, task_key, category, usecase FROM run_tasks WHERE run_id = ?`, runID).Rows()
	if err != nil {
		return runTaskNames{}, fmt.Errorf("store: task names: %w", err)
	}
	defer rows.Close()
	type row struct {
		id int64
		taskName
	}
	var all []row
	var r row
	for rows.Next() {
		if err := rows.Scan(&r.id, &r.key, &r.category, &r.usecase); err != nil {
			return runTaskNames{}, fmt.Errorf("store: task names: %w", err)
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return runTaskNames{}, fmt.Errorf("store: task names: %w", err)
	}
	slices.SortFunc(all, func(a, b row) int { return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
	out := runTaskNames{names: make([]taskName, len(all))}
	ids := make([]int64, len(all))
	for i, r := range all {
		out.names[i], ids[i] = r.taskName, r.id
	}
	out.index(ids)
	return out, nil
}

// Answer is a target's answer to a task (its first repeat).
type Answer struct {
	ItemID      int64      `json:"item_id"`
	RunID       int64      `json:"run_id"`
	RunTargetID int64      `json:"target_id"`
	TaskKey     string     `json:"task_id" gorm:"column:task_key"`
	Question    string     `json:"question"`
	Response    *string    `json:"response"`
	Score       *float64   `json:"score"`
	Status      ItemStatus `json:"status"`
}

// Answers returns the first-repeat answers of a run to the given tasks.
func (s *Store) Answers(ctx context.Context, runID int64, taskKeys []string) ([]Answer, error) {
	var out []Answer
	if len(taskKeys) == 0 {
		return out, nil
	}
	err := s.conn(ctx).Table("items i").
		Select("i.id AS item_id, i.run_id, i.run_target_id, rt.task_key, rt.question, i.response, i.score, i.status").
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Where("i.run_id = ? AND i.repeat_index = 1 AND rt.task_key IN ?", runID, taskKeys).
		Order("i.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: answers: %w", err)
	}
	return out, nil
}

// JudgeProbe is what a judge's reliability card needs from one run: how
// many of its overall scores each (score, answer length) pair got, and the
// spread of its scores on answers it judged more than once (identical text).
type JudgeProbe struct {
	Lengths []JudgeLength
	Repeats []JudgeRepeat
}

// JudgeLength is how many of a judge's overall scores were Score on an
// answer Length characters long.
type JudgeLength struct {
	RunJudgeID int64
	Score      float64
	Length     int64
	N          int64
}

// JudgeRepeat is a judge's scores of one identical answer judged n times.
type JudgeRepeat struct {
	RunJudgeID int64
	N          int64
	MinScore   float64
	MaxScore   float64
}

// JudgeProbes reads a run's judge scores for the reliability card. Its two
// reads (of the run's scores, and of its items' answers) are independent:
// they run side by side, on two connections.
func (s *Store) JudgeProbes(ctx context.Context, runID int64) (*JudgeProbe, error) {
	out := &JudgeProbe{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		out.Lengths, err = s.judgeLengths(gctx, runID)
		return err
	})
	g.Go(func() (err error) {
		out.Repeats, err = s.judgeRepeats(gctx, runID)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// judgeLengths tallies each judge's (score, answer length) pairs, in that
// order. The database tallies them from the scores alone, which carry the
// length of the answer they scored: a million verdicts are a few hundred
// pairs, and their ranks are all the card's Spearman needs.
func (s *Store) judgeLengths(ctx context.Context, runID int64) ([]JudgeLength, error) {
	var out []JudgeLength
	rows, err := s.conn(ctx).Raw(`SELECT run_judge_id, score, COALESCE(answer_length, 0), COUNT(*) FROM scores
		WHERE run_id = ? AND metric = 'score' AND run_judge_id IS NOT NULL
		GROUP BY run_judge_id, score, COALESCE(answer_length, 0)`, runID).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: judge lengths: %w", err)
	}
	defer rows.Close()
	var l JudgeLength
	dest := []any{&l.RunJudgeID, &l.Score, &l.Length, &l.N}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: judge lengths: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: judge lengths: %w", err)
	}
	slices.SortFunc(out, func(a, b JudgeLength) int {
		return cmp.Or(cmp.Compare(a.RunJudgeID, b.RunJudgeID), cmp.Compare(a.Score, b.Score), cmp.Compare(a.Length, b.Length))
	})
	return out, nil
}

// judgeRepeats finds each judge's scores of the answers it judged more than
// once. A judge scores an item once (scores are unique by item, source and
// metric, and a judge is its source), so an answer it judged twice is two
// items of one task with the same text: found among the items alone before
// any verdict is read, instead of grouping a million verdicts by their
// answers' text. Materialized, so that PostgreSQL's parallel workers do not
// each group the items again.
//
// On PostgreSQL the items are grouped by a hash of their text, a quarter of
// its size (a million answers' groups spilled to disk: 1.5 → 1.2 s); two
// texts of one hash are told apart by the outer grouping, by text.
func (s *Store) judgeRepeats(ctx context.Context, runID int64) ([]JudgeRepeat, error) {
	key := func(alias string) string { return alias + "response" }
	if s.dialect == Postgres {
		key = func(alias string) string { return "hashtext(" + alias + "response)" }
	}
	var out []JudgeRepeat
	err := s.conn(ctx).Raw(`WITH twice AS MATERIALIZED (
			SELECT run_task_id, `+key("")+` AS answer FROM items
			WHERE run_id = ? AND response IS NOT NULL
			GROUP BY run_task_id, `+key("")+` HAVING COUNT(*) > 1)
		SELECT sc.run_judge_id, COUNT(*) AS n, MIN(sc.score) AS min_score, MAX(sc.score) AS max_score
		FROM twice t
		JOIN items i ON i.run_task_id = t.run_task_id AND `+key("i.")+` = t.answer
		JOIN scores sc ON sc.item_id = i.id
		WHERE i.run_id = ? AND sc.run_id = ? AND sc.metric = 'score' AND sc.run_judge_id IS NOT NULL
		GROUP BY sc.run_judge_id, i.run_task_id, i.response
		HAVING COUNT(*) > 1`, runID, runID, runID).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: judge repeats: %w", err)
	}
	return out, nil
}

// ItemAnswer returns one item's answer with its task id.
func (s *Store) ItemAnswer(ctx context.Context, itemID int64) (*Answer, error) {
	var out []Answer
	err := s.conn(ctx).Table("items i").
		Select("i.id AS item_id, i.run_id, i.run_target_id, rt.task_key, rt.question, i.response, i.score, i.status").
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Where("i.id = ?", itemID).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: item answer: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("store: item answer: %w", &NotFoundError{What: "item", ID: itemID})
	}
	return &out[0], nil
}
