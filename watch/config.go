package watch

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"tribunal/egress"
)

// Config tunes the watch loops; zero values get defaults.
type Config struct {
	// WorkerID names this process in claims.
	WorkerID string
	// PollInterval is how often each loop looks for work (default 1s).
	PollInterval time.Duration
	// RetryInterval is how often an occurrence held back by the active-run
	// limit is tried again, until its next occurrence (default 30s).
	RetryInterval time.Duration
	// MissedAfter: an occurrence fired later than this after it was due
	// counts as missed (default 1m).
	MissedAfter time.Duration
	// StartTimeout: a firing still STARTING after this was interrupted (default 5m).
	StartTimeout time.Duration
	// Lease is how long an evaluation or delivery stays claimed (default 2m).
	Lease time.Duration
	// MaxAttempts is how often a delivery is tried (default 6).
	MaxAttempts int
	// BackoffBase: attempt n is retried after BackoffBase·n⁴ (default 1s),
	// at most BackoffMax (default 1h).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// HTTPTimeout bounds a webhook call, SMTPTimeout an e-mail (default 10s, 30s).
	HTTPTimeout time.Duration
	SMTPTimeout time.Duration
	// BaseURL makes links absolute in webhooks and e-mails, e.g. http://tribunal:8080.
	BaseURL string
	// SMTP sends e-mail; without a Host the email channel reports NOT_CONFIGURED.
	SMTP SMTPConfig
	// Egress says where webhooks may connect; nil is egress.Default.
	Egress *egress.Policy
	// Clock is the time source (default the real one).
	Clock Clock
}

// SMTPConfig is the mail server for the email channel.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string
	Password string
	From     string
}

func (c Config) withDefaults() Config {
	if c.WorkerID == "" {
		host, _ := os.Hostname()
		c.WorkerID = fmt.Sprintf("%s-%d-%04x", cmp.Or(host, "watch"), os.Getpid(), rand.IntN(1<<16))
	}
	c.PollInterval = cmp.Or(c.PollInterval, time.Second)
	c.RetryInterval = cmp.Or(c.RetryInterval, 30*time.Second)
	c.MissedAfter = cmp.Or(c.MissedAfter, time.Minute)
	c.StartTimeout = cmp.Or(c.StartTimeout, 5*time.Minute)
	c.Lease = cmp.Or(c.Lease, 2*time.Minute)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, 6)
	c.BackoffBase = cmp.Or(c.BackoffBase, time.Second)
	c.BackoffMax = cmp.Or(c.BackoffMax, time.Hour)
	c.HTTPTimeout = cmp.Or(c.HTTPTimeout, 10*time.Second)
	c.SMTPTimeout = cmp.Or(c.SMTPTimeout, 30*time.Second)
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.SMTP.Port == 0 {
		c.SMTP.Port = 587
	}
	if c.SMTP.From == "" {
		c.SMTP.From = cmp.Or(c.SMTP.Username, "tribunal@localhost")
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	return c
}

// ConfigFromEnv reads TRIBUNAL_PUBLIC_URL (links in notifications; default
// baseURL) and TRIBUNAL_SMTP_HOST, _PORT, _USERNAME, _PASSWORD and _FROM.
func ConfigFromEnv(getenv func(string) string, baseURL string) Config {
	port, _ := strconv.Atoi(getenv("TRIBUNAL_SMTP_PORT"))
	return Config{
		BaseURL: cmp.Or(getenv("TRIBUNAL_PUBLIC_URL"), baseURL),
		SMTP: SMTPConfig{Host: getenv("TRIBUNAL_SMTP_HOST"), Port: port, Username: getenv("TRIBUNAL_SMTP_USERNAME"),
			Password: getenv("TRIBUNAL_SMTP_PASSWORD"), From: getenv("TRIBUNAL_SMTP_FROM")},
	}
}

func jitter(d time.Duration) time.Duration { return d + rand.N(d/10+1) }
