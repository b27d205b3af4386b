-- Keep watch (issue 6): schedules that start runs on a cron expression, KPI
-- formulas over run metrics, and alerts with their notifications and
-- deliveries. COMMENT ON documents the columns.

-- A saved run template fired on a cron expression (seed 002 §3.4, §8).
CREATE TABLE schedules (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL DEFAULT 'UTC',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    -- the body of POST /api/runs, as JSON
    template TEXT NOT NULL,
    -- when the scheduler looks at it next: the next occurrence, or a retry while waiting; NULL when disabled
    next_run_at TIMESTAMPTZ,
    -- the occurrence waiting for a free run slot (active-run limit), if any
    pending_since TIMESTAMPTZ,
    last_run_at TIMESTAMPTZ,
    last_run_id BIGINT REFERENCES runs(id) ON DELETE SET NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    max_consecutive_failures INTEGER NOT NULL DEFAULT 3 CHECK (max_consecutive_failures >= 1),
    auto_disable_on_failure BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT NOT NULL DEFAULT '',
    -- bumped by every change; a claim names the revision it read, so only one process fires an occurrence
    revision INTEGER NOT NULL DEFAULT 1,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_schedules_due ON schedules (next_run_at) WHERE enabled;

-- Each occurrence a schedule fired (or tried to), and each "run now".
CREATE TABLE schedule_firings (
    id BIGSERIAL PRIMARY KEY,
    schedule_id BIGINT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    -- the cron occurrence; NULL for "run now"
    scheduled_for TIMESTAMPTZ,
    triggered_by TEXT NOT NULL CHECK (triggered_by IN ('SCHEDULED', 'MANUAL', 'API')),
    status TEXT NOT NULL CHECK (status IN ('STARTING', 'STARTED', 'WAITING', 'SKIPPED', 'ERROR')),
    run_id BIGINT REFERENCES runs(id) ON DELETE SET NULL,
    -- how the run ended, once it has: SUCCEEDED, FAILED or CANCELLED
    outcome TEXT NOT NULL DEFAULT '',
    -- occurrences that fell due while no scheduler was running, folded into this firing
    missed INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    worker_id TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (schedule_id, scheduled_for)
);
CREATE INDEX idx_schedule_firings_schedule ON schedule_firings (schedule_id, id);
CREATE INDEX idx_schedule_firings_run ON schedule_firings (run_id);
CREATE INDEX idx_schedule_firings_starting ON schedule_firings (updated_at) WHERE status = 'STARTING';

-- A named formula over run metrics (seed 002 §6, §12.1), for all runs or one collection's or schedule's.
CREATE TABLE kpis (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    formula TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    collection_id BIGINT REFERENCES collections(id) ON DELETE CASCADE,
    schedule_id BIGINT REFERENCES schedules(id) ON DELETE CASCADE,
    -- bumped when the formula or scope changes; stored values are then recomputed
    revision INTEGER NOT NULL DEFAULT 1,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    CHECK (collection_id IS NULL OR schedule_id IS NULL)
);

-- A finished run's metric values by the names formulas use: model '' is the whole run.
CREATE TABLE run_metrics (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL DEFAULT '',
    model_name TEXT NOT NULL DEFAULT '',
    metric TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, model, metric)
);
CREATE INDEX idx_run_metrics_metric ON run_metrics (metric, model, run_id);

-- Each KPI's value for each run (model '' is the whole run); value is NULL when it could not be computed.
CREATE TABLE kpi_values (
    id BIGSERIAL PRIMARY KEY,
    kpi_id BIGINT NOT NULL REFERENCES kpis(id) ON DELETE CASCADE,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL DEFAULT '',
    model_name TEXT NOT NULL DEFAULT '',
    value DOUBLE PRECISION,
    error TEXT NOT NULL DEFAULT '',
    kpi_revision INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (kpi_id, run_id, model)
);
CREATE INDEX idx_kpi_values_run ON kpi_values (run_id);

