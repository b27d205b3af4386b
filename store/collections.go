package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// TaskRef names a task by its numeric id or by its task_id string; JSON
// accepts either form, so scripts can use whichever they have.
type TaskRef struct {
	ID  int64
	Key string
}

// UnmarshalJSON reads 12 or "t-12", and the {"ID", "Key"} object that
// schedule templates were stored with before MarshalJSON existed.
func (r *TaskRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &r.Key)
	case len(b) > 0 && b[0] == '{':
		var old struct {
			ID  int64
			Key string
		}
		err := json.Unmarshal(b, &old)
		r.ID, r.Key = old.ID, old.Key
		return err
	}
	return json.Unmarshal(b, &r.ID)
}

// MarshalJSON writes the ref as it is read: 12 or "t-12".
func (r TaskRef) MarshalJSON() ([]byte, error) {
	if r.Key != "" {
		return json.Marshal(r.Key)
	}
	return json.Marshal(r.ID)
}

// String shows the ref as the user gave it.
func (r TaskRef) String() string {
	if r.Key != "" {
		return strconv.Quote(r.Key)
	}
	return strconv.FormatInt(r.ID, 10)
}

// CollectionInput is what a user sends to create or update a collection.
type CollectionInput struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	TaskIDs     *[]TaskRef `json:"task_ids"`
	// Tags replace the collection's tags when sent (nil keeps them).
	Tags *[]string `json:"tags"`
}

func (in *CollectionInput) normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	}
	if in.Tags != nil {
		tags, err := normTags("tags", *in.Tags)
		if err != nil {
			return err
		}
		in.Tags = &tags
	}
	return nil
}

// CollectionDetail is a collection with the ids of its tasks.
type CollectionDetail struct {
	Collection
	TaskIDs []int64 `json:"task_ids"`
}

func (s *Store) collectionsQuery(ctx context.Context) *gorm.DB {
	return s.conn(ctx).Model(&Collection{}).
		Select("collections.*, (SELECT COUNT(*) FROM collection_tasks ct WHERE ct.collection_id = collections.id) AS task_count")
}

// Collections lists every collection with its task count.
func (s *Store) Collections(ctx context.Context) ([]Collection, error) {
	cs := []Collection{}
	if err := s.collectionsQuery(ctx).Order("name").Find(&cs).Error; err != nil {
		return nil, fmt.Errorf("store: list collections: %w", err)
	}
	return cs, nil
}

// Collection returns one collection with its task ids.
func (s *Store) Collection(ctx context.Context, id int64) (*CollectionDetail, error) {
	var d CollectionDetail
	if err := s.collectionsQuery(ctx).Where("collections.id = ?", id).Take(&d.Collection).Error; err != nil {
		return nil, fmt.Errorf("store: collection: %w", notFound(err, "collection", id))
	}
	d.TaskIDs = []int64{}
	if err := s.conn(ctx).Model(&collectionTask{}).Where("collection_id = ?", id).Order("task_id").Pluck("task_id", &d.TaskIDs).Error; err != nil {
		return nil, fmt.Errorf("store: collection tasks: %w", err)
	}
	return &d, nil
}

