CREATE INDEX idx_items_run_task ON items (run_task_id);
COMMENT ON INDEX idx_items_run_task IS 'run task deletes find the items citing the task';
ALTER TABLE items ADD CONSTRAINT items_run_task_id_fkey FOREIGN KEY (run_task_id) REFERENCES run_tasks(id) ON DELETE CASCADE;