-- Which finished runs have had their metrics, KPIs and alerts evaluated.
CREATE TABLE run_evaluations (
    run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    -- the run's finished_at this evaluation is for: a run that finishes again is evaluated again
    finished_at TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('CLAIMED', 'DONE')),
    worker_id TEXT NOT NULL DEFAULT '',
    lease_until TIMESTAMPTZ,
    error TEXT NOT NULL DEFAULT '',
    evaluated_at TIMESTAMPTZ
);
CREATE INDEX idx_run_evaluations_claimed ON run_evaluations (lease_until) WHERE status = 'CLAIMED';
-- The evaluator looks for runs that finished lately, so it need not walk every run each time.
CREATE INDEX idx_runs_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;

-- An alert watches a KPI or a metric (seed 002 §7).
CREATE TABLE alerts (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    kpi_id BIGINT REFERENCES kpis(id) ON DELETE CASCADE,
    metric TEXT NOT NULL DEFAULT '',
    -- '' watches the whole run, '*' every model, otherwise one model ("provider / model" or the model alone)
    model TEXT NOT NULL DEFAULT '',
    condition TEXT NOT NULL CHECK (condition IN ('LESS_THAN', 'GREATER_THAN', 'EQUALS', 'NOT_EQUALS',
        'PERCENTAGE_DROP', 'PERCENTAGE_RISE', 'ANOMALY_DETECTED')),
    threshold DOUBLE PRECISION NOT NULL DEFAULT 0,
    baseline_runs INTEGER NOT NULL DEFAULT 5 CHECK (baseline_runs BETWEEN 1 AND 100),
    severity TEXT NOT NULL DEFAULT 'WARNING' CHECK (severity IN ('INFO', 'WARNING', 'CRITICAL')),
    -- [{type, url, to}] with url sealed like secret headers
    channels TEXT NOT NULL DEFAULT '[]',
    collection_id BIGINT REFERENCES collections(id) ON DELETE CASCADE,
    schedule_id BIGINT REFERENCES schedules(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    CHECK ((kpi_id IS NULL) <> (metric = ''))
);

-- In-app notifications: alert firings and schedule events.
CREATE TABLE notifications (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('ALERT', 'SCHEDULE')),
    alert_id BIGINT REFERENCES alerts(id) ON DELETE SET NULL,
    run_id BIGINT REFERENCES runs(id) ON DELETE SET NULL,
    schedule_id BIGINT REFERENCES schedules(id) ON DELETE SET NULL,
    kpi_id BIGINT REFERENCES kpis(id) ON DELETE SET NULL,
    severity TEXT NOT NULL CHECK (severity IN ('INFO', 'WARNING', 'CRITICAL')),
    title TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    subject TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    condition TEXT NOT NULL DEFAULT '',
    value DOUBLE PRECISION,
    threshold DOUBLE PRECISION,
    baseline DOUBLE PRECISION,
    baseline_sd DOUBLE PRECISION,
    baseline_n INTEGER NOT NULL DEFAULT 0,
    read_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_notifications_unread ON notifications (id) WHERE read_at IS NULL;
CREATE INDEX idx_notifications_alert ON notifications (alert_id, id);

-- One row per (notification, channel): sent by a loop with retries and backoff.
CREATE TABLE deliveries (
    id BIGSERIAL PRIMARY KEY,
    notification_id BIGINT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    channel TEXT NOT NULL CHECK (channel IN ('in_app', 'webhook', 'slack', 'teams', 'email')),
    -- the URL (sealed) or the e-mail addresses
    target TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SENDING', 'SENT', 'FAILED', 'NOT_CONFIGURED')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ,
    worker_id TEXT NOT NULL DEFAULT '',
    lease_until TIMESTAMPTZ,
    last_error TEXT NOT NULL DEFAULT '',
    response_code INTEGER,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    sent_at TIMESTAMPTZ
);
CREATE INDEX idx_deliveries_notification ON deliveries (notification_id, id);
CREATE INDEX idx_deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('PENDING', 'SENDING');

COMMENT ON TABLE schedules IS 'saved run templates fired on a cron expression (seed 002 §8)';
COMMENT ON COLUMN schedules.cron IS 'six fields with seconds first, or five (seconds 0)';
COMMENT ON COLUMN schedules.template IS 'the body of POST /api/runs (store.RunInput) as JSON';
COMMENT ON COLUMN schedules.next_run_at IS 'when the scheduler looks next: the next occurrence, or a retry while an occurrence waits; NULL when disabled';
COMMENT ON COLUMN schedules.pending_since IS 'the occurrence waiting for a free run slot (active-run limit), if any';
COMMENT ON COLUMN schedules.consecutive_failures IS 'runs in a row that failed or could not be created; reset by a finished run';
COMMENT ON COLUMN schedules.disabled_reason IS 'why the schedule was disabled automatically';
COMMENT ON COLUMN schedules.revision IS 'bumped by every change; a claim names the revision it read so exactly one process fires each occurrence';
COMMENT ON TABLE schedule_firings IS 'each occurrence a schedule fired or tried to, and each run now';
COMMENT ON COLUMN schedule_firings.scheduled_for IS 'the cron occurrence; NULL for run now';
COMMENT ON COLUMN schedule_firings.status IS 'STARTING (claimed), STARTED (run created), WAITING (active-run limit), SKIPPED, ERROR';
COMMENT ON COLUMN schedule_firings.outcome IS 'how the run ended: SUCCEEDED, FAILED or CANCELLED; counted once toward consecutive failures';
COMMENT ON COLUMN schedule_firings.missed IS 'occurrences that fell due while no scheduler was running, folded into this firing';
COMMENT ON TABLE kpis IS 'named formulas over run metrics (seed 002 §6, §12.1)';
COMMENT ON COLUMN kpis.revision IS 'bumped when the formula or scope changes; stored values are then recomputed';
COMMENT ON TABLE run_metrics IS 'a finished run''s metric values by formula name';
COMMENT ON COLUMN run_metrics.model IS 'the target label "provider / model", or empty for the whole run';
COMMENT ON COLUMN run_metrics.model_name IS 'the model alone, so alerts may name it without its provider';
COMMENT ON TABLE kpi_values IS 'each KPI''s value per run and model; value NULL with error when it could not be computed';
COMMENT ON COLUMN kpi_values.kpi_revision IS 'the KPI revision the value was computed with';
COMMENT ON TABLE run_evaluations IS 'finished runs whose metrics, KPIs and alerts have been evaluated';
COMMENT ON COLUMN run_evaluations.finished_at IS 'the run''s finished_at this evaluation is for: a run that finishes again is evaluated again';
COMMENT ON TABLE alerts IS 'conditions on a KPI or metric with channels to notify (seed 002 §7)';
COMMENT ON COLUMN alerts.model IS 'empty watches the whole run, * every model, otherwise one model';
COMMENT ON COLUMN alerts.threshold IS 'the value compared with; a percentage for PERCENTAGE_*; k (standard deviations) for ANOMALY_DETECTED';
COMMENT ON COLUMN alerts.baseline_runs IS 'N: the baseline is the mean (and sd) of the N previous runs';
COMMENT ON COLUMN alerts.channels IS '[{type, url, to}] with url sealed like secret headers';
COMMENT ON TABLE notifications IS 'in-app notifications: alert firings and schedule events';
COMMENT ON COLUMN notifications.baseline IS 'mean of the previous runs the condition compared with, if any';
COMMENT ON TABLE deliveries IS 'one row per notification and channel, sent with retries and backoff';
COMMENT ON COLUMN deliveries.target IS 'the URL (sealed) or the e-mail addresses';
COMMENT ON COLUMN deliveries.lease_until IS 'a sender holds SENDING until then; after it another process may retry';
