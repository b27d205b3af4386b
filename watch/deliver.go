package watch

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"net/smtp"
	"strconv"
	"strings"
	"sync"
	"time"

	"tribunal/egress"
	"tribunal/store"
)

// Deliverer sends notifications through their channels, retrying with backoff.
type Deliverer struct {
	st     *store.Store
	cfg    Config
	log    *slog.Logger
	client *http.Client
}

// NewDeliverer builds a deliverer.
func NewDeliverer(cfg Config, st *store.Store, log *slog.Logger) *Deliverer {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	transport := &http.Transport{
		// A webhook URL is the user's: each connection goes where the egress policy allows.
		Proxy: cfg.Egress.Proxy(egress.Webhooks),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return cfg.Egress.DialContext(ctx, egress.Webhooks, net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}, network, addr)
		},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: cfg.HTTPTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Deliverer{st: st, cfg: cfg, log: log, client: &http.Client{Timeout: cfg.HTTPTimeout, Transport: transport}}
}

// Run sends deliveries until ctx ends.
func (d *Deliverer) Run(ctx context.Context) {
	for {
		n, err := d.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.ErrorContext(ctx, "deliverer", "err", err)
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-d.cfg.Clock.After(jitter(d.cfg.PollInterval)):
		}
	}
}

// Tick sends the deliveries that are due (up to a batch, four at a time)
// and records each outcome; it reports how many it attempted.
func (d *Deliverer) Tick(ctx context.Context) (int, error) {
	ds, err := d.st.ClaimDeliveries(ctx, d.cfg.WorkerID, d.cfg.Lease, 16, d.cfg.Clock.Now())
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, 4)
	for i := range ds {
		dl := &ds[i]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			res := d.attempt(ctx, dl)
			// Recorded even when shutting down, so a sent message is not sent again.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, err := d.st.FinishDelivery(fctx, dl, res, d.cfg.Clock.Now()); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			lvl := slog.LevelInfo
			if res.Status != store.DeliverySent {
				lvl = slog.LevelWarn
			}
			d.log.Log(ctx, lvl, "notification delivery", "delivery_id", dl.ID, "notification_id", dl.NotificationID,
				"channel", dl.Channel, "attempt", dl.Attempts, "status", res.Status, "err", res.Error)
		})
	}
	wg.Wait()
	return len(ds), errors.Join(errs...)
}

// sendError is a failed attempt; permanent ones are not retried.
type sendError struct {
	msg        string
	code       *int
	permanent  bool
	retryAfter time.Duration
}

func (e *sendError) Error() string { return e.msg }

// attempt sends one delivery and decides what happens next.
func (d *Deliverer) attempt(ctx context.Context, dl *store.Delivery) store.DeliveryResult {
	n, err := d.st.Notification(ctx, dl.NotificationID)
	if err != nil {
		return store.DeliveryResult{Status: store.DeliveryFailed, Error: "notification: " + err.Error()}
	}
	code := 0
	switch dl.Channel {
	case "email":
		if d.cfg.SMTP.Host == "" {
			return store.DeliveryResult{Status: store.DeliveryNotConfigured,
				Error: "e-mail is not configured: set TRIBUNAL_SMTP_HOST (and _PORT, _USERNAME, _PASSWORD, _FROM)"}
		}
		err = d.sendMail(ctx, dl.Target, n)
	case "webhook", "slack", "teams":
		code, err = d.post(ctx, dl.Target, d.payload(dl.Channel, n))
	default:
		return store.DeliveryResult{Status: store.DeliverySent}
	}
	if err == nil {
		res := store.DeliveryResult{Status: store.DeliverySent}
		if code != 0 {
			res.ResponseCode = &code
		}
		return res
	}
	var se *sendError
	if !errors.As(err, &se) {
		se = &sendError{msg: err.Error()}
	}
	res := store.DeliveryResult{Status: store.DeliveryFailed, Error: se.msg, ResponseCode: se.code}
	switch {
	case se.permanent:
		res.Error += " (not retried)"
	case dl.Attempts >= d.cfg.MaxAttempts:
		res.Error = fmt.Sprintf("gave up after %d attempts; the last: %s", dl.Attempts, se.msg)
	default:
		res.Status, res.RetryAt = store.DeliveryPending, d.cfg.Clock.Now().Add(max(d.backoff(dl.Attempts), se.retryAfter))
	}
	return res
}

