package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// JudgeInput is what a user sends to create or edit a judge.
type JudgeInput struct {
	Name                   string         `json:"name"`
	ProviderID             int64          `json:"provider_id"`
	Model                  string         `json:"model"`
	PersonalityName        string         `json:"personality_name"`
	PersonalityDescription string         `json:"personality_description"`
	StyleID                int64          `json:"style_id"`
	Settings               TargetSettings `json:"settings"`
}

func (in *JudgeInput) normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	in.Model = strings.TrimSpace(in.Model)
	in.PersonalityName = strings.TrimSpace(in.PersonalityName)
	in.PersonalityDescription = strings.TrimSpace(in.PersonalityDescription)
	switch {
	case in.ProviderID == 0:
		return invalid("provider_id", "is required")
	case in.Model == "":
		return invalid("model", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case len(in.PersonalityName) > 255:
		return invalid("personality_name", "is longer than 255 characters")
	case len(in.PersonalityDescription) > 10_000:
		return invalid("personality_description", "is longer than 10,000 characters")
	}
	if in.Name == "" {
		in.Name = in.Model
		if in.PersonalityName != "" {
			in.Name += " (" + in.PersonalityName + ")"
		}
	}
	return in.Settings.Validate("settings")
}

// Validate checks generation settings; field prefixes the field names in errors.
func (s TargetSettings) Validate(field string) error {
	switch {
	case s.Temperature != nil && (*s.Temperature < 0 || *s.Temperature > 2):
		return invalid(field+".temperature", "must be within 0…2")
	case s.MaxTokens != nil && (*s.MaxTokens < 1 || *s.MaxTokens > 1_000_000):
		return invalid(field+".max_tokens", "must be within 1…1,000,000")
	case len(s.SystemPrompt) > 100_000:
		return invalid(field+".system_prompt", "is longer than 100,000 characters")
	}
	switch s.ReasoningEffort {
	case "", "minimal", "low", "medium", "high":
		return nil
	}
	return invalid(field+".reasoning_effort", "must be minimal, low, medium or high")
}

// checkJudgeRefs turns missing provider or style ids into field errors.
func (s *Store) checkJudgeRefs(ctx context.Context, in JudgeInput) error {
	var n int64
	if err := s.conn(ctx).Model(&Provider{}).Where("id = ?", in.ProviderID).Count(&n).Error; err != nil {
		return fmt.Errorf("store: judge provider: %w", err)
	}
	if n == 0 {
		return invalid("provider_id", "no provider with id %d", in.ProviderID)
	}
	if err := s.conn(ctx).Model(&styleRow{}).Where("id = ?", in.StyleID).Count(&n).Error; err != nil {
		return fmt.Errorf("store: judge style: %w", err)
	}
	if n == 0 {
		return invalid("style_id", "no judgement style with id %d", in.StyleID)
	}
	return nil
}

func (s *Store) fillStyle(ctx context.Context, in *JudgeInput) error {
	if in.StyleID != 0 {
		return nil
	}
	st, err := s.DefaultStyle(ctx)
	if err != nil {
		return err
	}
	in.StyleID = st.ID
	return nil
}

// Judges lists the judges by name.
func (s *Store) Judges(ctx context.Context) ([]Judge, error) {
	out := []Judge{}
	if err := s.conn(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: judges: %w", err)
	}
	return out, nil
}

// Judge returns one judge.
func (s *Store) Judge(ctx context.Context, id int64) (*Judge, error) {
	var j Judge
	if err := s.conn(ctx).Take(&j, id).Error; err != nil {
		return nil, fmt.Errorf("store: judge: %w", notFound(err, "judge", id))
	}
	return &j, nil
}

// CreateJudge saves a judge; without a style it uses the default one.
func (s *Store) CreateJudge(ctx context.Context, in JudgeInput) (*Judge, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	if err := s.fillStyle(ctx, &in); err != nil {
		return nil, err
	}
	if err := s.checkJudgeRefs(ctx, in); err != nil {
		return nil, err
	}
	now := s.now()
	pid := in.ProviderID
	j := Judge{Name: in.Name, ProviderID: &pid, Model: in.Model, PersonalityName: in.PersonalityName,
		PersonalityDescription: in.PersonalityDescription, StyleID: in.StyleID, Settings: in.Settings,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Create(&j).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, conflict("a judge named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: create judge: %w", err)
	}
	return &j, nil
}

// UpdateJudge replaces a judge's fields and bumps its version; runs keep
// the copy they were made with.
func (s *Store) UpdateJudge(ctx context.Context, id int64, in JudgeInput) (*Judge, error) {
	if err := in.normalize(); err != nil {
		return nil, err
	}
	if err := s.fillStyle(ctx, &in); err != nil {
		return nil, err
	}
	if err := s.checkJudgeRefs(ctx, in); err != nil {
		return nil, err
	}
	res := s.conn(ctx).Model(&Judge{}).Where("id = ?", id).Updates(map[string]any{
		"name": in.Name, "provider_id": in.ProviderID, "model": in.Model, "personality_name": in.PersonalityName,
		"personality_description": in.PersonalityDescription, "style_id": in.StyleID,
		"settings": mustJSON(in.Settings), "version": gorm.Expr("version + 1"), "updated_at": s.now(),
	})
	if res.Error != nil {
		if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
			return nil, conflict("a judge named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: update judge: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("store: update judge: %w", &NotFoundError{What: "judge", ID: id})
	}
	return s.Judge(ctx, id)
}

// DeleteJudge removes a judge; runs keep their copy.
func (s *Store) DeleteJudge(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&Judge{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete judge: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete judge: %w", &NotFoundError{What: "judge", ID: id})
	}
	return nil
}
