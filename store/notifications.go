package store

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"gorm.io/gorm"
)

// Notification is an alert firing or a schedule event, shown in the app
// and sent through the alert's channels.
type Notification struct {
	ID         int64  `json:"id"`
	Kind       string `json:"kind"`
	AlertID    *int64 `json:"alert_id"`
	RunID      *int64 `json:"run_id"`
	ScheduleID *int64 `json:"schedule_id"`
	KPIID      *int64 `json:"kpi_id" gorm:"column:kpi_id"`
	Severity   string `json:"severity"`
	Title      string `json:"title"`
	Message    string `json:"message"`
	// Subject is the KPI's name or the metric; Model the model watched ("" the whole run).
	Subject   string   `json:"subject"`
	Model     string   `json:"model"`
	Condition string   `json:"condition"`
	Value     *float64 `json:"value"`
	Threshold *float64 `json:"threshold"`
	// Baseline is the mean of the BaselineN previous runs, with their sd.
	Baseline   *float64   `json:"baseline"`
	BaselineSD *float64   `json:"baseline_sd" gorm:"column:baseline_sd"`
	BaselineN  int        `json:"baseline_n" gorm:"column:baseline_n"`
	ReadAt     *time.Time `json:"read_at"`
	CreatedAt  time.Time  `json:"created_at"`
	// AlertName is the alert's current name, when it still exists.
	AlertName  string     `json:"alert_name,omitempty" gorm:"->;-:migration"`
	Deliveries []Delivery `json:"deliveries" gorm:"foreignKey:NotificationID"`
}

// Delivery is one notification sent (or to send) through one channel.
type Delivery struct {
	ID             int64      `json:"id"`
	NotificationID int64      `json:"notification_id"`
	Channel        string     `json:"channel"`
	Target         string     `json:"target"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	WorkerID       string     `json:"-"`
	LeaseUntil     *time.Time `json:"-"`
	LastError      string     `json:"last_error"`
	ResponseCode   *int       `json:"response_code"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	SentAt         *time.Time `json:"sent_at"`
}

// CreateNotification stores a notification with one delivery per channel,
// in one transaction. An in_app channel is delivered at once; without one
// the notification starts read, so it is listed but not counted as unread.
func (s *Store) CreateNotification(ctx context.Context, n *Notification, channels []Channel, now time.Time) error {
	now = now.UTC()
	n.CreatedAt = now
	inApp := false
	var ds []Delivery
	for _, c := range channels {
		d := Delivery{Channel: c.Type, Status: DeliveryPending, NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now}
		switch c.Type {
		case "in_app":
			inApp = true
			d.Status, d.SentAt, d.NextAttemptAt = DeliverySent, &now, nil
		case "email":
			d.Target = c.To
		default:
			sealed, err := s.box.Seal(c.URL)
			if err != nil {
				return fmt.Errorf("store: seal delivery target: %w", err)
			}
			d.Target = sealed
		}
		ds = append(ds, d)
	}
	if !inApp {
		n.ReadAt = &now
	}
	return s.Transact(ctx, func(tx *Store) error {
		if err := tx.conn(ctx).Omit("Deliveries", "AlertName").Create(n).Error; err != nil {
			return fmt.Errorf("store: create notification: %w", err)
		}
		for i := range ds {
			ds[i].NotificationID = n.ID
		}
		if len(ds) > 0 {
			if err := tx.conn(ctx).Create(&ds).Error; err != nil {
				return fmt.Errorf("store: create deliveries: %w", err)
			}
		}
		n.Deliveries = ds
		return nil
	})
}

// NotificationFilter narrows and pages the notification list.
type NotificationFilter struct {
	UnreadOnly bool
	AlertID    int64
	ScheduleID int64
	RunID      int64
	Page       int
	PerPage    int
}

// Notifications lists notifications, newest first, with their deliveries
// (URLs shown by host only: a webhook URL is a secret).
func (s *Store) Notifications(ctx context.Context, f NotificationFilter) (Page[Notification], error) {
	page, perPage := normPage(f.Page, f.PerPage, 50)
	out := Page[Notification]{Page: page, PerPage: perPage, Items: []Notification{}}
	q := s.conn(ctx).Model(&Notification{})
	if f.UnreadOnly {
		q = q.Where("read_at IS NULL")
	}
	if f.AlertID != 0 {
		q = q.Where("alert_id = ?", f.AlertID)
	}
	if f.ScheduleID != 0 {
		q = q.Where("schedule_id = ?", f.ScheduleID)
	}
	if f.RunID != 0 {
		q = q.Where("run_id = ?", f.RunID)
	}
	if err := q.Session(&gorm.Session{}).Count(&out.Total).Error; err != nil {
		return out, fmt.Errorf("store: count notifications: %w", err)
	}
	err := q.Select("notifications.*, COALESCE((SELECT name FROM alerts WHERE alerts.id = notifications.alert_id), '') AS alert_name").
		Preload("Deliveries", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).
		Order("id DESC").Offset((page - 1) * perPage).Limit(perPage).Find(&out.Items).Error
	if err != nil {
		return out, fmt.Errorf("store: notifications: %w", err)
	}
	for i := range out.Items {
		for j := range out.Items[i].Deliveries {
			d := &out.Items[i].Deliveries[j]
			d.Target = s.displayTarget(d)
		}
	}
	return out, nil
}

