package store

import (
	"context"
	"fmt"
)

// withoutKeyChecks runs fn, a bulk insert on PostgreSQL, without the
// foreign-key checks of the rows it inserts when the role may turn them off
// (session_replication_role, a superuser's); else, and on SQLite, with them.
// Each check is a query of its own per row and key: seconds per 100,000
// rows.
//
// fn must insert only references that cannot dangle: to rows its
// transaction made, or that it locked itself FOR KEY SHARE in one statement,
// as each check would have, so a concurrent delete waits for the commit and
// then cascades to the new rows. The constraints stay, with their
// cascades, for every other write. No table has triggers of its own, which
// the setting would also skip.
func (s *Store) withoutKeyChecks(ctx context.Context, fn func() error) error {
	if s.dialect != Postgres {
		return fn()
	}
	var super bool
	if err := s.conn(ctx).Raw(`SELECT current_setting('is_superuser') = 'on'`).Scan(&super).Error; err != nil {
		return fmt.Errorf("read role: %w", err)
	}
	if !super {
		return fn()
	}
	if err := s.conn(ctx).Exec(`SET LOCAL session_replication_role = replica`).Error; err != nil {
		return fmt.Errorf("turn key checks off: %w", err)
	}
	ferr := fn()
	// On again whatever fn returned: an error of its own (a task not found)
	// leaves the transaction usable, and its caller might write on.
	if err := s.conn(ctx).Exec(`SET LOCAL session_replication_role = origin`).Error; err != nil && ferr == nil {
		return fmt.Errorf("turn key checks on: %w", err)
	}
	return ferr
}
