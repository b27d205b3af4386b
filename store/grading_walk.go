package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// queueKind picks a part of the grading queue's items.
type queueKind int

const (
	// fresh are the items not graded before the session (the queue's first part).
	fresh queueKind = iota
	// old are the items graded before the session (its second part).
	old
	// ungraded are the items with no grade at all.
	ungraded
)

// gradingWalk finds a grading queue's items for a run judged by one judge
// or none: every spread is 0, so the queue is the items not graded before
// the session, then those graded before, each part by id. Counts over the
// grades (few next to the items) and walks of the items' id index replace
// reading the whole run.
type gradingWalk struct {
	s     *Store
	ctx   context.Context
	runID int64
	g     GradingSession
}

// place is GradingPlace on the walk.
func (w gradingWalk) place(itemID int64) (GradingPlace, error) {
	var p GradingPlace
	total, err := w.total()
	if err != nil {
		return p, err
	}
	graded, before, err := w.gradeCounts()
	if err != nil {
		return p, err
	}
	p.Total, p.Graded, p.Queue = total, graded, total
	if w.g.UngradedOnly {
		p.Queue -= before
	}
	if p.Queue == 0 {
		return p, nil
	}
	c, isOld, err := w.current(itemID)
	if err != nil {
		return p, err
	}
	p.ItemID = c
	if p.Position, err = w.position(c, isOld, total-before); err != nil {
		return p, err
	}
	if p.PrevID, err = w.prev(c, isOld); err != nil {
		return p, err
	}
	if p.NextID, err = w.next(c, isOld); err != nil {
		return p, err
	}
	p.NextToGrade, err = w.nextToGrade(c, isOld, itemID, p.NextID)
	return p, err
}

// total counts the items matching the filter, unless the caller knows.
func (w gradingWalk) total() (int64, error) {
	if w.g.Filter.Total != nil {
		return *w.g.Filter.Total, nil
	}
	q, err := w.s.itemFilterQuery(w.ctx, w.runID, w.g.Filter)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: grading queue total: %w", err)
	}
	return n, nil
}

// gradeCounts counts the matching items graded, and those graded before the session.
func (w gradingWalk) gradeCounts() (graded, before int64, err error) {
	q, err := w.graded()
	if err != nil {
		return 0, 0, err
	}
	row := q.Select("COUNT(*), COALESCE(SUM(CASE WHEN g.updated_at < ? THEN 1 ELSE 0 END), 0)", w.since()).Row()
	if err := row.Scan(&graded, &before); err != nil {
		return 0, 0, fmt.Errorf("store: grading queue counts: %w", err)
	}
	return graded, before, nil
}

// graded is the matching items joined to their grades, driven from the run's grades.
func (w gradingWalk) graded() (*gorm.DB, error) {
	q, err := w.s.itemFilterQuery(w.ctx, w.runID, w.g.Filter)
	if err != nil {
		return nil, err
	}
	return q.Joins("JOIN grades g ON g.item_id = i.id AND g.run_id = ?", w.runID), nil
}

// current is the item asked for when it is in the queue, else the head,
// and whether it was graded before the session.
func (w gradingWalk) current(itemID int64) (int64, bool, error) {
	if itemID > 0 {
		q, err := w.s.itemFilterQuery(w.ctx, w.runID, w.g.Filter)
		if err != nil {
			return 0, false, err
		}
		var rows []struct{ Old bool }
		err = q.Select("CASE WHEN g.updated_at < ? THEN 1 ELSE 0 END AS old", w.since()).
			Joins("LEFT JOIN grades g ON g.item_id = i.id").Where("i.id = ?", itemID).Scan(&rows).Error
		if err != nil {
			return 0, false, fmt.Errorf("store: grading queue item: %w", err)
		}
		if len(rows) == 1 && !(rows[0].Old && w.g.UngradedOnly) {
			return itemID, rows[0].Old, nil
		}
	}
	head, err := w.seek(fresh, 0, true, 0)
	if head != 0 || err != nil || w.g.UngradedOnly {
		return head, false, err
	}
	head, err = w.seek(old, 0, true, 0)
	return head, true, err
}