// backoff is how long to wait after the given attempt: base·attempt⁴, capped.
func (d *Deliverer) backoff(attempt int) time.Duration {
	f := float64(d.cfg.BackoffBase) * math.Pow(float64(attempt), 4)
	if f > float64(d.cfg.BackoffMax) {
		return d.cfg.BackoffMax
	}
	return time.Duration(f)
}

// link is the absolute URL of a notification's run, or of the notifications page.
func (d *Deliverer) link(n *store.Notification) string {
	if n.RunID != nil {
		return fmt.Sprintf("%s/runs/%d", d.cfg.BaseURL, *n.RunID)
	}
	if n.ScheduleID != nil {
		return fmt.Sprintf("%s/schedules/%d", d.cfg.BaseURL, *n.ScheduleID)
	}
	return d.cfg.BaseURL + "/notifications"
}

// WebhookPayload is the JSON a generic webhook receives.
type WebhookPayload struct {
	Event          string    `json:"event"`
	NotificationID int64     `json:"notification_id"`
	Kind           string    `json:"kind"`
	Severity       string    `json:"severity"`
	Title          string    `json:"title"`
	Message        string    `json:"message"`
	AlertID        *int64    `json:"alert_id"`
	RunID          *int64    `json:"run_id"`
	ScheduleID     *int64    `json:"schedule_id"`
	KPIID          *int64    `json:"kpi_id"`
	Subject        string    `json:"subject"`
	Model          string    `json:"model"`
	Condition      string    `json:"condition"`
	Value          *float64  `json:"value"`
	Threshold      *float64  `json:"threshold"`
	Baseline       *float64  `json:"baseline"`
	BaselineSD     *float64  `json:"baseline_sd"`
	BaselineRuns   int       `json:"baseline_runs"`
	Link           string    `json:"link"`
	CreatedAt      time.Time `json:"created_at"`
}

var severityColor = map[string]string{"INFO": "2563EB", "WARNING": "D97706", "CRITICAL": "DC2626"}

// payload builds the body for a channel: the generic JSON, or the text
// message of Slack ({"text"}) and Teams (a MessageCard with text).
func (d *Deliverer) payload(channel string, n *store.Notification) any {
	link := d.link(n)
	linkText := "Open in Tribunal"
	if n.RunID != nil {
		linkText = fmt.Sprintf("Run %d", *n.RunID)
	}
	switch channel {
	case "slack":
		return map[string]string{"text": fmt.Sprintf("*[%s] %s*\n%s\n<%s|%s>", n.Severity, n.Title, n.Message, link, linkText)}
	case "teams":
		return map[string]any{"@type": "MessageCard", "@context": "https://schema.org/extensions", "summary": n.Title,
			"themeColor": severityColor[n.Severity], "title": fmt.Sprintf("[%s] %s", n.Severity, n.Title),
			"text": fmt.Sprintf("%s\n\n[%s](%s)", n.Message, linkText, link)}
	}
	event := "alert.fired"
	if n.Kind == "SCHEDULE" {
		event = "schedule.event"
	}
	return WebhookPayload{Event: event, NotificationID: n.ID, Kind: n.Kind, Severity: n.Severity, Title: n.Title, Message: n.Message,
		AlertID: n.AlertID, RunID: n.RunID, ScheduleID: n.ScheduleID, KPIID: n.KPIID, Subject: n.Subject, Model: n.Model,
		Condition: n.Condition, Value: n.Value, Threshold: n.Threshold, Baseline: n.Baseline, BaselineSD: n.BaselineSD,
		BaselineRuns: n.BaselineN, Link: link, CreatedAt: n.CreatedAt}
}

