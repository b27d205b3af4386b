package store

import "context"

// RawScheduleToken returns a schedule's token_hash column as stored.
func (s *Store) RawScheduleToken(ctx context.Context, id int64) (string, error) {
	var raw string
	err := s.conn(ctx).Raw(`SELECT token_hash FROM schedules WHERE id = ?`, id).Scan(&raw).Error
	return raw, err
}
