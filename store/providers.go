package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"tribunal/egress"
	"tribunal/secret"
)

// ProviderInput is what a user sends to create or update a provider.
// A secret header whose value is empty or still the masked form keeps its stored value.
type ProviderInput struct {
	Name                  string       `json:"name"`
	Type                  ProviderType `json:"type"`
	BaseURL               string       `json:"base_url"`
	ModelsEndpoint        string       `json:"models_endpoint"`
	InferenceEndpoint     string       `json:"inference_endpoint"`
	Concurrency           int          `json:"concurrency"`
	RequestsPerMinute     int          `json:"requests_per_minute"`
	TimeoutSeconds        int          `json:"timeout_seconds"`
	ConnectTimeoutSeconds int          `json:"connect_timeout_seconds"`
	Headers               []Header     `json:"headers"`
	// Prices per model; nil keeps the provider's prices, an empty list clears them.
	Prices []ProviderPrice `json:"prices"`
}

// Normalize fills defaults and checks every field.
func (in *ProviderInput) Normalize() error {
	in.Name = strings.TrimSpace(in.Name)
	in.BaseURL = strings.TrimRight(strings.TrimSpace(in.BaseURL), "/")
	in.ModelsEndpoint = strings.TrimSpace(in.ModelsEndpoint)
	in.InferenceEndpoint = strings.TrimSpace(in.InferenceEndpoint)
	if in.Type == "" {
		in.Type = ProviderCustom
	}
	if in.ModelsEndpoint == "" {
		in.ModelsEndpoint = "/v1/models"
	}
	if in.InferenceEndpoint == "" {
		in.InferenceEndpoint = "/v1/chat/completions"
	}
	if in.Concurrency == 0 {
		in.Concurrency = 1
	}
	if in.TimeoutSeconds == 0 {
		in.TimeoutSeconds = 120
	}
	if in.ConnectTimeoutSeconds == 0 {
		in.ConnectTimeoutSeconds = 10
	}
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case !slices.Contains(ProviderTypes, in.Type):
		return invalid("type", "must be one of OPENAI, OLLAMA, LM_STUDIO, OPENROUTER, CUSTOM_OPEN_AI_COMPATIBLE")
	case in.BaseURL == "":
		return invalid("base_url", "is required")
	case in.Concurrency < 1 || in.Concurrency > 256:
		return invalid("concurrency", "must be between 1 and 256")
	case in.RequestsPerMinute < 0:
		return invalid("requests_per_minute", "must be 0 (unlimited) or more")
	case in.TimeoutSeconds < 1 || in.TimeoutSeconds > 3600:
		return invalid("timeout_seconds", "must be between 1 and 3600")
	case in.ConnectTimeoutSeconds < 1 || in.ConnectTimeoutSeconds > 300:
		return invalid("connect_timeout_seconds", "must be between 1 and 300")
	}
	u, err := url.Parse(in.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("base_url", "must be an http:// or https:// URL, e.g. http://127.0.0.1:11434")
	}
	if u.User != nil {
		return invalid("base_url", "must not hold credentials (user:password@): send them in a header marked secret, e.g. Authorization")
	}
	for _, ep := range []struct{ field, value string }{{"models_endpoint", in.ModelsEndpoint}, {"inference_endpoint", in.InferenceEndpoint}} {
		// A path only: "//host" or "/http://host" would let an endpoint name
		// another destination than base_url, which the secrets are bound to.
		if !strings.HasPrefix(ep.value, "/") || strings.HasPrefix(ep.value, "//") || strings.Contains(ep.value, "://") ||
			strings.ContainsAny(ep.value, " ?#\\") {
			return invalid(ep.field, "must be a path starting with /, e.g. /v1/models")
		}
	}
	if err := normalizeHeaders("headers", in.Headers); err != nil {
		return err
	}
	seenModel := map[string]bool{}
	for i := range in.Prices {
		pr := &in.Prices[i]
		pr.Model = strings.TrimSpace(pr.Model)
		field := fmt.Sprintf("prices[%d]", i)
		switch {
		case pr.Model == "":
			return invalid(field+".model", "is required")
		case seenModel[pr.Model]:
			return invalid(field+".model", "%q is priced twice", pr.Model)
		case pr.InputPerMTok < 0 || pr.InputPerMTok > 1e6 || pr.InputPerMTok != pr.InputPerMTok:
			return invalid(field+".input_per_mtok", "must be a price in USD per million tokens (0…1,000,000)")
		case pr.OutputPerMTok < 0 || pr.OutputPerMTok > 1e6 || pr.OutputPerMTok != pr.OutputPerMTok:
			return invalid(field+".output_per_mtok", "must be a price in USD per million tokens (0…1,000,000)")
		}
		seenModel[pr.Model] = true
		pr.Source = PriceManual
	}
	return nil
}

