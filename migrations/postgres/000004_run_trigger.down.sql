DROP INDEX idx_items_run_target_task;
DROP INDEX idx_runs_schedule;
ALTER TABLE runs DROP COLUMN schedule_id;
