-- Scale-out: per-(provider, model) concurrency across processes and a
-- warm-up that exactly one worker performs.

-- The (provider, model) an in-flight item holds a concurrency slot of, "provider_id:model".
ALTER TABLE items ADD COLUMN slot_key TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_items_inflight ON items (slot_key) WHERE status IN ('IN_PROGRESS', 'JUDGING');

-- SQLite cannot alter a CHECK constraint: the warm-up claim lives in its own columns,
-- and warmup_status keeps PENDING while a worker holds the warm-up lease.
ALTER TABLE run_targets ADD COLUMN warmup_worker TEXT NOT NULL DEFAULT '';
ALTER TABLE run_targets ADD COLUMN warmup_until DATETIME;

-- Pages, claims and the streaming export walk items in id order, within a
-- run or a target, optionally of one status: each walk has its index.
CREATE INDEX idx_items_run_id ON items (run_id, id);
CREATE INDEX idx_items_target ON items (run_target_id, id);
CREATE INDEX idx_items_target_status ON items (run_target_id, status, id);

-- Provider failures in the current phase; unlike attempts (one per claim),
-- a crash that loses a claim does not count against the item.
ALTER TABLE items ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

-- How long connecting to a provider may take, apart from the whole request's timeout.
ALTER TABLE providers ADD COLUMN connect_timeout_seconds INTEGER NOT NULL DEFAULT 10 CHECK (connect_timeout_seconds >= 1);

-- A provider's requests_per_minute holds across processes: each call reserves
-- the next free moment (unix ms) in this row and waits until then.
CREATE TABLE provider_rates (
    provider_id BIGINT PRIMARY KEY REFERENCES providers(id) ON DELETE CASCADE,
    next_ms BIGINT NOT NULL
);
