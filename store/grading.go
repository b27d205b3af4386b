package store

import (
	"context"
	"fmt"
	"time"
)

// GradingSession is a grading queue: the items of a run that match
// Filter's status and model (its paging is ignored) and, with UngradedOnly,
// were not graded before the session began (Since).
//
// The queue's order: first the items that were ungraded when the session
// began, those the judges disagree on most first (their spread: how far the
// panel's overall scores lie apart, as a fraction of each judge's scale),
// then the ones graded before, by id. Grading an item during the session
// leaves it in its place, so going back finds it.
type GradingSession struct {
	Filter       ItemFilter
	UngradedOnly bool
	Since        time.Time
}

// GradingPlace is where one item stands in a grading queue, counted in SQL
// so the run's items never travel to Go.
type GradingPlace struct {
	// Total counts the items matching the filter, Graded those of them
	// graded, Queue those in the queue.
	Total, Graded, Queue int64
	// ItemID is the item asked for when it is in the queue, else the head
	// (0: the queue is empty); Position is its place, from 1.
	ItemID   int64
	Position int64
	// Spread is the item's judges' disagreement (0: they agree, or one
	// judge scored it).
	Spread float64
	// PrevID and NextID are its neighbours in the queue (0 at an end).
	PrevID, NextID int64
	// NextToGrade is where to go once the item asked for is graded: the
	// next item after it that is ungraded, else the first ungraded one,
	// else the next one, else the item itself.
	NextToGrade int64
}

// GradingPlace finds item itemID (0: the head) in the grading queue.
// g.Filter.Total, when set, spares counting the filter's items.
func (s *Store) GradingPlace(ctx context.Context, runID int64, g GradingSession, itemID int64) (GradingPlace, error) {
	var judges int64
	if err := s.conn(ctx).Model(&RunJudge{}).Where("run_id = ?", runID).Count(&judges).Error; err != nil {
		return GradingPlace{}, fmt.Errorf("store: grading queue judges: %w", err)
	}
	// One judge never disagrees with itself: every spread is 0 and the
	// queue's order is known without reading the scores.
	if judges <= 1 {
		return gradingWalk{s: s, ctx: ctx, runID: runID, g: g}.place(itemID)
	}
	return s.panelGradingPlace(ctx, runID, g, itemID)
}

// panelGradingPlace is GradingPlace for a panel of judges, whose spreads
// order the queue: one statement over the filter's items and their scores.
func (s *Store) panelGradingPlace(ctx context.Context, runID int64, g GradingSession, itemID int64) (GradingPlace, error) {
	var p GradingPlace
	q, err := s.itemFilterQuery(ctx, runID, g.Filter)
	if err != nil {
		return p, err
	}
	// Scores are brought to 0…1 on each judge's own scale, so a panel that
	// mixes a 0–5 and a 1–10 style compares like with like.
	const spread = "COALESCE(d.spread, 0)"
	q = q.Joins(`LEFT JOIN (SELECT sc.item_id,
		MAX((sc.score - j.scale_min) / (j.scale_max - j.scale_min)) - MIN((sc.score - j.scale_min) / (j.scale_max - j.scale_min)) AS spread
	FROM scores sc JOIN run_judges j ON j.id = sc.run_judge_id
	WHERE sc.run_id = ? AND sc.metric = 'score' AND j.scale_max > j.scale_min
	GROUP BY sc.item_id) d ON d.item_id = i.id`, runID)
	// b: graded before the session; k: the order within b (spread, highest first).
	entries := q.Select(`i.id, `+spread+` AS spread,
		CASE WHEN g.updated_at IS NOT NULL AND g.updated_at < ? THEN 1 ELSE 0 END AS b,
		CASE WHEN g.updated_at IS NOT NULL AND g.updated_at < ? THEN 0.0 ELSE -`+spread+` END AS k,
		CASE WHEN g.updated_at IS NULL THEN 0 ELSE 1 END AS graded`, g.Since.UTC(), g.Since.UTC()).
		Joins("LEFT JOIN grades g ON g.item_id = i.id")
	ungradedOnly := 0
	if g.UngradedOnly {
		ungradedOnly = 1
	}
	const (
		before = `(x.b < c.b OR (x.b = c.b AND (x.k < c.k OR (x.k = c.k AND x.id < c.id))))`
		after  = `(x.b > c.b OR (x.b = c.b AND (x.k > c.k OR (x.k = c.k AND x.id > c.id))))`
		asc    = ` ORDER BY x.b, x.k, x.id LIMIT 1)`
		desc   = ` ORDER BY x.b DESC, x.k DESC, x.id DESC LIMIT 1)`
	)
	// c is the item asked for when it is queued, else the head.
	text := `WITH e AS (?), qu AS (SELECT * FROM e WHERE ? = 0 OR b = 0),
		c AS (SELECT * FROM qu ORDER BY CASE WHEN id = ? THEN 0 ELSE 1 END, b, k, id LIMIT 1)
		SELECT (SELECT COUNT(*) FROM e) AS total, (SELECT COUNT(*) FROM e WHERE graded = 1) AS graded,
			(SELECT COUNT(*) FROM qu) AS queue, c.id AS item_id, c.spread,
			(SELECT COUNT(*) FROM qu x WHERE ` + before + `) + 1 AS position,
			COALESCE((SELECT x.id FROM qu x WHERE ` + before + desc + `, 0) AS prev_id,
			COALESCE((SELECT x.id FROM qu x WHERE ` + after + asc + `, 0) AS next_id,
			COALESCE((SELECT x.id FROM qu x WHERE x.graded = 0 AND x.id <> ? AND (c.id <> ? OR ` + after + `)` + asc + `,
				(SELECT x.id FROM qu x WHERE x.graded = 0 AND x.id <> ?` + asc + `,
				CASE WHEN c.id = ? THEN (SELECT x.id FROM qu x WHERE ` + after + asc + ` END, ?) AS next_to_grade
		FROM c`
	var rows []GradingPlace
	err = s.conn(ctx).Raw(text, entries, ungradedOnly, itemID, itemID, itemID, itemID, itemID, itemID).Scan(&rows).Error
	if err != nil {
		return p, fmt.Errorf("store: grading place: %w", err)
	}
	if len(rows) == 0 { // an empty queue: count what there is
		err := s.conn(ctx).Raw(`WITH e AS (?) SELECT COUNT(*) AS total, COALESCE(SUM(graded), 0) AS graded FROM e`, entries).Scan(&p).Error
		if err != nil {
			return p, fmt.Errorf("store: grading counts: %w", err)
		}
		return p, nil
	}
	return rows[0], nil
}

// GradingItem returns an item of a run with its task and target, as a
// person grading it sees them.
func (s *Store) GradingItem(ctx context.Context, runID, itemID int64) (*WorkItem, error) {
	var it Item
	if err := s.conn(ctx).Where("run_id = ?", runID).Take(&it, itemID).Error; err != nil {
		return nil, fmt.Errorf("store: grading item: %w", notFound(err, "item", itemID))
	}
	w := WorkItem{Item: it}
	if err := s.conn(ctx).Take(&w.Task, it.RunTaskID).Error; err != nil {
		return nil, fmt.Errorf("store: grading item task: %w", err)
	}
	if err := s.conn(ctx).Take(&w.Target, it.RunTargetID).Error; err != nil {
		return nil, fmt.Errorf("store: grading item target: %w", err)
	}
	return &w, nil
}
