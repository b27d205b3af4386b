package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"tribunal/rubric"
)

// StyleInput is what a user sends to create a judgement style or a new version of one.
type StyleInput struct {
	Name           string   `json:"name"`
	ScaleMin       int      `json:"scale_min"`
	ScaleMax       int      `json:"scale_max"`
	Metrics        []Metric `json:"metrics"`
	PromptTemplate string   `json:"prompt_template"`
	// AsksViolations has the judge also list what the answer violated
	// (rubric.Violation), counted per model and category in the summary.
	AsksViolations bool `json:"asks_violations"`
}

// DefaultStyleName is the built-in style of the single-judge run: one score from 1 to 10.
const DefaultStyleName = "Default (1–10)"

// builtinStyles are created on first start; users may add versions to them.
var builtinStyles = []StyleInput{
	{Name: DefaultStyleName, ScaleMin: 1, ScaleMax: 10,
		Metrics: []Metric{{Name: rubric.Overall, Description: "Overall quality: correctness first, then completeness and clarity.", Weight: 1}}},
	{Name: "Five metrics (0–5)", ScaleMin: 0, ScaleMax: 5, Metrics: rubric.BuiltinMetrics},
	{Name: TaskBenchStyleName, ScaleMin: 0, ScaleMax: 100, AsksViolations: true, Metrics: taskBenchMetrics},
}

// TaskBenchStyleName is the built-in style of TaskBench's judge (seed 004
// §7): accuracy, format and compliance from 0 to 100, and the violations.
const TaskBenchStyleName = "TaskBench (0–100)"

// taskBenchMetrics weigh as TaskBench's judge instructions do: accuracy 40
// points, format 30, compliance 30.
var taskBenchMetrics = []Metric{
	{Name: "accuracy", Description: "Is the content correct and complete: does it do what the task asks, with nothing invented? The top score means fully correct.", Weight: 0.4},
	{Name: "format", Description: "Does the output follow the format the task asks for (structure, fields, syntax)? The top score means exactly the format asked.", Weight: 0.3},
	{Name: "compliance", Description: "Does the output respect every constraint of the task (lengths, counts, ranges, required parts)? The top score means no constraint broken.", Weight: 0.3},
}

// Normalize fills defaults and checks the style.
func (in *StyleInput) Normalize(ctx context.Context) error {
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	}
	if in.ScaleMin == 0 && in.ScaleMax == 0 {
		in.ScaleMin, in.ScaleMax = 1, 10
	}
	if len(in.Metrics) == 0 {
		in.Metrics = []Metric{builtinStyles[0].Metrics[0]}
	}
	builtin := map[string]Metric{}
	for _, m := range rubric.BuiltinMetrics {
		builtin[m.Name] = m
	}
	for i := range in.Metrics {
		m := &in.Metrics[i]
		m.Name = strings.TrimSpace(m.Name)
		m.Description = strings.TrimSpace(m.Description)
		if m.Description == "" {
			m.Description = builtin[m.Name].Description
		}
		if m.Weight == 0 {
			m.Weight = 1 // an omitted weight counts fully
		}
	}
	if err := rubric.ValidateMetrics(in.Metrics, in.ScaleMin, in.ScaleMax); err != nil {
		return invalid("metrics", "%s", err.Error())
	}
	if strings.TrimSpace(in.PromptTemplate) == "" {
		in.PromptTemplate = rubric.DefaultTemplate
	}
	if _, err := rubric.Parse(ctx, in.PromptTemplate); err != nil {
		return invalid("prompt_template", "%s", err.Error())
	}
	return nil
}

// versionRow is the style version the input saves.
func (in StyleInput) versionRow(styleID int64, version int, now time.Time) *styleVersionRow {
	return &styleVersionRow{StyleID: styleID, Version: version, Name: in.Name, ScaleMin: in.ScaleMin, ScaleMax: in.ScaleMax,
		Metrics: in.Metrics, PromptTemplate: in.PromptTemplate, AsksViolations: in.AsksViolations, CreatedAt: now}
}