// Price sources: set by a user, or picked up from OpenRouter's models endpoint.
const (
	PriceManual     = "MANUAL"
	PriceOpenRouter = "OPENROUTER"
)

// savePrices replaces a provider's prices when the input names them.
func (s *Store) savePrices(ctx context.Context, providerID int64, prices []ProviderPrice) error {
	if prices == nil {
		return nil
	}
	// Prices set by hand replace the earlier ones and any published price of the same models.
	models := make([]string, len(prices))
	for i := range prices {
		prices[i].ProviderID = providerID
		models[i] = prices[i].Model
	}
	if err := s.conn(ctx).Where("provider_id = ? AND (source = ? OR model IN ?)", providerID, PriceManual, append(models, "")).
		Delete(&ProviderPrice{}).Error; err != nil {
		return fmt.Errorf("store: replace prices: %w", err)
	}
	if len(prices) == 0 {
		return nil
	}
	if err := s.conn(ctx).Create(&prices).Error; err != nil {
		return fmt.Errorf("store: save prices: %w", err)
	}
	return nil
}

// MergePublishedPrices records prices a provider publishes (OpenRouter's
// models endpoint) for models without a price set by hand.
func (s *Store) MergePublishedPrices(ctx context.Context, providerID int64, prices []ProviderPrice) error {
	if len(prices) == 0 {
		return nil
	}
	return s.Transact(ctx, func(tx *Store) error {
		if err := tx.conn(ctx).Where("provider_id = ? AND source = ?", providerID, PriceOpenRouter).Delete(&ProviderPrice{}).Error; err != nil {
			return fmt.Errorf("store: merge prices: %w", err)
		}
		for i := range prices {
			prices[i].ProviderID = providerID
			prices[i].Source = PriceOpenRouter
		}
		err := tx.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&prices, 200).Error
		if err != nil {
			return fmt.Errorf("store: merge prices: %w", err)
		}
		return nil
	})
}

// ModelPrice returns the price of a provider's model, or nil when unknown.
func (s *Store) ModelPrice(ctx context.Context, providerID int64, model string) (*ProviderPrice, error) {
	var pr ProviderPrice
	err := s.conn(ctx).Where("provider_id = ? AND model = ?", providerID, model).Take(&pr).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: model price: %w", err)
	}
	return &pr, nil
}

// row is the new provider's table row (headers are saved apart).
func (in *ProviderInput) row(now time.Time) Provider {
	return Provider{Name: in.Name, Type: in.Type, BaseURL: in.BaseURL, ModelsEndpoint: in.ModelsEndpoint,
		InferenceEndpoint: in.InferenceEndpoint, Concurrency: in.Concurrency, RequestsPerMinute: in.RequestsPerMinute,
		TimeoutSeconds: in.TimeoutSeconds, ConnectTimeoutSeconds: in.ConnectTimeoutSeconds, CreatedAt: now, UpdatedAt: now}
}