// post sends JSON; 2xx is success, other 4xx (but 408, 425, 429) are permanent.
// Only the status is kept of a reply: its body is the receiver's and may hold
// anything (a stack trace, a token), and deliveries are shown to users.
func (d *Deliverer) post(ctx context.Context, url string, body any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, &sendError{msg: "encode: " + err.Error(), permanent: true}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, &sendError{msg: "bad URL: " + redactURL(err.Error(), url), permanent: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Tribunal-Alerts/1")
	res, err := d.client.Do(req)
	if err != nil {
		return 0, &sendError{msg: redactURL(err.Error(), url)}
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // read, so the connection is reused
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return res.StatusCode, nil
	}
	code := res.StatusCode
	se := &sendError{msg: fmt.Sprintf("HTTP %d %s", code, http.StatusText(code)), code: &code}
	switch {
	case code == 408 || code == 425 || code == 429 || code >= 500:
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
			se.retryAfter = min(time.Duration(s)*time.Second, d.cfg.BackoffMax)
		}
	default:
		se.permanent = true
	}
	return code, se
}

// redactURL keeps a webhook URL (a secret) out of error messages.
func redactURL(msg, url string) string {
	return strings.ReplaceAll(msg, url, "(webhook URL)")
}

// sendMail sends a plain-text e-mail over SMTP: implicit TLS on port 465,
// STARTTLS when the server offers it elsewhere; credentials only over TLS
// (net/smtp refuses them in clear, except to localhost).
func (d *Deliverer) sendMail(ctx context.Context, to string, n *store.Notification) error {
	cfg := d.cfg.SMTP
	var rcpts []string
	for _, a := range strings.Split(to, ",") {
		if a = strings.TrimSpace(a); a != "" {
			rcpts = append(rcpts, a)
		}
	}
	if len(rcpts) == 0 {
		return &sendError{msg: "no recipients", permanent: true}
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	dctx, cancel := context.WithTimeout(ctx, d.cfg.SMTPTimeout)
	defer cancel()
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var conn net.Conn
	var err error
	if cfg.Port == 465 {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: &tls.Config{ServerName: cfg.Host}}).DialContext(dctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(dctx, "tcp", addr)
	}
	if err != nil {
		return &sendError{msg: "smtp: " + err.Error()}
	}
	deadline, _ := dctx.Deadline()
	conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, cfg.Host)
	if err != nil {
		conn.Close()
		return &sendError{msg: "smtp: " + err.Error()}
	}
	defer c.Close()
	if cfg.Port != 465 {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(&tls.Config{ServerName: cfg.Host}); err != nil {
				return &sendError{msg: "smtp starttls: " + err.Error()}
			}
		}
	}
	if cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", cfg.Username, cfg.Password, cfg.Host)); err != nil {
			return &sendError{msg: "smtp auth: " + err.Error(), permanent: true}
		}
	}
	if err := c.Mail(cfg.From); err != nil {
		return &sendError{msg: "smtp MAIL FROM: " + err.Error()}
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return &sendError{msg: "smtp RCPT TO " + r + ": " + err.Error(), permanent: isPermanentSMTP(err)}
		}
	}
	w, err := c.Data()
	if err != nil {
		return &sendError{msg: "smtp DATA: " + err.Error()}
	}
	if _, err := w.Write(d.mailMessage(cfg.From, rcpts, n)); err != nil {
		return &sendError{msg: "smtp write: " + err.Error()}
	}
	if err := w.Close(); err != nil {
		return &sendError{msg: "smtp: " + err.Error()}
	}
	return c.Quit()
}

// isPermanentSMTP reports a 5xx reply (the address is refused for good).
func isPermanentSMTP(err error) bool {
	return strings.HasPrefix(err.Error(), "5")
}

func (d *Deliverer) mailMessage(from string, to []string, n *store.Notification) []byte {
	id := make([]byte, 12)
	rand.Read(id)
	host := "tribunal"
	if i := strings.LastIndex(from, "@"); i >= 0 {
		host = from[i+1:]
	}
	var b strings.Builder
	subject := fmt.Sprintf("[%s] %s", n.Severity, n.Title)
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@%s>\r\n",
		from, strings.Join(to, ", "), mime.QEncoding.Encode("utf-8", subject), d.cfg.Clock.Now().Format(time.RFC1123Z), hex.EncodeToString(id), host)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	body := n.Message + "\n\n" + d.link(n) + "\n"
	// Lines starting with a dot are escaped by net/smtp's data writer; bare LFs become CRLF here.
	b.WriteString(strings.ReplaceAll(body, "\n", "\r\n"))
	return []byte(b.String())
}
