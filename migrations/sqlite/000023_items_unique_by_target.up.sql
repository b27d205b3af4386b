-- As on PostgreSQL (see its 000023): the unique key of items in target
-- order, which makes idx_items_run_target_task (its prefix) redundant.
-- SQLite cannot drop the table's own UNIQUE (run_id, run_task_id,
-- run_target_id, repeat_index) without rebuilding items, so that one stays.
CREATE UNIQUE INDEX idx_items_run_target_task_repeat ON items (run_id, run_target_id, run_task_id, repeat_index);
DROP INDEX idx_items_run_target_task;
