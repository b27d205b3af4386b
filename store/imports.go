package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// ImportInput is a parsed task file to save.
type ImportInput struct {
	Tasks []TaskInput
	// Collection names the collection the tasks join; it is created when
	// missing. Empty: the tasks join no collection.
	Collection string
	// CollectionTags are added to the collection's tags (a new collection starts with them).
	CollectionTags []string
	// DryRun reports what the import would do without writing anything.
	DryRun bool
}

// ImportResult says what an import did (or, for a dry run, would do).
type ImportResult struct {
	// Created and Updated count the tasks that were new and those whose
	// task_id existed already (their fields were replaced, never duplicated).
	Created int `json:"created"`
	Updated int `json:"updated"`
	// CreatedIDs and UpdatedIDs name them by task_id.
	CreatedIDs []string `json:"created_ids"`
	UpdatedIDs []string `json:"updated_ids"`
	// TaskIDs are every imported task_id, in file order.
	TaskIDs []string `json:"task_ids"`
	// Collection is the collection the tasks joined, nil without one.
	Collection *Collection `json:"collection"`
	// CollectionCreated reports that the import made the collection.
	CollectionCreated bool `json:"collection_created"`
	DryRun            bool `json:"dry_run,omitempty"`
}

// maxImportTasks bounds one import; bigger sets are split into files.
const maxImportTasks = 200_000

// UpsertTasks saves a file's tasks in one transaction, all or nothing: a task
// whose task_id exists is updated, the others are created, and all of them
// join the named collection (created when missing). An invalid task fails the
// whole import with a ValidationError naming it (tasks[i].field).
func (s *Store) UpsertTasks(ctx context.Context, in ImportInput) (*ImportResult, error) {
	if len(in.Tasks) == 0 {
		return nil, invalid("tasks", "the import has no tasks")
	}
	if len(in.Tasks) > maxImportTasks {
		return nil, invalid("tasks", "at most %d tasks per import; split the file", maxImportTasks)
	}
	in.Collection = strings.TrimSpace(in.Collection)
	if len(in.Collection) > 255 {
		return nil, invalid("collection", "is longer than 255 characters")
	}
	colTags, err := normTags("collection_tags", in.CollectionTags)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{CreatedIDs: []string{}, UpdatedIDs: []string{}, TaskIDs: make([]string, 0, len(in.Tasks)), DryRun: in.DryRun}
	rows := make([]Task, len(in.Tasks))
	first := make(map[string]int, len(in.Tasks))
	now := s.now()
	for i := range in.Tasks {
		t := &in.Tasks[i]
		if err := t.Normalize(); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				ve.Field = fmt.Sprintf("tasks[%d].%s", i, ve.Field)
			}
			return nil, err
		}
		if j, dup := first[t.TaskKey]; dup {
			return nil, invalid(fmt.Sprintf("tasks[%d].task_id", i), "%q is also tasks[%d]", t.TaskKey, j)
		}
		first[t.TaskKey] = i
		rows[i] = t.row()
		rows[i].UpdatedAt = now
		res.TaskIDs = append(res.TaskIDs, t.TaskKey)
	}
	write := func(tx *Store) error {
		existing, err := tx.taskIDsByKey(ctx, res.TaskIDs)
		if err != nil {
			return err
		}
		var creates []Task
		for i := range rows {
			if _, ok := existing[rows[i].TaskKey]; ok {
				res.UpdatedIDs = append(res.UpdatedIDs, rows[i].TaskKey)
				if in.DryRun {
					continue
				}
				err := tx.conn(ctx).Model(&Task{}).Where("id = ?", existing[rows[i].TaskKey]).
					Select("*").Omit("id", "created_at").Updates(&rows[i]).Error
				if err != nil {
					return fmt.Errorf("store: import: update task %q: %w", rows[i].TaskKey, err)
				}
				continue
			}
			res.CreatedIDs = append(res.CreatedIDs, rows[i].TaskKey)
			creates = append(creates, rows[i])
		}
		res.Created, res.Updated = len(res.CreatedIDs), len(res.UpdatedIDs)
		if in.DryRun {
			if in.Collection != "" {
				c, err := tx.collectionByName(ctx, in.Collection)
				if err != nil {
					return err
				}
				res.CollectionCreated = c == nil
				if c == nil {
					c = &Collection{Name: in.Collection, Tags: colTags}
				}
				res.Collection = c
			}
			return nil
		}
		if len(creates) > 0 {
			if err := tx.insertTasks(ctx, creates, now); err != nil {
				if errors.Is(err, gorm.ErrDuplicatedKey) {
					return conflict("a task of the file was created meanwhile by someone else; import again")
				}
				return fmt.Errorf("store: import: create tasks: %w", err)
			}
		}
		if in.Collection == "" {
			return nil
		}
		col, created, err := tx.ensureCollection(ctx, in.Collection, colTags)
		if err != nil {
			return err
		}
		res.CollectionCreated = created
		ids, err := tx.taskIDsByKey(ctx, res.TaskIDs)
		if err != nil {
			return err
		}
		list := make([]int64, 0, len(ids))
		for _, k := range res.TaskIDs {
			list = append(list, ids[k])
		}
		if err := tx.addCollectionTasks(ctx, col.ID, list); err != nil {
			return err
		}
		var c Collection
		if err := tx.collectionsQuery(ctx).Where("collections.id = ?", col.ID).Take(&c).Error; err != nil {
			return fmt.Errorf("store: import: read collection: %w", err)
		}
		res.Collection = &c
		return nil
	}
	if in.DryRun {
		err = write(s)
	} else {
		err = s.Transact(ctx, write)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// taskIDsByKey maps the task_ids that exist to their row ids.
func (s *Store) taskIDsByKey(ctx context.Context, keys []string) (map[string]int64, error) {
	rows, err := s.taskKeysOf(ctx, nil, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.TaskKey] = r.ID
	}
	return out, nil
}

