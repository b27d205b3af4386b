package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// listTable is a FROM item that reads a Go list as a one-column table
// named alias, its column value, and the one argument it binds: on
// PostgreSQL unnest of an array, on SQLite json_each of a JSON array. A
// statement then names any number of values with one placeholder, where an
// IN list would need one each (and chunks under the databases' limits on
// bound parameters). Run it with rawScan or rawExec: GORM would expand the
// array into a list of placeholders.
func listTable[T int64 | string](s *Store, alias string, vals []T) (string, any, error) {
	if s.dialect == Postgres {
		typ := "bigint"
		if _, ok := any(vals).([]string); ok {
			typ = "text"
		}
		return fmt.Sprintf("unnest(?::%s[]) AS %s(value)", typ, alias), vals, nil
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return "", nil, fmt.Errorf("store: encode list: %w", err)
	}
	return "json_each(?) AS " + alias, string(b), nil
}

// taskKey is a task's id and task_id.
type taskKey struct {
	ID      int64
	TaskKey string
}

// taskKeysOf reads the ids and task_ids of the tasks that have one of ids
// or one of keys, in one query per list.
func (s *Store) taskKeysOf(ctx context.Context, ids []int64, keys []string) ([]taskKey, error) {
	var rows []taskKey
	find := func(column, list string, arg any) error {
		var part []taskKey
		err := s.rawScan(ctx, &part, `SELECT t.id, t.task_key FROM tasks t JOIN `+list+` ON t.`+column+` = l.value`, arg)
		if err != nil {
			return fmt.Errorf("store: resolve tasks: %w", err)
		}
		rows = append(rows, part...)
		return nil
	}
	if len(ids) > 0 {
		list, arg, err := listTable(s, "l", ids)
		if err != nil {
			return nil, err
		}
		if err := find("id", list, arg); err != nil {
			return nil, err
		}
	}
	if len(keys) > 0 {
		list, arg, err := listTable(s, "l", keys)
		if err != nil {
			return nil, err
		}
		if err := find("task_key", list, arg); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// removeCollectionTasks takes taskIDs out of the collection.
func (s *Store) removeCollectionTasks(ctx context.Context, id int64, taskIDs []int64) error {
	if len(taskIDs) == 0 {
		return nil
	}
	list, arg, err := listTable(s, "l", taskIDs)
	if err != nil {
		return err
	}
	if err := s.execList(ctx, `DELETE FROM collection_tasks
		WHERE collection_id = ? AND task_id IN (SELECT l.value FROM `+list+`)`, id, arg); err != nil {
		return fmt.Errorf("store: remove collection tasks: %w", err)
	}
	return nil
}

// execList runs a statement that binds a listTable's argument, past GORM
// (which would expand it), its error translated as GORM's are.
func (s *Store) execList(ctx context.Context, text string, args ...any) error {
	if _, err := s.conn(ctx).Statement.ConnPool.ExecContext(ctx, s.placeholders(text), args...); err != nil {
		return s.translate(err)
	}
	return nil
}

// translate maps a driver's error to GORM's (gorm.ErrDuplicatedKey…), as
// GORM does for the statements it runs itself.
func (s *Store) translate(err error) error {
	if tr, ok := s.db.Dialector.(interface{ Translate(error) error }); ok {
		return tr.Translate(err)
	}
	return err
}
