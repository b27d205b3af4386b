CREATE INDEX idx_items_run_target_task ON items (run_id, run_target_id, run_task_id);
ALTER TABLE items ADD CONSTRAINT items_run_id_run_task_id_run_target_id_repeat_index_key UNIQUE (run_id, run_task_id, run_target_id, repeat_index);
DROP INDEX idx_items_run_target_task_repeat;
