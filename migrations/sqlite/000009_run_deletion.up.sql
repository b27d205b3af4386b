-- A run is deleted in two steps (issue 17): marked deleted at once, so it
-- leaves every list and lookup, then its rows are removed in batches in the
-- background. One statement took 98 s for a run of 400k items, and SQLite's
-- single connection served no request meanwhile. A restart resumes the
-- batches of any run still marked.
ALTER TABLE runs ADD COLUMN deleted_at DATETIME;
CREATE INDEX idx_runs_deleted ON runs (id) WHERE deleted_at IS NOT NULL;
-- Deleting a row looks up the rows that cite it (a run task its items and
-- comparisons, an item its comparisons); without these indexes each
-- deleted row scans a whole table.
CREATE INDEX idx_comparisons_item_a ON comparisons (item_a);
CREATE INDEX idx_comparisons_item_b ON comparisons (item_b);
CREATE INDEX idx_comparisons_run_task ON comparisons (run_task_id);
CREATE INDEX idx_items_run_task ON items (run_task_id);
