package store

import "context"

// AddCollectionTasksThen links taskIDs to collection id as CreateCollection
// does, then runs then in the same transaction, so tests can see what the
// links hold before they commit.
func (s *Store) AddCollectionTasksThen(ctx context.Context, id int64, taskIDs []int64, then func() error) error {
	return s.Transact(ctx, func(tx *Store) error {
		if err := tx.addCollectionTasks(ctx, id, taskIDs); err != nil {
			return err
		}
		return then()
	})
}