// collectionByName returns the named collection, or nil when there is none.
func (s *Store) collectionByName(ctx context.Context, name string) (*Collection, error) {
	var cs []Collection
	if err := s.collectionsQuery(ctx).Where("collections.name = ?", name).Limit(1).Find(&cs).Error; err != nil {
		return nil, fmt.Errorf("store: collection by name: %w", err)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	return &cs[0], nil
}

// ensureCollection returns the named collection with tags added, creating
// it when missing; created reports which.
func (s *Store) ensureCollection(ctx context.Context, name string, tags TagList) (*Collection, bool, error) {
	c, err := s.collectionByName(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if c != nil {
		if len(tags) > 0 {
			merged, err := normTags("collection_tags", append(append([]string{}, c.Tags...), tags...))
			if err != nil {
				return nil, false, err
			}
			if len(merged) != len(c.Tags) {
				if err := s.conn(ctx).Model(&Collection{}).Where("id = ?", c.ID).
					Updates(map[string]any{"tags": TagList(merged), "updated_at": s.now()}).Error; err != nil {
					return nil, false, fmt.Errorf("store: import: tag collection: %w", err)
				}
				c.Tags = merged
			}
		}
		return c, false, nil
	}
	now := s.now()
	nc := Collection{Name: name, Description: "Imported", Tags: tags, CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Omit("TaskCount").Create(&nc).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, false, conflict("collection %q was created meanwhile by someone else; import again", name)
		}
		return nil, false, fmt.Errorf("store: import: create collection: %w", err)
	}
	return &nc, true, nil
}

// TasksByKey returns the tasks whose task_id is among keys, by task_id.
func (s *Store) TasksByKey(ctx context.Context, keys []string) (map[string]Task, error) {
	out := make(map[string]Task, len(keys))
	err := inChunks(keys, func(part []string) error {
		var rows []Task
		if err := s.conn(ctx).Where("task_key IN ?", part).Find(&rows).Error; err != nil {
			return fmt.Errorf("store: tasks by key: %w", err)
		}
		for _, t := range rows {
			out[t.TaskKey] = t
		}
		return nil
	})
	return out, err
}
