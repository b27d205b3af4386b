package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"tribunal/egress"
	"tribunal/secret"
)

// SourceType is the kind of service a trace source is.
type SourceType string

// SourceLangfuse is a Langfuse (cloud or self-hosted), read through its public API.
const SourceLangfuse SourceType = "LANGFUSE"

// SourceTypes lists every source type in display order.
var SourceTypes = []SourceType{SourceLangfuse}

// Source is where imported runs read answers that already exist. SecretKey
// holds plain text in memory; the store seals it on write and masks it on
// read unless the caller asks for it in clear (SourceWithSecret).
type Source struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Type      SourceType `json:"type"`
	BaseURL   string     `json:"base_url"`
	PublicKey string     `json:"public_key"`
	SecretKey string     `json:"secret_key"`
	Project   string     `json:"project"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// SourceInput is what a user sends to create or update a source. A secret
// key sent empty or still masked keeps the stored one, while base_url keeps
// its origin (see secret.Binding.Keep).
type SourceInput struct {
	Name      string     `json:"name"`
	Type      SourceType `json:"type"`
	BaseURL   string     `json:"base_url"`
	PublicKey string     `json:"public_key"`
	SecretKey string     `json:"secret_key"`
	Project   string     `json:"project"`
}

// Normalize fills defaults and checks every field but the secret key,
// which is checked against what is stored.
func (in *SourceInput) Normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	in.BaseURL = strings.TrimRight(strings.TrimSpace(in.BaseURL), "/")
	in.PublicKey = strings.TrimSpace(in.PublicKey)
	in.SecretKey = strings.TrimSpace(in.SecretKey)
	in.Project = strings.TrimSpace(in.Project)
	if in.Type == "" {
		in.Type = SourceLangfuse
	}
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case in.Type != SourceLangfuse:
		return invalid("type", "must be LANGFUSE")
	case in.BaseURL == "":
		return invalid("base_url", "is required, e.g. https://cloud.langfuse.com")
	case in.PublicKey == "":
		return invalid("public_key", "is required (pk-lf-…, from the Langfuse project's API keys)")
	case len(in.PublicKey) > 1024 || strings.ContainsAny(in.PublicKey, ":\r\n"):
		return invalid("public_key", "is not a Langfuse public key")
	case len(in.SecretKey) > 1024 || strings.ContainsAny(in.SecretKey, "\r\n"):
		return invalid("secret_key", "is not a Langfuse secret key")
	case len(in.Project) > 255:
		return invalid("project", "is longer than 255 characters")
	}
	u, err := url.Parse(in.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("base_url", "must be an http:// or https:// URL, e.g. https://cloud.langfuse.com")
	}
	if u.User != nil {
		return invalid("base_url", "must not hold credentials (user:password@): the keys go in public_key and secret_key")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return invalid("base_url", "must not have a query or a fragment")
	}
	return nil
}

// Sources lists every source by name, secret keys masked.
func (s *Store) Sources(ctx context.Context) ([]Source, error) {
	var out []Source
	if err := s.conn(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: list sources: %w", err)
	}
	for i := range out {
		if err := s.maskSource(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Source returns one source, its secret key masked.
func (s *Store) Source(ctx context.Context, id int64) (*Source, error) {
	src, err := s.source(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.maskSource(src); err != nil {
		return nil, err
	}
	return src, nil
}

// SourceWithSecret returns one source with its secret key in clear, for
// calling it. Never send the result to a user.
func (s *Store) SourceWithSecret(ctx context.Context, id int64) (*Source, error) {
	src, err := s.source(ctx, id)
	if err != nil {
		return nil, err
	}
	if src.SecretKey, err = s.box.Open(src.SecretKey); err != nil {
		return nil, fmt.Errorf("store: source %q secret key: %w", src.Name, err)
	}
	return src, nil
}

func (s *Store) source(ctx context.Context, id int64) (*Source, error) {
	var src Source
	if err := s.conn(ctx).Take(&src, id).Error; err != nil {
		return nil, fmt.Errorf("store: source: %w", notFound(err, "source", id))
	}
	return &src, nil
}

func (s *Store) maskSource(src *Source) error {
	v, err := s.box.Open(src.SecretKey)
	if err != nil {
		return fmt.Errorf("store: source %q secret key: %w", src.Name, err)
	}
	src.SecretKey = secret.Mask(v)
	return nil
}

// CreateSource saves a new source, its secret key sealed.
func (s *Store) CreateSource(ctx context.Context, in SourceInput) (*Source, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	if in.SecretKey == "" || secret.Masked(in.SecretKey) {
		return nil, invalid("secret_key", "is required (sk-lf-…, from the Langfuse project's API keys)")
	}
	if err := s.checkEgress(ctx, egress.Providers, "base_url", in.BaseURL); err != nil {
		return nil, err
	}
	sealed, err := s.box.Seal(in.SecretKey)
	if err != nil {
		return nil, err
	}
	now := s.now()
	src := Source{Name: in.Name, Type: in.Type, BaseURL: in.BaseURL, PublicKey: in.PublicKey, SecretKey: sealed,
		Project: in.Project, CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Create(&src).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, conflict("a source named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: create source: %w", err)
	}
	return s.Source(ctx, src.ID)
}

// UpdateSource replaces a source's fields. A secret key sent back masked
// (or empty) keeps the stored one only while base_url keeps its origin.
func (s *Store) UpdateSource(ctx context.Context, id int64, in SourceInput) (*Source, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	if err := s.checkEgress(ctx, egress.Providers, "base_url", in.BaseURL); err != nil {
		return nil, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		old, err := tx.source(ctx, id)
		if err != nil {
			return err
		}
		b := secret.Binding{Name: "base URL", Old: old.BaseURL, New: in.BaseURL}
		keep, err := b.Keep(in.SecretKey, true, true)
		if err != nil {
			return invalid("secret_key", "%v", err)
		}
		sealed := old.SecretKey
		if !keep {
			if sealed, err = s.box.Seal(in.SecretKey); err != nil {
				return err
			}
		}
		res := tx.conn(ctx).Model(&Source{}).Where("id = ?", id).Updates(map[string]any{
			"name": in.Name, "type": in.Type, "base_url": in.BaseURL, "public_key": in.PublicKey,
			"secret_key": sealed, "project": in.Project, "updated_at": s.now(),
		})
		if res.Error != nil {
			if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
				return conflict("a source named %q already exists", in.Name)
			}
			return fmt.Errorf("store: update source: %w", res.Error)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Source(ctx, id)
}

// DeleteSource removes a source. Runs imported from it keep their answers
// and the source's id and name in their targets; while one of them is still
// active the source is refused (its judging may yet read the run's origin).
func (s *Store) DeleteSource(ctx context.Context, id int64) error {
	return s.Transact(ctx, func(tx *Store) error {
		var busy []Run
		// A target's source_key starts with the source's id and a colon (RunSource.Key).
		err := tx.conn(ctx).Select("id", "name", "status").Where("status IN ? AND id IN (?)", ActiveRunStatuses,
			tx.conn(ctx).Model(&RunTarget{}).Select("run_id").Where("source_key LIKE ?", fmt.Sprintf("%d:%%", id))).
			Order("id").Limit(1).Find(&busy).Error
		if err != nil {
			return fmt.Errorf("store: delete source: %w", err)
		}
		if len(busy) > 0 {
			return conflict("run %d (%q), imported from this source, is still %s: delete the source once it has ended",
				busy[0].ID, busy[0].Name, strings.ToLower(string(busy[0].Status)))
		}
		res := tx.conn(ctx).Delete(&Source{}, id)
		if res.Error != nil {
			return fmt.Errorf("store: delete source: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("store: delete source: %w", &NotFoundError{What: "source", ID: id})
		}
		return nil
	})
}
