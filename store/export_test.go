package store

import (
	"context"
	"fmt"
	"time"
)

// Store methods only tests call.

// SetRunTags replaces a run's tags.
func (s *Store) SetRunTags(ctx context.Context, id int64, tags []string) (TagList, error) {
	norm, err := NormTags("tags", tags)
	if err != nil {
		return nil, err
	}
	res := s.conn(ctx).Model(&Run{}).Where("id = ?", id).Updates(map[string]any{"tags": norm, "updated_at": s.now()})
	if res.Error != nil {
		return nil, fmt.Errorf("store: set run tags: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("store: set run tags: %w", &NotFoundError{What: "run", ID: id})
	}
	return norm, nil
}

// NextDeliveryAt returns when the earliest pending delivery is due, or nil.
func (s *Store) NextDeliveryAt(ctx context.Context) (*time.Time, error) {
	var ds []Delivery
	if err := s.conn(ctx).Select("id", "next_attempt_at").Where("status = ?", DeliveryPending).
		Order("next_attempt_at").Limit(1).Find(&ds).Error; err != nil {
		return nil, fmt.Errorf("store: next delivery: %w", err)
	}
	if len(ds) == 0 {
		return nil, nil
	}
	return ds[0].NextAttemptAt, nil
}

// ItemRow reads an item's row through GORM, as the hand-written scan's reference.
func (s *Store) ItemRow(ctx context.Context, id int64) (Item, error) {
	var it Item
	err := s.conn(ctx).Take(&it, id).Error
	return it, err
}

// Setting reads a run-time setting of one of the pool's PostgreSQL sessions.
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := s.conn(ctx).Raw(`SELECT current_setting(?)`, name).Scan(&v).Error
	return v, err
}