// position is item c's place in the queue, from 1; freshItems counts the
// queue's first part.
func (w gradingWalk) position(c int64, isOld bool, freshItems int64) (int64, error) {
	q, err := w.graded()
	if err != nil {
		return 0, err
	}
	var oldBelow int64
	if err := q.Where("g.updated_at < ? AND i.id < ?", w.since(), c).Count(&oldBelow).Error; err != nil {
		return 0, fmt.Errorf("store: grading queue position: %w", err)
	}
	if isOld {
		return freshItems + oldBelow + 1, nil
	}
	if q, err = w.s.itemFilterQuery(w.ctx, w.runID, w.g.Filter); err != nil {
		return 0, err
	}
	var below int64
	if err := q.Where("i.id < ?", c).Count(&below).Error; err != nil {
		return 0, fmt.Errorf("store: grading queue position: %w", err)
	}
	return below - oldBelow + 1, nil
}

// prev is the item before c in the queue (0: c is the head).
func (w gradingWalk) prev(c int64, isOld bool) (int64, error) {
	if !isOld {
		return w.seek(fresh, c, false, 0)
	}
	id, err := w.seek(old, c, false, 0)
	if id != 0 || err != nil {
		return id, err
	}
	return w.seek(fresh, 0, false, 0) // the first part's last item
}

// next is the item after c in the queue (0: c is the last).
func (w gradingWalk) next(c int64, isOld bool) (int64, error) {
	if isOld {
		return w.seek(old, c, true, 0)
	}
	id, err := w.seek(fresh, c, true, 0)
	if id != 0 || err != nil || w.g.UngradedOnly {
		return id, err
	}
	return w.seek(old, 0, true, 0)
}

// nextToGrade is GradingPlace.NextToGrade. Ungraded items are all in the
// queue's first part, so none follows an item graded before.
func (w gradingWalk) nextToGrade(c int64, isOld bool, itemID, next int64) (int64, error) {
	if c == itemID && !isOld {
		id, err := w.seek(ungraded, c, true, 0)
		if id != 0 || err != nil {
			return id, err
		}
	}
	id, err := w.seek(ungraded, 0, true, itemID)
	if id != 0 || err != nil {
		return id, err
	}
	if c == itemID && next != 0 {
		return next, nil
	}
	return itemID, nil
}

// seek walks the items' id index from id from (0: from the start or the
// end), up when asc, for the first item of kind other than except; 0 when
// there is none.
func (w gradingWalk) seek(kind queueKind, from int64, asc bool, except int64) (int64, error) {
	q, err := w.s.itemsInOrder(w.ctx, w.runID, w.g.Filter, !asc)
	if err != nil {
		return 0, err
	}
	switch kind {
	case fresh:
		q = q.Where("NOT EXISTS (SELECT 1 FROM grades g WHERE g.item_id = i.id AND g.updated_at < ?)", w.since())
	case old:
		q = q.Where("EXISTS (SELECT 1 FROM grades g WHERE g.item_id = i.id AND g.updated_at < ?)", w.since())
	case ungraded:
		q = q.Where("NOT EXISTS (SELECT 1 FROM grades g WHERE g.item_id = i.id)")
	}
	switch {
	case asc && from > 0:
		q = q.Where("i.id > ?", from)
	case !asc && from > 0:
		q = q.Where("i.id < ?", from)
	}
	if except > 0 {
		q = q.Where("i.id <> ?", except)
	}
	var ids []int64
	if err := q.Limit(1).Pluck("i.id", &ids).Error; err != nil {
		return 0, fmt.Errorf("store: grading queue walk: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}

func (w gradingWalk) since() any { return w.g.Since.UTC() }
