DROP INDEX idx_runs_schedule;
ALTER TABLE runs DROP COLUMN schedule_id;
