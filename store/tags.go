package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// TagList is a list of free-form tags, stored as a JSON list of strings (the
// same encoding as tasks.tags, so one filter fits every table). A nil list is
// stored and shown as [].
type TagList []string

// Value stores the list as JSON text.
func (t TagList) Value() (driver.Value, error) {
	if t == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(t))
	if err != nil {
		return nil, fmt.Errorf("store: encode tags: %w", err)
	}
	return string(b), nil
}

// Scan reads JSON text; NULL and empty text are no tags.
func (t *TagList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*t = TagList{}
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("store: scan tags: unexpected %T", src)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		*t = TagList{}
		return nil
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("store: scan tags: %w", err)
	}
	*t = nonNil(out)
	return nil
}

// MarshalJSON shows no tags as [] rather than null.
func (t TagList) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(t))
}

// Has reports whether the list holds tag, ignoring case.
func (t TagList) Has(tag string) bool {
	return slices.ContainsFunc(t, func(s string) bool { return strings.EqualFold(s, tag) })
}

// ParseTags splits a comma- or semicolon-separated tag field ("a, b; c").
func ParseTags(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' })
}

// NormTags trims tags, drops empty and repeated ones (ignoring case) and
// bounds their size; field names the input in the error.
func NormTags(field string, tags []string) (TagList, error) {
	out, err := normTags(field, tags)
	return TagList(out), err
}

// tagCond is a WHERE condition matching rows whose JSON tag column holds tag
// (a whole tag, ignoring case), with its argument.
func tagCond(column, tag string) (string, string) {
	b, _ := json.Marshal(strings.TrimSpace(tag)) // a string always encodes
	return "LOWER(" + column + `) LIKE ? ESCAPE '\'`, likePattern(string(b))
}

// withTag narrows q to rows of column carrying tag; an empty tag keeps all.
func withTag(q *gorm.DB, column, tag string) *gorm.DB {
	if strings.TrimSpace(tag) == "" {
		return q
	}
	cond, arg := tagCond(column, tag)
	return q.Where(cond, arg)
}

// AllTags lists every tag in use on tasks, collections and runs, sorted
// without regard to case (the first spelling met wins), for tag filters.
func (s *Store) AllTags(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	out := []string{}
	for _, table := range []string{"tasks", "collections", "runs"} {
		var lists []string
		// Distinct lists: many rows usually share a few tag sets.
		err := s.conn(ctx).Table(table).Where("tags <> '[]'").Distinct("tags").Limit(10_000).Pluck("tags", &lists).Error
		if err != nil {
			return nil, fmt.Errorf("store: tags of %s: %w", table, err)
		}
		for _, l := range lists {
			var tags TagList
			if err := tags.Scan(l); err != nil {
				continue // a hand-edited row must not break every list page
			}
			for _, t := range tags {
				if k := strings.ToLower(t); !seen[k] {
					seen[k] = true
					out = append(out, t)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out, nil
}

// CollectionsTagged lists the collections carrying tag (all when tag is
// empty), by name, with their task counts.
func (s *Store) CollectionsTagged(ctx context.Context, tag string) ([]Collection, error) {
	cs := []Collection{}
	if err := withTag(s.collectionsQuery(ctx), "collections.tags", tag).Order("name").Find(&cs).Error; err != nil {
		return nil, fmt.Errorf("store: list collections: %w", err)
	}
	return cs, nil
}
