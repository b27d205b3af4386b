package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"tribunal/egress"
	"tribunal/kpi"
	"tribunal/secret"
)

// AlertConditions are the conditions of seed 002 §7.4.
var AlertConditions = []string{"LESS_THAN", "GREATER_THAN", "EQUALS", "NOT_EQUALS",
	"PERCENTAGE_DROP", "PERCENTAGE_RISE", "ANOMALY_DETECTED"}

// Severities of an alert, mildest first.
var Severities = []string{"INFO", "WARNING", "CRITICAL"}

// ChannelTypes are the ways a notification is sent.
var ChannelTypes = []string{"in_app", "webhook", "slack", "teams", "email"}

// Delivery statuses.
const (
	DeliveryPending       = "PENDING"
	DeliverySending       = "SENDING"
	DeliverySent          = "SENT"
	DeliveryFailed        = "FAILED"
	DeliveryNotConfigured = "NOT_CONFIGURED"
)

// Channel is where an alert's notifications go: in_app, or a webhook,
// Slack or Teams URL, or e-mail addresses (To, comma-separated). A URL
// carries its secret (a token in its path), so users see it masked.
type Channel struct {
	Type string `json:"type"`
	URL  string `json:"url,omitempty"`
	To   string `json:"to,omitempty"`
}

