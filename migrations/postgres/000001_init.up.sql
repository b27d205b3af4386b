-- The first slice of Tribunal: providers, tasks, collections and judged runs.
-- A run freezes what it uses (run_targets, run_judges, run_tasks) so editing or
-- deleting a provider or task later never changes a finished run's results.

CREATE TABLE providers (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL CHECK (type IN ('OPENAI', 'OLLAMA', 'LM_STUDIO', 'OPENROUTER', 'CUSTOM_OPEN_AI_COMPATIBLE')),
    base_url TEXT NOT NULL,
    models_endpoint TEXT NOT NULL DEFAULT '/v1/models',
    inference_endpoint TEXT NOT NULL DEFAULT '/v1/chat/completions',
    -- concurrent requests per (provider, model); 1 keeps local models strictly sequential
    concurrency INTEGER NOT NULL DEFAULT 1 CHECK (concurrency >= 1),
    -- token bucket size per minute; 0 means unlimited
    requests_per_minute INTEGER NOT NULL DEFAULT 0 CHECK (requests_per_minute >= 0),
    timeout_seconds INTEGER NOT NULL DEFAULT 120 CHECK (timeout_seconds >= 1),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE provider_headers (
    id BIGSERIAL PRIMARY KEY,
    provider_id BIGINT NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    position INTEGER NOT NULL DEFAULT 0,
    header_key TEXT NOT NULL,
    -- AES-GCM ciphertext (base64) when is_secret, plain text otherwise
    header_value TEXT NOT NULL,
    is_secret BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX idx_provider_headers_provider ON provider_headers (provider_id, position);

CREATE TABLE tasks (
    id BIGSERIAL PRIMARY KEY,
    task_key TEXT NOT NULL UNIQUE,
    category TEXT NOT NULL,
    subcategory TEXT NOT NULL DEFAULT '',
    question TEXT NOT NULL,
    excellent TEXT NOT NULL DEFAULT '',
    good TEXT NOT NULL DEFAULT '',
    pass TEXT NOT NULL DEFAULT '',
    incorrect_answer_direction TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_tasks_category ON tasks (category, task_key);

CREATE TABLE collections (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE collection_tasks (
    collection_id BIGINT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    task_id BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    PRIMARY KEY (collection_id, task_id)
);
CREATE INDEX idx_collection_tasks_task ON collection_tasks (task_id);

CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'PAUSED', 'FINISHED', 'FAILED', 'CANCELLED')),
    phase TEXT NOT NULL CHECK (phase IN ('BENCHMARKING', 'JUDGING')),
    triggered_by TEXT NOT NULL DEFAULT 'MANUAL' CHECK (triggered_by IN ('MANUAL', 'API', 'SCHEDULED', 'CLI')),
    error TEXT NOT NULL DEFAULT '',
    -- everything that decides the run's scores, frozen at creation (JSON)
    snapshot JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ
);
CREATE INDEX idx_runs_status ON runs (status, id);

CREATE TABLE run_collections (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    collection_id BIGINT REFERENCES collections(id) ON DELETE SET NULL,
    collection_name TEXT NOT NULL
);
CREATE INDEX idx_run_collections_run ON run_collections (run_id);

CREATE TABLE run_targets (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    provider_id BIGINT REFERENCES providers(id) ON DELETE SET NULL,
    provider_name TEXT NOT NULL,
    model TEXT NOT NULL,
    -- generation settings (temperature, max_tokens, system_prompt, ...) as JSON
    settings JSONB NOT NULL DEFAULT '{}',
    -- the warm-up happens once per target, whichever worker gets there first
    warmup_status TEXT NOT NULL DEFAULT 'PENDING' CHECK (warmup_status IN ('PENDING', 'OK', 'FAILED')),
    warmup_error TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, position)
);

CREATE TABLE run_judges (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    provider_id BIGINT REFERENCES providers(id) ON DELETE SET NULL,
    provider_name TEXT NOT NULL,
    model TEXT NOT NULL,
    settings JSONB NOT NULL DEFAULT '{}',
    UNIQUE (run_id, position)
);

-- The run's frozen copy of each task it asks.
CREATE TABLE run_tasks (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_id BIGINT REFERENCES tasks(id) ON DELETE SET NULL,
    task_key TEXT NOT NULL,
    category TEXT NOT NULL,
    subcategory TEXT NOT NULL DEFAULT '',
    question TEXT NOT NULL,
    excellent TEXT NOT NULL DEFAULT '',
    good TEXT NOT NULL DEFAULT '',
    pass TEXT NOT NULL DEFAULT '',
    incorrect_answer_direction TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, task_key)
);

-- One item per (task, target, repeat) of a run: the unit of work the engine claims.
CREATE TABLE items (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    run_task_id BIGINT NOT NULL REFERENCES run_tasks(id) ON DELETE CASCADE,
    run_target_id BIGINT NOT NULL REFERENCES run_targets(id) ON DELETE CASCADE,
    repeat_index INTEGER NOT NULL DEFAULT 1,
    status TEXT NOT NULL DEFAULT 'NEW' CHECK (status IN ('NEW', 'IN_PROGRESS', 'WAITING_FOR_JUDGE', 'JUDGING', 'COMPLETED', 'FAILED')),
    -- the lease: who holds the item and until when; a rescuer frees expired ones
    worker_id TEXT NOT NULL DEFAULT '',
    claimed_at TIMESTAMPTZ,
    lease_until TIMESTAMPTZ,
    -- claims so far, never reset: the claim token that guards the result write
    attempts INTEGER NOT NULL DEFAULT 0,
    last_attempt_at TIMESTAMPTZ,
    next_retry_at TIMESTAMPTZ,
    request JSONB NOT NULL DEFAULT '{}',
    response TEXT,
    time_ms INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    tokens_per_s DOUBLE PRECISION,
    error TEXT NOT NULL DEFAULT '',
    -- BENCHMARKING or JUDGING: where a FAILED item failed
    failed_phase TEXT NOT NULL DEFAULT '',
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (run_id, run_task_id, run_target_id, repeat_index)
);
CREATE INDEX idx_items_claim ON items (run_id, status, id);
-- Only in-flight items have leases to rescue, so only they are indexed.
CREATE INDEX idx_items_lease ON items (lease_until) WHERE status IN ('IN_PROGRESS', 'JUDGING');

-- One score per (item, source, metric): a judge's verdict or, later, a reference check.
CREATE TABLE scores (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    run_judge_id BIGINT REFERENCES run_judges(id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    metric TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    reasoning TEXT NOT NULL DEFAULT '',
    raw TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (item_id, source, metric)
);
CREATE INDEX idx_scores_run_metric ON scores (run_id, metric);

-- The live log's source of truth; its id is the SSE event id.
CREATE TABLE run_logs (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id BIGINT,
    created_at TIMESTAMPTZ NOT NULL,
    level TEXT NOT NULL CHECK (level IN ('INFO', 'WARN', 'ERROR')),
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_run_logs_run ON run_logs (run_id, id);

-- Small key/value settings, e.g. the master-key check value.
CREATE TABLE app_settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