// Providers lists every provider by name, with secret header values masked.
func (s *Store) Providers(ctx context.Context) ([]Provider, error) {
	var ps []Provider
	err := s.conn(ctx).Preload("Headers", func(db *gorm.DB) *gorm.DB { return db.Order("position") }).Preload("Prices", func(db *gorm.DB) *gorm.DB { return db.Order("model") }).Order("name").Find(&ps).Error
	if err != nil {
		return nil, fmt.Errorf("store: list providers: %w", err)
	}
	for i := range ps {
		if err := s.maskSecrets(&ps[i]); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// Provider returns one provider with secret header values masked.
func (s *Store) Provider(ctx context.Context, id int64) (*Provider, error) {
	p, err := s.provider(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.maskSecrets(p); err != nil {
		return nil, err
	}
	return p, nil
}

// ProviderWithSecrets returns one provider with secret header values decrypted,
// for calling it. Never send the result to a user.
func (s *Store) ProviderWithSecrets(ctx context.Context, id int64) (*Provider, error) {
	p, err := s.provider(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.openHeaders("provider "+strconv.Quote(p.Name), p.Headers); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Store) provider(ctx context.Context, id int64) (*Provider, error) {
	var p Provider
	err := s.conn(ctx).Preload("Headers", func(db *gorm.DB) *gorm.DB { return db.Order("position") }).Preload("Prices", func(db *gorm.DB) *gorm.DB { return db.Order("model") }).Take(&p, id).Error
	if err != nil {
		return nil, fmt.Errorf("store: provider: %w", notFound(err, "provider", id))
	}
	return &p, nil
}

// checkEgress refuses a URL the egress policy forbids kind to connect to,
// when it is an IP literal or resolves now; connections are checked anyway.
func (s *Store) checkEgress(ctx context.Context, kind egress.Kind, field, rawURL string) error {
	if err := s.egress.CheckURL(ctx, kind, rawURL); err != nil {
		return invalid(field, "%v", err)
	}
	return nil
}

// CreateProvider saves a new provider; secret header values are encrypted.
func (s *Store) CreateProvider(ctx context.Context, in ProviderInput) (*Provider, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	if err := s.checkEgress(ctx, egress.Providers, "base_url", in.BaseURL); err != nil {
		return nil, err
	}
	var id int64
	err := s.Transact(ctx, func(tx *Store) error {
		p := in.row(s.now())
		if err := tx.conn(ctx).Omit("Headers", "Prices").Create(&p).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return conflict("a provider named %q already exists", in.Name)
			}
			return fmt.Errorf("store: create provider: %w", err)
		}
		id = p.ID
		if err := tx.savePrices(ctx, p.ID, in.Prices); err != nil {
			return err
		}
		return tx.saveHeaders(ctx, p.ID, in.Headers, nil, secret.Binding{})
	})
	if err != nil {
		return nil, err
	}
	return s.Provider(ctx, id)
}

// UpdateProvider replaces a provider's fields and headers. A secret header
// sent back masked (or empty) keeps its value only while the base URL keeps
// its origin (see secret.Binding.Keep).
func (s *Store) UpdateProvider(ctx context.Context, id int64, in ProviderInput) (*Provider, error) {
	if err := in.Normalize(); err != nil {
		return nil, err
	}
	if err := s.checkEgress(ctx, egress.Providers, "base_url", in.BaseURL); err != nil {
		return nil, err
	}
	err := s.Transact(ctx, func(tx *Store) error {
		old, err := tx.provider(ctx, id)
		if err != nil {
			return err
		}
		res := tx.conn(ctx).Model(&Provider{}).Where("id = ?", id).Updates(map[string]any{
			"name": in.Name, "type": in.Type, "base_url": in.BaseURL, "models_endpoint": in.ModelsEndpoint,
			"inference_endpoint": in.InferenceEndpoint, "concurrency": in.Concurrency,
			"requests_per_minute": in.RequestsPerMinute, "timeout_seconds": in.TimeoutSeconds,
			"connect_timeout_seconds": in.ConnectTimeoutSeconds, "updated_at": s.now(),
		})
		if res.Error != nil {
			if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
				return conflict("a provider named %q already exists", in.Name)
			}
			return fmt.Errorf("store: update provider: %w", res.Error)
		}
		if err := tx.conn(ctx).Where("provider_id = ?", id).Delete(&Header{}).Error; err != nil {
			return fmt.Errorf("store: update provider headers: %w", err)
		}
		if err := tx.savePrices(ctx, id, in.Prices); err != nil {
			return err
		}
		return tx.saveHeaders(ctx, id, in.Headers, old.Headers, secret.Binding{Name: "base URL", Old: old.BaseURL, New: in.BaseURL})
	})
	if err != nil {
		return nil, err
	}
	return s.Provider(ctx, id)
}

// saveHeaders writes a provider's headers, sealing secrets (see sealHeaders).
func (s *Store) saveHeaders(ctx context.Context, providerID int64, hs []Header, old []Header, b secret.Binding) error {
	sealed, err := s.sealHeaders("headers", hs, old, b)
	if err != nil {
		return err
	}
	for i, h := range sealed {
		row := Header{ProviderID: providerID, Position: i, Key: h.Key, Value: h.Value, IsSecret: h.IsSecret}
		if err := s.conn(ctx).Create(&row).Error; err != nil {
			return fmt.Errorf("store: save provider header: %w", err)
		}
	}
	return nil
}

// maskSecrets masks a provider's secret header values.
func (s *Store) maskSecrets(p *Provider) error {
	return s.maskHeaders("provider "+strconv.Quote(p.Name), p.Headers)
}

// DeleteProvider removes a provider. Past runs keep its name; an active run that uses it blocks deletion.
func (s *Store) DeleteProvider(ctx context.Context, id int64) error {
	return s.Transact(ctx, func(tx *Store) error {
		if _, err := tx.provider(ctx, id); err != nil {
			return err
		}
		var n int64
		// Model(&Run{}): a deleted run, waiting to be purged, holds nothing.
		err := tx.conn(ctx).Model(&Run{}).
			Where("status IN ?", ActiveRunStatuses).
			Where("id IN (SELECT run_id FROM run_targets WHERE provider_id = ? UNION SELECT run_id FROM run_judges WHERE provider_id = ?)", id, id).
			Count(&n).Error
		if err != nil {
			return fmt.Errorf("store: delete provider: %w", err)
		}
		if n > 0 {
			return conflict("provider %d is used by an active run; cancel or finish the run first", id)
		}
		if err := tx.conn(ctx).Delete(&Provider{}, id).Error; err != nil {
			return fmt.Errorf("store: delete provider: %w", err)
		}
		return nil
	})
}

// EnsureDefaultProviders creates Local Ollama and Local LM Studio on the very
// first start (seed 000 §9.3.2); it does nothing once any provider exists, so
// a user who deletes them is not overruled.
func (s *Store) EnsureDefaultProviders(ctx context.Context, ollamaURL, lmStudioURL string) error {
	const marker = "default_providers_created"
	return s.Transact(ctx, func(tx *Store) error {
		var n int64
		if err := tx.conn(ctx).Model(&appSetting{}).Where("key = ?", marker).Count(&n).Error; err != nil {
			return fmt.Errorf("store: default providers: %w", err)
		}
		if n > 0 {
			return nil
		}
		if err := tx.conn(ctx).Create(&appSetting{Key: marker, Value: "1"}).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return nil // another process got there first
			}
			return fmt.Errorf("store: default providers: %w", err)
		}
		for _, in := range []ProviderInput{
			{Name: "Local Ollama", Type: ProviderOllama, BaseURL: ollamaURL},
			{Name: "Local LM Studio", Type: ProviderLMStudio, BaseURL: lmStudioURL},
		} {
			if err := in.Normalize(); err != nil {
				return fmt.Errorf("store: default provider %q: %w", in.Name, err)
			}
			p := in.row(s.now())
			if err := tx.conn(ctx).Omit("Headers", "Prices").Create(&p).Error; err != nil && !errors.Is(err, gorm.ErrDuplicatedKey) {
				return fmt.Errorf("store: default provider %q: %w", in.Name, err)
			}
		}
		return nil
	})
}

// ReserveRate books the provider's next free moment for one call, spacing
// calls every interval across all processes, and returns when the call may
// start. One statement: concurrent reservations queue on the row.
func (s *Store) ReserveRate(ctx context.Context, providerID int64, interval time.Duration) (time.Time, error) {
	greatest := "MAX" // SQLite's scalar max
	if s.dialect == Postgres {
		greatest = "GREATEST"
	}
	now, step := s.now().UnixMilli(), interval.Milliseconds()
	var next int64
	err := s.conn(ctx).Raw(`INSERT INTO provider_rates (provider_id, next_ms) VALUES (?, ?)
		ON CONFLICT (provider_id) DO UPDATE SET next_ms = `+greatest+`(provider_rates.next_ms, ?) + ?
		RETURNING next_ms`, providerID, now+step, now, step).Scan(&next).Error
	if err != nil {
		return time.Time{}, fmt.Errorf("store: reserve rate: %w", err)
	}
	return time.UnixMilli(next - step), nil
}
