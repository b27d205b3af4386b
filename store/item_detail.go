package store

import (
	"context"
	"fmt"
)

// ItemWork returns an item with its frozen task and target; an item of a
// deleted run is not found.
func (s *Store) ItemWork(ctx context.Context, itemID int64) (*WorkItem, error) {
	var it Item
	err := s.conn(ctx).
		Where("EXISTS (SELECT 1 FROM runs WHERE runs.id = items.run_id AND runs.deleted_at IS NULL)").
		Take(&it, itemID).Error
	if err != nil {
		return nil, fmt.Errorf("store: item: %w", notFound(err, "item", itemID))
	}
	w := WorkItem{Item: it}
	if err := s.conn(ctx).Take(&w.Task, it.RunTaskID).Error; err != nil {
		return nil, fmt.Errorf("store: item task: %w", err)
	}
	if err := s.conn(ctx).Take(&w.Target, it.RunTargetID).Error; err != nil {
		return nil, fmt.Errorf("store: item target: %w", err)
	}
	return &w, nil
}

// ItemScoreRows lists an item's score rows, raw replies included, in id order.
func (s *Store) ItemScoreRows(ctx context.Context, itemID int64) ([]Score, error) {
	out := []Score{}
	if err := s.conn(ctx).Where("item_id = ?", itemID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: item scores: %w", err)
	}
	return out, nil
}

// ItemComparisons lists the pairwise comparisons an item's answer took part
// in, on either side, in id order.
func (s *Store) ItemComparisons(ctx context.Context, itemID int64) ([]Comparison, error) {
	out := []Comparison{}
	if err := s.conn(ctx).Where("item_a = ? OR item_b = ?", itemID, itemID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: item comparisons: %w", err)
	}
	return out, nil
}

// ItemPlace is where an item stands among a run's items that match a
// filter (its paging aside), in id order.
type ItemPlace struct {
	// Prev and Next are the matching items just before and after; 0 at an end.
	Prev, Next int64
	// Matches says the item itself is in the filtered list.
	Matches bool
}

// ItemPlace finds an item's neighbours in a filtered list of its run's
// items by three seeks of the items' id index, never counting the list (a
// million-item run's count would cost more than the rest of the page). The
// item itself need not match (its status may have moved on): its
// neighbours are still those around its id.
func (s *Store) ItemPlace(ctx context.Context, runID, itemID int64, f ItemFilter) (ItemPlace, error) {
	var p ItemPlace
	seek := func(where string, desc bool) (int64, error) {
		q, err := s.itemsInOrder(ctx, runID, f, desc)
		if err != nil {
			return 0, err
		}
		var ids []int64
		if err := q.Where(where, itemID).Limit(1).Pluck("i.id", &ids).Error; err != nil {
			return 0, fmt.Errorf("store: item place: %w", err)
		}
		if len(ids) == 0 {
			return 0, nil
		}
		return ids[0], nil
	}
	var err error
	if p.Prev, err = seek("i.id < ?", true); err != nil {
		return p, err
	}
	if p.Next, err = seek("i.id > ?", false); err != nil {
		return p, err
	}
	self, err := seek("i.id = ?", false)
	p.Matches = self == itemID
	return p, err
}
