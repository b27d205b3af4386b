DROP INDEX idx_items_inflight;
ALTER TABLE items DROP COLUMN slot_key;
ALTER TABLE run_targets DROP COLUMN warmup_worker;
ALTER TABLE run_targets DROP COLUMN warmup_until;
