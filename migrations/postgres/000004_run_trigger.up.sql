-- Runs started by a schedule name it (the schedules table arrives with the scheduler).
ALTER TABLE runs ADD COLUMN schedule_id BIGINT;
CREATE INDEX idx_runs_schedule ON runs (schedule_id, id);

-- Statistics over tasks group a run's items by target and task.
CREATE INDEX idx_items_run_target_task ON items (run_id, run_target_id, run_task_id);
