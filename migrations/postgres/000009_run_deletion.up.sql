-- A run is deleted in two steps (issue 17): marked deleted at once, so it
-- leaves every list and lookup, then its rows are removed in batches in the
-- background, so one huge delete holds no lock for minutes. A restart
-- resumes the batches of any run still marked.
ALTER TABLE runs ADD COLUMN deleted_at TIMESTAMPTZ;
CREATE INDEX idx_runs_deleted ON runs (id) WHERE deleted_at IS NOT NULL;
-- Deleting a row looks up the rows that cite it: a run task its items and
-- comparisons, an item its comparisons.
CREATE INDEX idx_comparisons_item_a ON comparisons (item_a);
CREATE INDEX idx_comparisons_item_b ON comparisons (item_b);
CREATE INDEX idx_comparisons_run_task ON comparisons (run_task_id);
CREATE INDEX idx_items_run_task ON items (run_task_id);
COMMENT ON COLUMN runs.deleted_at IS 'set when the run was deleted; its rows are being removed in batches';
COMMENT ON INDEX idx_runs_deleted IS 'the sweeper''s look-up of runs whose rows remain to remove';
COMMENT ON INDEX idx_comparisons_item_a IS 'item deletes find the comparisons citing the item';
COMMENT ON INDEX idx_comparisons_item_b IS 'item deletes find the comparisons citing the item';
COMMENT ON INDEX idx_comparisons_run_task IS 'run task deletes find the comparisons citing the task';
COMMENT ON INDEX idx_items_run_task IS 'run task deletes find the items citing the task';