type styleRow struct {
	ID        int64
	Name      string
	Version   int
	Builtin   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (styleRow) TableName() string { return "judgement_styles" }

type styleVersionRow struct {
	ID             int64
	StyleID        int64
	Version        int
	Name           string
	ScaleMin       int
	ScaleMax       int
	Metrics        []Metric `gorm:"serializer:json"`
	PromptTemplate string
	AsksViolations bool
	CreatedAt      time.Time
}

func (styleVersionRow) TableName() string { return "judgement_style_versions" }

func (v styleVersionRow) style(r styleRow) JudgementStyle {
	return JudgementStyle{ID: r.ID, Name: v.Name, Version: v.Version, VersionID: v.ID, Builtin: r.Builtin,
		ScaleMin: v.ScaleMin, ScaleMax: v.ScaleMax, Metrics: v.Metrics, PromptTemplate: v.PromptTemplate,
		AsksViolations: v.AsksViolations, CreatedAt: r.CreatedAt, UpdatedAt: v.CreatedAt}
}

// ensureBuiltinStyles creates the built-in styles once; several processes
// starting together insert them once between them.
func (s *Store) ensureBuiltinStyles(ctx context.Context) error {
	for _, in := range builtinStyles {
		if err := in.Normalize(ctx); err != nil {
			return fmt.Errorf("store: built-in style %q: %w", in.Name, err)
		}
		err := s.Transact(ctx, func(tx *Store) error {
			now := s.now()
			row := styleRow{Name: in.Name, Version: 1, Builtin: true, CreatedAt: now, UpdatedAt: now}
			res := tx.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
			if res.Error != nil || res.RowsAffected == 0 {
				return res.Error // it exists already
			}
			return tx.conn(ctx).Create(in.versionRow(row.ID, 1, now)).Error
		})
		if err != nil {
			return fmt.Errorf("store: built-in style %q: %w", in.Name, err)
		}
	}
	return nil
}

// Styles lists the judgement styles at their current versions.
func (s *Store) Styles(ctx context.Context) ([]JudgementStyle, error) {
	var rows []styleRow
	if err := s.conn(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: styles: %w", err)
	}
	out := make([]JudgementStyle, 0, len(rows))
	for _, r := range rows {
		var v styleVersionRow
		if err := s.conn(ctx).Where("style_id = ? AND version = ?", r.ID, r.Version).Take(&v).Error; err != nil {
			return nil, fmt.Errorf("store: style %d version: %w", r.ID, err)
		}
		out = append(out, v.style(r))
	}
	return out, nil
}

// Style returns a style at its current version.
func (s *Store) Style(ctx context.Context, id int64) (*JudgementStyle, error) {
	return s.styleVersion(ctx, id, 0)
}

// StyleVersions lists every version of a style, newest first.
func (s *Store) StyleVersions(ctx context.Context, id int64) ([]JudgementStyle, error) {
	var r styleRow
	if err := s.conn(ctx).Take(&r, id).Error; err != nil {
		return nil, fmt.Errorf("store: style: %w", notFound(err, "judgement style", id))
	}
	var vs []styleVersionRow
	if err := s.conn(ctx).Where("style_id = ?", id).Order("version DESC").Find(&vs).Error; err != nil {
		return nil, fmt.Errorf("store: style versions: %w", err)
	}
	out := make([]JudgementStyle, len(vs))
	for i, v := range vs {
		out[i] = v.style(r)
	}
	return out, nil
}

// styleVersion returns a style at a version (0: the current one).
func (s *Store) styleVersion(ctx context.Context, id int64, version int) (*JudgementStyle, error) {
	var r styleRow
	if err := s.conn(ctx).Take(&r, id).Error; err != nil {
		return nil, fmt.Errorf("store: style: %w", notFound(err, "judgement style", id))
	}
	if version == 0 {
		version = r.Version
	}
	var v styleVersionRow
	if err := s.conn(ctx).Where("style_id = ? AND version = ?", id, version).Take(&v).Error; err != nil {
		return nil, fmt.Errorf("store: style version: %w", notFound(err, "judgement style version", version))
	}
	st := v.style(r)
	return &st, nil
}

// DefaultStyle returns the built-in default style.
func (s *Store) DefaultStyle(ctx context.Context) (*JudgementStyle, error) {
	var r styleRow
	if err := s.conn(ctx).Where("name = ? AND builtin", DefaultStyleName).Take(&r).Error; err != nil {
		return nil, fmt.Errorf("store: default style: %w", notFound(err, "judgement style", DefaultStyleName))
	}
	return s.Style(ctx, r.ID)
}

// CreateStyle saves a new style at version 1.
func (s *Store) CreateStyle(ctx context.Context, in StyleInput) (*JudgementStyle, error) {
	if err := in.Normalize(ctx); err != nil {
		return nil, err
	}
	var id int64
	err := s.Transact(ctx, func(tx *Store) error {
		now := s.now()
		row := styleRow{Name: in.Name, Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := tx.conn(ctx).Create(&row).Error; err != nil {
			return err
		}
		id = row.ID
		return tx.conn(ctx).Create(in.versionRow(row.ID, 1, now)).Error
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, conflict("a judgement style named %q already exists", in.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("store: create style: %w", err)
	}
	return s.Style(ctx, id)
}

// UpdateStyle saves the input as the style's next version; runs keep the
// version they were made with.
func (s *Store) UpdateStyle(ctx context.Context, id int64, in StyleInput) (*JudgementStyle, error) {
	if err := in.Normalize(ctx); err != nil {
		return nil, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		var r styleRow
		// The row lock orders concurrent edits, so versions never collide.
		if err := tx.conn(ctx).Clauses(lockForUpdate(tx.dialect)...).Take(&r, id).Error; err != nil {
			return notFound(err, "judgement style", id)
		}
		now := s.now()
		next := r.Version + 1
		if err := tx.conn(ctx).Model(&styleRow{}).Where("id = ?", id).
			Updates(map[string]any{"name": in.Name, "version": next, "updated_at": now}).Error; err != nil {
			return err
		}
		return tx.conn(ctx).Create(in.versionRow(id, next, now)).Error
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, conflict("a judgement style named %q already exists", in.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("store: update style: %w", err)
	}
	return s.Style(ctx, id)
}

// DeleteStyle removes a style that no judge uses; runs keep their copy.
func (s *Store) DeleteStyle(ctx context.Context, id int64) error {
	return s.Transact(ctx, func(tx *Store) error {
		var r styleRow
		if err := tx.conn(ctx).Take(&r, id).Error; err != nil {
			return fmt.Errorf("store: delete style: %w", notFound(err, "judgement style", id))
		}
		if r.Builtin {
			return conflict("%q is built in; add a version instead of deleting it", r.Name)
		}
		var names []string
		if err := tx.conn(ctx).Model(&Judge{}).Where("style_id = ?", id).Order("name").Limit(5).Pluck("name", &names).Error; err != nil {
			return fmt.Errorf("store: delete style: %w", err)
		}
		if len(names) > 0 {
			return conflict("judges use this style: %s", strings.Join(names, ", "))
		}
		if err := tx.conn(ctx).Delete(&styleRow{}, id).Error; err != nil {
			return fmt.Errorf("store: delete style: %w", err)
		}
		return nil
	})
}
