// Package metrics exposes Tribunal to Prometheus: runs and items by status
// read from the database at scrape time, provider calls, retries and judge
// failures counted as the engine makes them, open event streams and the
// database pool. Everything sits on its own registry, not the global one.
package metrics

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"tribunal/llm"
	"tribunal/store"
)

// scrapeTimeout bounds the database reads of one scrape.
const scrapeTimeout = 5 * time.Second

// Metrics holds Tribunal's collectors.
type Metrics struct {
	registry      *prometheus.Registry
	calls         *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	retries       *prometheus.CounterVec
	judgeFailures prometheus.Counter
	streams       prometheus.Gauge
	log           *slog.Logger
}

// New registers the collectors; st is read at each scrape.
func New(st *store.Store, log *slog.Logger) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tribunal_provider_calls_total",
			Help: "Chat calls to providers by outcome: ok, or the error kind (transient, rate_limit, timeout, permanent, malformed, canceled, error).",
		}, []string{"provider", "model", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tribunal_provider_call_duration_seconds",
			Help:    "How long chat calls to providers took, failed ones included.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320},
		}, []string{"provider", "model"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tribunal_retries_total",
			Help: "Failed attempts scheduled for another try, by phase (BENCHMARKING, JUDGING).",
		}, []string{"phase"}),
		judgeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tribunal_judge_failures_total",
			Help: "Judging attempts that failed (no reply, or no usable verdict), retried or not.",
		}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tribunal_sse_clients",
			Help: "Open Server-Sent Event streams.",
		}),
		log: log,
	}
	m.registry.MustRegister(m.calls, m.latency, m.retries, m.judgeFailures, m.streams, newStateCollector(st))
	pool := func(name, help string, f func(s sql.DBStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tribunal_db_" + name, Help: help},
			func() float64 { return f(st.PoolStats()) })
	}
	m.registry.MustRegister(
		pool("open_connections", "Connections open to the database.", func(s sql.DBStats) float64 { return float64(s.OpenConnections) }),
		pool("in_use_connections", "Connections in use.", func(s sql.DBStats) float64 { return float64(s.InUse) }),
		pool("idle_connections", "Idle connections.", func(s sql.DBStats) float64 { return float64(s.Idle) }),
		pool("max_open_connections", "The pool's limit.", func(s sql.DBStats) float64 { return float64(s.MaxOpenConnections) }),
		pool("wait_count", "Connections waited for, in all.", func(s sql.DBStats) float64 { return float64(s.WaitCount) }),
		pool("wait_seconds", "Time spent waiting for a connection, in all.", func(s sql.DBStats) float64 { return s.WaitDuration.Seconds() }),
	)
	return m
}

// Handler serves the metrics in the Prometheus text format. A failed
// database read drops its metrics from the scrape, not the whole scrape.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:           slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		DisableCompression: true}) // the server's gzip middleware compresses
}

// ObserveCall counts one provider call and its latency.
func (m *Metrics) ObserveCall(provider, model string, took time.Duration, err error) {
	m.calls.WithLabelValues(provider, model, outcome(err)).Inc()
	m.latency.WithLabelValues(provider, model).Observe(took.Seconds())
}

// ObserveFailure counts a failed attempt of an item in phase: a retry when
// retried, and a judge failure when judging.
func (m *Metrics) ObserveFailure(phase store.Phase, retried bool) {
	if retried {
		m.retries.WithLabelValues(string(phase)).Inc()
	}
	if phase == store.PhaseJudging {
		m.judgeFailures.Inc()
	}
}

// StreamOpened counts an open event stream until done is called.
func (m *Metrics) StreamOpened() (done func()) {
	m.streams.Inc()
	return m.streams.Dec
}

// outcome names a call's result with few enough values for a label.
func outcome(err error) string {
	var le *llm.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &le):
		return string(le.Kind)
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}