// displayTarget shows a delivery's target without its secret parts.
func (s *Store) displayTarget(d *Delivery) string {
	switch d.Channel {
	case "email", "in_app":
		return d.Target
	}
	plain, err := s.box.Open(d.Target)
	if err != nil {
		return "(unreadable)"
	}
	u, err := url.Parse(plain)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// Notification returns one notification with its deliveries.
func (s *Store) Notification(ctx context.Context, id int64) (*Notification, error) {
	var n Notification
	err := s.conn(ctx).Preload("Deliveries", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).Take(&n, id).Error
	if err != nil {
		return nil, fmt.Errorf("store: notification: %w", notFound(err, "notification", id))
	}
	for j := range n.Deliveries {
		n.Deliveries[j].Target = s.displayTarget(&n.Deliveries[j])
	}
	return &n, nil
}

// UnreadNotifications counts the unread notifications.
func (s *Store) UnreadNotifications(ctx context.Context) (int64, error) {
	var n int64
	if err := s.conn(ctx).Model(&Notification{}).Where("read_at IS NULL").Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: unread notifications: %w", err)
	}
	return n, nil
}

// MarkNotificationsRead marks the given notifications read, or all when ids is empty.
func (s *Store) MarkNotificationsRead(ctx context.Context, ids []int64) (int64, error) {
	q := s.conn(ctx).Model(&Notification{}).Where("read_at IS NULL")
	if len(ids) > 0 {
		q = q.Where("id IN ?", ids)
	}
	res := q.Update("read_at", s.now())
	if res.Error != nil {
		return 0, fmt.Errorf("store: mark notifications read: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// ClaimDeliveries claims up to limit deliveries that are due (PENDING with
// next_attempt_at passed, or SENDING by a sender whose lease ran out):
// they become SENDING for this worker with one more attempt. Target holds
// the plain URL or addresses.
func (s *Store) ClaimDeliveries(ctx context.Context, workerID string, lease time.Duration, limit int, now time.Time) ([]Delivery, error) {
	now = now.UTC()
	var out []Delivery
	err := s.Transact(ctx, func(tx *Store) error {
		lock := ""
		if s.dialect == Postgres {
			lock = " FOR UPDATE SKIP LOCKED"
		}
		return tx.conn(ctx).Raw(`UPDATE deliveries SET status = 'SENDING', worker_id = ?, lease_until = ?, attempts = attempts + 1, updated_at = ?
			WHERE id IN (SELECT id FROM deliveries WHERE status IN ('PENDING', 'SENDING')
				AND ((status = 'PENDING' AND next_attempt_at <= ?) OR (status = 'SENDING' AND lease_until < ?))
				ORDER BY next_attempt_at, id LIMIT ?`+lock+`)
			RETURNING *`, workerID, now.Add(lease), now, now, now, max(limit, 1)).Scan(&out).Error
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	for i := range out {
		d := &out[i]
		if d.Channel != "email" && d.Channel != "in_app" {
			plain, err := s.box.Open(d.Target)
			if err != nil {
				return out, fmt.Errorf("store: open delivery %d target: %w", d.ID, err)
			}
			d.Target = plain
		}
	}
	slices.SortFunc(out, func(a, b Delivery) int { return int(a.ID - b.ID) })
	return out, nil
}

// DeliveryResult is the outcome of one delivery attempt.
type DeliveryResult struct {
	// Status is SENT, FAILED, NOT_CONFIGURED, or PENDING to retry at RetryAt.
	Status       string
	RetryAt      time.Time
	Error        string
	ResponseCode *int
}

// FinishDelivery records an attempt's outcome, if the claim still holds
// (same worker and attempt); it reports whether it did.
func (s *Store) FinishDelivery(ctx context.Context, d *Delivery, r DeliveryResult, now time.Time) (bool, error) {
	now = now.UTC()
	updates := map[string]any{"status": r.Status, "last_error": clipMessage(r.Error, 2000), "response_code": r.ResponseCode,
		"lease_until": nil, "updated_at": now, "next_attempt_at": nil}
	switch r.Status {
	case DeliverySent:
		updates["sent_at"] = now
	case DeliveryPending:
		updates["next_attempt_at"] = r.RetryAt.UTC()
	}
	res := s.conn(ctx).Model(&Delivery{}).Where("id = ? AND status = ? AND worker_id = ? AND attempts = ?",
		d.ID, DeliverySending, d.WorkerID, d.Attempts).Updates(updates)
	if res.Error != nil {
		return false, fmt.Errorf("store: finish delivery: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}