// ResolveTaskRefs turns refs into task ids; unknown refs are a validation error naming them all.
func (s *Store) ResolveTaskRefs(ctx context.Context, field string, refs []TaskRef) ([]int64, error) {
	var ids []int64
	var keys []string
	for _, r := range refs {
		if r.Key != "" {
			keys = append(keys, r.Key)
		} else {
			ids = append(ids, r.ID)
		}
	}
	rows, err := s.taskKeysOf(ctx, ids, keys)
	if err != nil {
		return nil, err
	}
	byID, byKey := map[int64]bool{}, map[string]int64{}
	for _, r := range rows {
		byID[r.ID] = true
		byKey[r.TaskKey] = r.ID
	}
	out := make([]int64, 0, len(refs))
	var missing []string
	seen := map[int64]bool{}
	for _, r := range refs {
		id, ok := r.ID, byID[r.ID]
		if r.Key != "" {
			id, ok = byKey[r.Key]
		}
		if !ok {
			missing = append(missing, r.String())
			continue
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(missing) > 0 {
		return nil, invalid(field, "no such task: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// CreateCollection saves a new collection, optionally with tasks.
func (s *Store) CreateCollection(ctx context.Context, in CollectionInput) (*CollectionDetail, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	var id int64
	err := s.Transact(ctx, func(tx *Store) error {
		now := s.now()
		c := Collection{Name: in.Name, Description: in.Description, CreatedAt: now, UpdatedAt: now}
		if in.Tags != nil {
			c.Tags = *in.Tags
		}
		if err := tx.conn(ctx).Omit("TaskCount").Create(&c).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return conflict("a collection named %q already exists", in.Name)
			}
			return fmt.Errorf("store: create collection: %w", err)
		}
		id = c.ID
		if in.TaskIDs == nil {
			return nil
		}
		ids, err := tx.ResolveTaskRefs(ctx, "task_ids", *in.TaskIDs)
		if err != nil {
			return err
		}
		return tx.addCollectionTasks(ctx, id, ids)
	})
	if err != nil {
		return nil, err
	}
	return s.Collection(ctx, id)
}

// UpdateCollection renames a collection; with task_ids it also replaces its tasks.
func (s *Store) UpdateCollection(ctx context.Context, id int64, in CollectionInput) (*CollectionDetail, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		updates := map[string]any{"name": in.Name, "description": in.Description, "updated_at": s.now()}
		if in.Tags != nil {
			updates["tags"] = TagList(*in.Tags)
		}
		res := tx.conn(ctx).Model(&Collection{}).Where("id = ?", id).Updates(updates)
		if res.Error != nil {
			if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
				return conflict("a collection named %q already exists", in.Name)
			}
			return fmt.Errorf("store: update collection: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("store: update collection: %w", &NotFoundError{What: "collection", ID: id})
		}
		if in.TaskIDs == nil {
			return nil
		}
		ids, err := tx.ResolveTaskRefs(ctx, "task_ids", *in.TaskIDs)
		if err != nil {
			return err
		}
		if err := tx.conn(ctx).Where("collection_id = ?", id).Delete(&collectionTask{}).Error; err != nil {
			return fmt.Errorf("store: update collection tasks: %w", err)
		}
		return tx.addCollectionTasks(ctx, id, ids)
	})
	if err != nil {
		return nil, err
	}
	return s.Collection(ctx, id)
}

// PatchCollectionTasks adds and removes tasks in one transaction.
func (s *Store) PatchCollectionTasks(ctx context.Context, id int64, add, remove []TaskRef) (*CollectionDetail, error) {
	err := s.Transact(ctx, func(tx *Store) error {
		var n int64
		if err := tx.conn(ctx).Model(&Collection{}).Where("id = ?", id).Count(&n).Error; err != nil {
			return fmt.Errorf("store: patch collection: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("store: patch collection: %w", &NotFoundError{What: "collection", ID: id})
		}
		addIDs, err := tx.ResolveTaskRefs(ctx, "add", add)
		if err != nil {
			return err
		}
		removeIDs, err := tx.ResolveTaskRefs(ctx, "remove", remove)
		if err != nil {
			return err
		}
		if err := tx.addCollectionTasks(ctx, id, addIDs); err != nil {
			return err
		}
		return tx.removeCollectionTasks(ctx, id, removeIDs)
	})
	if err != nil {
		return nil, err
	}
	return s.Collection(ctx, id)
}

func (s *Store) addCollectionTasks(ctx context.Context, id int64, taskIDs []int64) error {
	if len(taskIDs) == 0 {
		return nil
	}
	if s.dialect == Postgres {
		return s.withoutKeyChecks(ctx, func() error { return s.linkTasksPg(ctx, id, taskIDs) })
	}
	list, arg, err := listTable(s, "l", taskIDs)
	if err != nil {
		return err
	}
	// The WHERE makes SQLite read ON CONFLICT as the upsert clause.
	if err := s.execList(ctx, `INSERT INTO collection_tasks (collection_id, task_id)
		SELECT ?, l.value FROM `+list+` WHERE true
		ON CONFLICT (collection_id, task_id) DO NOTHING`, id, arg); err != nil {
		return fmt.Errorf("store: add collection tasks: %w", err)
	}
	return nil
}

// linkTasksPg adds tasks to collection id on PostgreSQL. It locks the
// collection and the tasks once each, as the key checks would row by row
// (see withoutKeyChecks): a task deleted meanwhile is not added, and a
// delete of the collection or a task waits for this transaction, then
// cascades to the new links. The tasks are read by their primary key in id
// order, so the links' key grows at its end (a join in hash order took
// twice as long).
func (s *Store) linkTasksPg(ctx context.Context, id int64, taskIDs []int64) error {
	var locked []int64
	if err := s.conn(ctx).Raw(`SELECT id FROM collections WHERE id = ? FOR KEY SHARE`, id).Scan(&locked).Error; err != nil {
		return fmt.Errorf("store: lock collection %d: %w", id, err)
	}
	if len(locked) == 0 {
		return fmt.Errorf("store: add collection tasks: %w", &NotFoundError{What: "collection", ID: id})
	}
	if err := s.execList(ctx, `INSERT INTO collection_tasks (collection_id, task_id)
		SELECT ?, t.id FROM tasks t WHERE t.id = ANY(CAST(? AS bigint[])) FOR KEY SHARE OF t
		ON CONFLICT (collection_id, task_id) DO NOTHING`, id, taskIDs); err != nil {
		return fmt.Errorf("store: add collection tasks: %w", err)
	}
	return nil
}

// AddMatchingTasks adds every task matching f (its page fields ignored) to
// the collection in one statement and says how many were not in it yet.
func (s *Store) AddMatchingTasks(ctx context.Context, id int64, f TaskFilter) (int64, error) {
	cond, args := f.where()
	// The SELECT has a WHERE, so SQLite reads ON CONFLICT as the upsert
	// clause, not as a join's ON; EXISTS keeps a missing collection's id out.
	res := s.conn(ctx).Exec(`INSERT INTO collection_tasks (collection_id, task_id)
		SELECT ?, tasks.id FROM tasks
		WHERE EXISTS (SELECT 1 FROM collections WHERE collections.id = ?) AND `+cond+`
		ON CONFLICT (collection_id, task_id) DO NOTHING`, append([]any{id, id}, args...)...)
	if res.Error != nil {
		return 0, fmt.Errorf("store: add matching tasks: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		// Nothing added: say so only after making sure the collection exists.
		var n int64
		if err := s.conn(ctx).Model(&Collection{}).Where("id = ?", id).Count(&n).Error; err != nil {
			return 0, fmt.Errorf("store: add matching tasks: %w", err)
		}
		if n == 0 {
			return 0, fmt.Errorf("store: add matching tasks: %w", &NotFoundError{What: "collection", ID: id})
		}
	}
	return res.RowsAffected, nil
}

// DeleteCollection removes a collection; its tasks and past runs stay.
func (s *Store) DeleteCollection(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&Collection{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete collection: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete collection: %w", &NotFoundError{What: "collection", ID: id})
	}
	return nil
}

// CollectionMembers reports which of taskIDs belong to the collection.
func (s *Store) CollectionMembers(ctx context.Context, id int64, taskIDs []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(taskIDs) == 0 {
		return out, nil
	}
	var ids []int64
	if err := s.conn(ctx).Model(&collectionTask{}).Where("collection_id = ? AND task_id IN ?", id, taskIDs).Pluck("task_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("store: collection members: %w", err)
	}
	for _, t := range ids {
		out[t] = true
	}
	return out, nil
}

// inChunks calls fn on successive parts of vals small enough for any
// database's limit on bound parameters.
func inChunks[T any](vals []T, fn func(part []T) error) error {
	const chunk = 1000
	for start := 0; start < len(vals); start += chunk {
		if err := fn(vals[start:min(start+chunk, len(vals))]); err != nil {
			return err
		}
	}
	return nil
}
