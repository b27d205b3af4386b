-- Indexes for the pages of million-item runs (issue 18).

-- The items filter ?violation= starts from the run's violations of one
-- category and reads their item ids from the index alone; it replaces the
-- index on (run_id, category), its prefix.
CREATE INDEX idx_violations_run_category_item ON violations (run_id, category, item_id);
DROP INDEX idx_violations_run_category;

-- A run's failure groups (store.RunFailures) and the items of one group
-- (the items filter ?phase=&reason=) read the failed items only, grouped by
-- the first line of their error, which the index holds.
CREATE INDEX idx_items_failures ON items (run_id, failed_phase, (split_part(error, chr(10), 1)), id) WHERE status = 'FAILED';

COMMENT ON INDEX idx_violations_run_category_item IS 'items filter by violation category: item ids from the index alone';
COMMENT ON INDEX idx_items_failures IS 'failure groups of a run: failed items by phase and first line of the error';
