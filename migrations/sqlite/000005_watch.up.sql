-- Keep watch (issue 6): schedules that start runs on a cron expression, KPI
-- formulas over run metrics, and alerts with their notifications and
-- deliveries. Column meanings are documented in the PostgreSQL version.

-- A saved run template fired on a cron expression (seed 002 §3.4, §8).
CREATE TABLE schedules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL DEFAULT 'UTC',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    -- the body of POST /api/runs, as JSON
    template TEXT NOT NULL CHECK (json_valid(template)),
    -- when the scheduler looks at it next: the next occurrence, or a retry while waiting; NULL when disabled
    next_run_at DATETIME,
    -- the occurrence waiting for a free run slot (active-run limit), if any
    pending_since DATETIME,
    last_run_at DATETIME,
    last_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    max_consecutive_failures INTEGER NOT NULL DEFAULT 3 CHECK (max_consecutive_failures >= 1),
    auto_disable_on_failure BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT NOT NULL DEFAULT '',
    -- bumped by every change; a claim names the revision it read, so only one process fires an occurrence
    revision INTEGER NOT NULL DEFAULT 1,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX idx_schedules_due ON schedules (next_run_at) WHERE enabled;

-- Each occurrence a schedule fired (or tried to), and each "run now".
CREATE TABLE schedule_firings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule_id INTEGER NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    -- the cron occurrence; NULL for "run now"
    scheduled_for DATETIME,
    triggered_by TEXT NOT NULL CHECK (triggered_by IN ('SCHEDULED', 'MANUAL', 'API')),
    status TEXT NOT NULL CHECK (status IN ('STARTING', 'STARTED', 'WAITING', 'SKIPPED', 'ERROR')),
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    -- how the run ended, once it has: SUCCEEDED, FAILED or CANCELLED
    outcome TEXT NOT NULL DEFAULT '',
    -- occurrences that fell due while no scheduler was running, folded into this firing
    missed INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    worker_id TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (schedule_id, scheduled_for)
);
CREATE INDEX idx_schedule_firings_schedule ON schedule_firings (schedule_id, id);
CREATE INDEX idx_schedule_firings_run ON schedule_firings (run_id);
CREATE INDEX idx_schedule_firings_starting ON schedule_firings (updated_at) WHERE status = 'STARTING';

-- A named formula over run metrics (seed 002 §6, §12.1), for all runs or one collection's or schedule's.
CREATE TABLE kpis (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    formula TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    collection_id INTEGER REFERENCES collections(id) ON DELETE CASCADE,
    schedule_id INTEGER REFERENCES schedules(id) ON DELETE CASCADE,
    -- bumped when the formula or scope changes; stored values are then recomputed
    revision INTEGER NOT NULL DEFAULT 1,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    CHECK (collection_id IS NULL OR schedule_id IS NULL)
);

-- A finished run's metric values by the names formulas use: model '' is the whole run.
CREATE TABLE run_metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL DEFAULT '',
    model_name TEXT NOT NULL DEFAULT '',
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, model, metric)
);
CREATE INDEX idx_run_metrics_metric ON run_metrics (metric, model, run_id);

-- Each KPI's value for each run (model '' is the whole run); value is NULL when it could not be computed.
CREATE TABLE kpi_values (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kpi_id INTEGER NOT NULL REFERENCES kpis(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL DEFAULT '',
    model_name TEXT NOT NULL DEFAULT '',
    value REAL,
    error TEXT NOT NULL DEFAULT '',
    kpi_revision INTEGER NOT NULL,
    created_at DATETIME NOT NULL,
    UNIQUE (kpi_id, run_id, model)
);
CREATE INDEX idx_kpi_values_run ON kpi_values (run_id);

-- Which finished runs have had their metrics, KPIs and alerts evaluated.
CREATE TABLE run_evaluations (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    -- the run's finished_at this evaluation is for: a run that finishes again is evaluated again
    finished_at DATETIME NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('CLAIMED', 'DONE')),
    worker_id TEXT NOT NULL DEFAULT '',
    lease_until DATETIME,
    error TEXT NOT NULL DEFAULT '',
    evaluated_at DATETIME
);
CREATE INDEX idx_run_evaluations_claimed ON run_evaluations (lease_until) WHERE status = 'CLAIMED';
-- The evaluator looks for runs that finished lately, so it need not walk every run each time.
CREATE INDEX idx_runs_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;

-- An alert watches a KPI or a metric (seed 002 §7).
CREATE TABLE alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    kpi_id INTEGER REFERENCES kpis(id) ON DELETE CASCADE,
    metric TEXT NOT NULL DEFAULT '',
    -- '' watches the whole run, '*' every model, otherwise one model ("provider / model" or the model alone)
    model TEXT NOT NULL DEFAULT '',
    condition TEXT NOT NULL CHECK (condition IN ('LESS_THAN', 'GREATER_THAN', 'EQUALS', 'NOT_EQUALS',
        'PERCENTAGE_DROP', 'PERCENTAGE_RISE', 'ANOMALY_DETECTED')),
    threshold REAL NOT NULL DEFAULT 0,
    baseline_runs INTEGER NOT NULL DEFAULT 5 CHECK (baseline_runs BETWEEN 1 AND 100),
    severity TEXT NOT NULL DEFAULT 'WARNING' CHECK (severity IN ('INFO', 'WARNING', 'CRITICAL')),
    -- [{type, url, to}] with url sealed like secret headers
    channels TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(channels)),
    collection_id INTEGER REFERENCES collections(id) ON DELETE CASCADE,
    schedule_id INTEGER REFERENCES schedules(id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    CHECK ((kpi_id IS NULL) <> (metric = ''))
);

-- In-app notifications: alert firings and schedule events.
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('ALERT', 'SCHEDULE')),
    alert_id INTEGER REFERENCES alerts(id) ON DELETE SET NULL,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    schedule_id INTEGER REFERENCES schedules(id) ON DELETE SET NULL,
    kpi_id INTEGER REFERENCES kpis(id) ON DELETE SET NULL,
    severity TEXT NOT NULL CHECK (severity IN ('INFO', 'WARNING', 'CRITICAL')),
    title TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    subject TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    condition TEXT NOT NULL DEFAULT '',
    value REAL,
    threshold REAL,
    baseline REAL,
    baseline_sd REAL,
    baseline_n INTEGER NOT NULL DEFAULT 0,
    read_at DATETIME,
    created_at DATETIME NOT NULL
);
CREATE INDEX idx_notifications_unread ON notifications (id) WHERE read_at IS NULL;
CREATE INDEX idx_notifications_alert ON notifications (alert_id, id);

-- One row per (notification, channel): sent by a loop with retries and backoff.
CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    notification_id INTEGER NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    channel TEXT NOT NULL CHECK (channel IN ('in_app', 'webhook', 'slack', 'teams', 'email')),
    -- the URL (sealed) or the e-mail addresses
    target TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SENDING', 'SENT', 'FAILED', 'NOT_CONFIGURED')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at DATETIME,
    worker_id TEXT NOT NULL DEFAULT '',
    lease_until DATETIME,
    last_error TEXT NOT NULL DEFAULT '',
    response_code INTEGER,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    sent_at DATETIME
);
CREATE INDEX idx_deliveries_notification ON deliveries (notification_id, id);
CREATE INDEX idx_deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('PENDING', 'SENDING');
