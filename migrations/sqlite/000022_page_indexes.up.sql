-- Indexes for the pages of million-item runs (issue 18).

-- The items filter ?violation= starts from the run's violations of one
-- category and reads their item ids from the index alone; it replaces the
-- index on (run_id, category), its prefix.
CREATE INDEX idx_violations_run_category_item ON violations (run_id, category, item_id);
DROP INDEX idx_violations_run_category;

-- A run's failure groups (store.RunFailures) and the items of one group
-- (the items filter ?phase=&reason=) read the failed items only, grouped by
-- the first line of their error, which the index holds (the expression is
-- store.failureReason's).
CREATE INDEX idx_items_failures ON items (run_id, failed_phase,
    (CASE WHEN instr(error, char(10)) > 0 THEN substr(error, 1, instr(error, char(10)) - 1) ELSE error END), id)
    WHERE status = 'FAILED';
