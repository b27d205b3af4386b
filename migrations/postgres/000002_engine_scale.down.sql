ALTER TABLE providers DROP COLUMN connect_timeout_seconds;
ALTER TABLE items DROP COLUMN failures;
DROP INDEX idx_items_target_status;
DROP INDEX idx_items_target;
DROP INDEX idx_items_run_id;
DROP INDEX idx_items_inflight;
ALTER TABLE items DROP COLUMN slot_key;
ALTER TABLE run_targets DROP COLUMN warmup_worker;
ALTER TABLE run_targets DROP COLUMN warmup_until;
