package store

import "context"

// SetItemMeasures writes an item's time and token counts as an answer
// would, so tests can aggregate exact figures.
func (s *Store) SetItemMeasures(ctx context.Context, itemID int64, timeMs, completion, prompt *int64) error {
	return s.conn(ctx).Model(&Item{}).Where("id = ?", itemID).
		Updates(map[string]any{"time_ms": timeMs, "completion_tokens": completion, "prompt_tokens": prompt}).Error
}
