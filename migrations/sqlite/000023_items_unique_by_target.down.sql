CREATE INDEX idx_items_run_target_task ON items (run_id, run_target_id, run_task_id);
DROP INDEX idx_items_run_target_task_repeat;