// Alert watches a KPI or a metric of each finished run (seed 002 §7).
type Alert struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	KPIID   *int64 `json:"kpi_id" gorm:"column:kpi_id"`
	Metric  string `json:"metric"`
	// Model is "" for the whole run, "*" for each model, or one model
	// ("provider / model", or the model alone).
	Model     string  `json:"model"`
	Condition string  `json:"condition"`
	Threshold float64 `json:"threshold"`
	// BaselineRuns is N: PERCENTAGE_* and ANOMALY_DETECTED compare with the N previous runs.
	BaselineRuns int       `json:"baseline_runs"`
	Severity     string    `json:"severity"`
	Channels     []Channel `json:"channels" gorm:"-"`
	ChannelsRaw  string    `json:"-" gorm:"column:channels"`
	// CollectionID and ScheduleID limit a metric alert to those runs.
	CollectionID *int64    `json:"collection_id"`
	ScheduleID   *int64    `json:"schedule_id"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// TableName maps Alert to alerts.
func (Alert) TableName() string { return "alerts" }

// AlertInput is what a user sends to create or replace an alert.
type AlertInput struct {
	Name         string    `json:"name"`
	Enabled      *bool     `json:"enabled"`
	KPIID        *int64    `json:"kpi_id"`
	Metric       string    `json:"metric"`
	Model        string    `json:"model"`
	Condition    string    `json:"condition"`
	Threshold    *float64  `json:"threshold"`
	BaselineRuns int       `json:"baseline_runs"`
	Severity     string    `json:"severity"`
	Channels     []Channel `json:"channels"`
	CollectionID *int64    `json:"collection_id"`
	ScheduleID   *int64    `json:"schedule_id"`
}

// DefaultAnomalyK is the k of ANOMALY_DETECTED (mean ± k·sd) when no threshold is given.
const DefaultAnomalyK = 3

// normalizeAlert checks an alert; old are the channels it had, with their
// URLs, which a masked URL sent back keeps.
func (s *Store) normalizeAlert(ctx context.Context, in *AlertInput, old []Channel) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Metric = kpi.Canonical(strings.TrimSpace(in.Metric)) // the seed's names too: ROUGE watches check_rouge_l
	in.Model = strings.TrimSpace(in.Model)
	in.Condition = strings.ToUpper(strings.TrimSpace(in.Condition))
	in.Severity = strings.ToUpper(strings.TrimSpace(in.Severity))
	if in.Severity == "" {
		in.Severity = "WARNING"
	}
	if in.BaselineRuns == 0 {
		in.BaselineRuns = 5
	}
	switch {
	case in.Name == "":
		return invalid("name", "is required")
	case len(in.Name) > 255:
		return invalid("name", "is longer than 255 characters")
	case in.KPIID == nil && in.Metric == "":
		return invalid("kpi_id", "pick a KPI (kpi_id) or a metric to watch")
	case in.KPIID != nil && in.Metric != "":
		return invalid("metric", "watch a KPI (kpi_id) or a metric, not both")
	case len(in.Model) > 500:
		return invalid("model", "is longer than 500 characters")
	case !slices.Contains(AlertConditions, in.Condition):
		return invalid("condition", "must be one of %s", strings.Join(AlertConditions, ", "))
	case !slices.Contains(Severities, in.Severity):
		return invalid("severity", "must be INFO, WARNING or CRITICAL")
	case in.BaselineRuns < 1 || in.BaselineRuns > 100:
		return invalid("baseline_runs", "must be within 1…100")
	case in.Condition == "ANOMALY_DETECTED" && in.BaselineRuns < 2:
		return invalid("baseline_runs", "ANOMALY_DETECTED needs at least 2 runs to measure a standard deviation")
	case in.KPIID != nil && (in.CollectionID != nil || in.ScheduleID != nil):
		return invalid("kpi_id", "a KPI alert follows the KPI's own collection or schedule; leave collection_id and schedule_id empty")
	case in.CollectionID != nil && in.ScheduleID != nil:
		return invalid("schedule_id", "limit the alert to a collection or a schedule, not both")
	}
	if in.Threshold == nil {
		switch in.Condition {
		case "ANOMALY_DETECTED":
			k := float64(DefaultAnomalyK)
			in.Threshold = &k
		default:
			return invalid("threshold", "is required for %s", in.Condition)
		}
	}
	th := *in.Threshold
	switch {
	case math.IsNaN(th) || math.IsInf(th, 0):
		return invalid("threshold", "must be a finite number")
	case (in.Condition == "PERCENTAGE_DROP" || in.Condition == "PERCENTAGE_RISE") && th < 0:
		return invalid("threshold", "is a percentage (e.g. 10 for 10%%) and cannot be negative")
	case in.Condition == "ANOMALY_DETECTED" && th <= 0:
		return invalid("threshold", "is k, the number of standard deviations (e.g. 3), and must be positive")
	}
	if in.KPIID != nil {
		var n int64
		if err := s.conn(ctx).Model(&KPI{}).Where("id = ?", *in.KPIID).Count(&n).Error; err != nil {
			return fmt.Errorf("store: alert kpi: %w", err)
		}
		if n == 0 {
			return invalid("kpi_id", "no KPI with id %d", *in.KPIID)
		}
	} else {
		known, err := s.KnownMetrics(ctx)
		if err != nil {
			return err
		}
		if !known[in.Metric] {
			return invalid("metric", "unknown metric %q: use score, a judge metric such as accuracy, check_<type>, %s", in.Metric,
				strings.Join(BuiltinMetrics[1:], ", "))
		}
	}
	if err := s.checkScope(ctx, in.CollectionID, in.ScheduleID); err != nil {
		return err
	}
	if len(in.Channels) == 0 {
		in.Channels = []Channel{{Type: "in_app"}}
	}
	if len(in.Channels) > 20 {
		return invalid("channels", "at most 20 channels")
	}
	for i := range in.Channels {
		c, field := &in.Channels[i], fmt.Sprintf("channels[%d]", i)
		if err := unmaskChannel(c, i, old, field); err != nil {
			return err
		}
		if err := normalizeChannel(c, field); err != nil {
			return err
		}
		if c.URL != "" {
			if err := s.checkEgress(ctx, egress.Webhooks, field+".url", c.URL); err != nil {
				return err
			}
		}
	}
	return nil
}

// unmaskChannel puts back the stored URL of a channel sent back masked: the
// channel at the same place if it matches, else the first of the same type
// and mask. A mask hides the host, so it cannot send the URL elsewhere.
func unmaskChannel(c *Channel, i int, old []Channel, field string) error {
	if !secret.Masked(c.URL) {
		return nil
	}
	match := func(o Channel) bool {
		return strings.EqualFold(o.Type, strings.TrimSpace(c.Type)) && o.URL != "" && secret.Mask(o.URL) == c.URL
	}
	if i < len(old) && match(old[i]) {
		c.URL = old[i].URL
		return nil
	}
	if j := slices.IndexFunc(old, match); j >= 0 {
		c.URL = old[j].URL
		return nil
	}
	return invalid(field+".url", "no stored URL matches the masked %q, so enter the URL again", c.URL)
}

func normalizeChannel(c *Channel, field string) error {
	c.Type = strings.ToLower(strings.TrimSpace(c.Type))
	c.URL, c.To = strings.TrimSpace(c.URL), strings.TrimSpace(c.To)
	switch c.Type {
	case "in_app":
		c.URL, c.To = "", ""
	case "webhook", "slack", "teams":
		u, err := url.Parse(c.URL)
		if c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(field+".url", "a %s channel needs an http(s) URL", c.Type)
		}
		if u.User != nil {
			return invalid(field+".url", "must not hold credentials (user:password@)")
		}
		if len(c.URL) > 2000 {
			return invalid(field+".url", "is longer than 2,000 characters")
		}
		c.To = ""
	case "email":
		if c.To == "" {
			return invalid(field+".to", "an email channel needs one or more addresses")
		}
		list, err := mail.ParseAddressList(c.To)
		if err != nil || len(list) > 50 {
			return invalid(field+".to", "is not a list of e-mail addresses: %q", c.To)
		}
		addrs := make([]string, len(list))
		for i, a := range list {
			addrs[i] = a.Address
		}
		c.To, c.URL = strings.Join(addrs, ", "), ""
	default:
		return invalid(field+".type", "must be one of in_app, webhook, slack, teams, email")
	}
	return nil
}

// sealChannels encodes channels with their URLs sealed (webhook URLs carry secrets).
func (s *Store) sealChannels(chs []Channel) (string, error) {
	out := make([]Channel, len(chs))
	for i, c := range chs {
		out[i] = c
		if c.URL != "" {
			sealed, err := s.box.Seal(c.URL)
			if err != nil {
				return "", fmt.Errorf("store: seal channel: %w", err)
			}
			out[i].URL = sealed
		}
	}
	return mustJSON(out), nil
}

// openAlert decodes an alert's channels with their URLs opened, or masked
// for users.
func (s *Store) openAlert(a *Alert, mask bool) error {
	a.Channels = []Channel{}
	if a.ChannelsRaw == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(a.ChannelsRaw), &a.Channels); err != nil {
		return fmt.Errorf("store: alert %d channels: %w", a.ID, err)
	}
	for i := range a.Channels {
		if a.Channels[i].URL != "" {
			plain, err := s.box.Open(a.Channels[i].URL)
			if err != nil {
				return fmt.Errorf("store: alert %d channel: %w", a.ID, err)
			}
			if mask {
				plain = secret.Mask(plain)
			}
			a.Channels[i].URL = plain
		}
	}
	return nil
}

func (s *Store) openAlerts(as []Alert, mask bool) error {
	for i := range as {
		if err := s.openAlert(&as[i], mask); err != nil {
			return err
		}
	}
	return nil
}

// Alerts lists the alerts by name, with channel URLs masked.
func (s *Store) Alerts(ctx context.Context) ([]Alert, error) {
	out := []Alert{}
	if err := s.conn(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: alerts: %w", err)
	}
	if err := s.openAlerts(out, true); err != nil {
		return nil, err
	}
	return out, nil
}

// Alert returns one alert with channel URLs masked.
func (s *Store) Alert(ctx context.Context, id int64) (*Alert, error) {
	return s.alert(ctx, id, true)
}

// AlertWithSecrets returns one alert with channel URLs in clear, to send
// notifications. Never send the result to a user.
func (s *Store) AlertWithSecrets(ctx context.Context, id int64) (*Alert, error) {
	return s.alert(ctx, id, false)
}

func (s *Store) alert(ctx context.Context, id int64, mask bool) (*Alert, error) {
	var a Alert
	if err := s.conn(ctx).Take(&a, id).Error; err != nil {
		return nil, fmt.Errorf("store: alert: %w", notFound(err, "alert", id))
	}
	return &a, s.openAlert(&a, mask)
}

func (in AlertInput) enabled() bool { return in.Enabled == nil || *in.Enabled }

// CreateAlert saves an alert. Channels default to in_app.
func (s *Store) CreateAlert(ctx context.Context, in AlertInput) (*Alert, error) {
	if err := s.normalizeAlert(ctx, &in, nil); err != nil {
		return nil, err
	}
	raw, err := s.sealChannels(in.Channels)
	if err != nil {
		return nil, err
	}
	now := s.now()
	a := Alert{Name: in.Name, Enabled: in.enabled(), KPIID: in.KPIID, Metric: in.Metric, Model: in.Model,
		Condition: in.Condition, Threshold: *in.Threshold, BaselineRuns: in.BaselineRuns, Severity: in.Severity,
		ChannelsRaw: raw, CollectionID: in.CollectionID, ScheduleID: in.ScheduleID, CreatedAt: now, UpdatedAt: now}
	if err := s.conn(ctx).Create(&a).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, conflict("an alert named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: create alert: %w", err)
	}
	return s.Alert(ctx, a.ID)
}

// UpdateAlert replaces an alert's settings; a channel URL sent back masked
// keeps the stored one.
func (s *Store) UpdateAlert(ctx context.Context, id int64, in AlertInput) (*Alert, error) {
	old, err := s.AlertWithSecrets(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.normalizeAlert(ctx, &in, old.Channels); err != nil {
		return nil, err
	}
	raw, err := s.sealChannels(in.Channels)
	if err != nil {
		return nil, err
	}
	res := s.conn(ctx).Model(&Alert{}).Where("id = ?", id).Updates(map[string]any{
		"name": in.Name, "enabled": in.enabled(), "kpi_id": in.KPIID, "metric": in.Metric, "model": in.Model,
		"condition": in.Condition, "threshold": *in.Threshold, "baseline_runs": in.BaselineRuns, "severity": in.Severity,
		"channels": raw, "collection_id": in.CollectionID, "schedule_id": in.ScheduleID, "updated_at": s.now()})
	if res.Error != nil {
		if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
			return nil, conflict("an alert named %q already exists", in.Name)
		}
		return nil, fmt.Errorf("store: update alert: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("store: update alert: %w", &NotFoundError{What: "alert", ID: id})
	}
	return s.Alert(ctx, id)
}

// DeleteAlert removes an alert; its notifications stay.
func (s *Store) DeleteAlert(ctx context.Context, id int64) error {
	res := s.conn(ctx).Delete(&Alert{}, id)
	if res.Error != nil {
		return fmt.Errorf("store: delete alert: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: delete alert: %w", &NotFoundError{What: "alert", ID: id})
	}
	return nil
}

// AlertsForRun lists the enabled alerts that watch a run: created before
// it finished, and (for metric alerts) in its collection or schedule when
// limited to one. KPI alerts apply where their KPI has values.
func (s *Store) AlertsForRun(ctx context.Context, run *Run, finishedAt time.Time) ([]Alert, error) {
	var out []Alert
	err := appliesToRun(s.conn(ctx).Where("enabled AND created_at <= ?", finishedAt.UTC()), run).
		Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: alerts for run: %w", err)
	}
	return out, s.openAlerts(out, false)
}

// BaselineQuery picks the previous values an alert compares with.
type BaselineQuery struct {
	// KPIID set: the KPI's values; otherwise Metric's.
	KPIID  *int64
	Metric string
	// Model "" is the whole run; ByName matches the model without its provider.
	Model  string
	ByName bool
	// BeforeRunID: only runs created before this one.
	BeforeRunID int64
	N           int
	// CollectionID, ScheduleID limit a metric's runs.
	CollectionID, ScheduleID *int64
}

// Baseline returns the values of up to N runs before the given one, newest first.
func (s *Store) Baseline(ctx context.Context, q BaselineQuery) ([]float64, error) {
	col := "model"
	if q.ByName {
		col = "model_name"
	}
	var vals []float64
	var db *gorm.DB
	if q.KPIID != nil {
		db = s.conn(ctx).Model(&KPIValue{}).Where("kpi_id = ? AND value IS NOT NULL", *q.KPIID)
	} else {
		db = kpiScope(s.conn(ctx).Model(&RunMetric{}).Where("metric = ?", q.Metric), "run_id", q.CollectionID, q.ScheduleID)
	}
	err := db.Where(col+" = ? AND run_id < ?", q.Model, q.BeforeRunID).
		Where("run_id IN (SELECT id FROM runs WHERE status IN ? AND deleted_at IS NULL)", []RunStatus{RunFinished, RunFailed}).
		Order("run_id DESC").Limit(max(q.N, 1)).Pluck("value", &vals).Error
	if err != nil {
		return nil, fmt.Errorf("store: baseline: %w", err)
	}
	return vals, nil
}
