-- Runs started by a schedule name it (the schedules table arrives with the scheduler).
ALTER TABLE runs ADD COLUMN schedule_id BIGINT;
CREATE INDEX idx_runs_schedule ON runs (schedule_id, id);
