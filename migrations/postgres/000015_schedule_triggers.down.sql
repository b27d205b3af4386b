DROP INDEX idx_schedules_event;
ALTER TABLE schedules DROP COLUMN event_source_id;
ALTER TABLE schedules DROP COLUMN event;
ALTER TABLE schedules DROP COLUMN token_hash;
ALTER TABLE schedules DROP COLUMN trigger_type;
-- The narrower checks cannot hold webhook and event rows: they read as API.
UPDATE schedule_firings SET triggered_by = 'API' WHERE triggered_by IN ('WEBHOOK', 'EVENT');
UPDATE runs SET triggered_by = 'API' WHERE triggered_by IN ('WEBHOOK', 'EVENT');
ALTER TABLE schedule_firings DROP CONSTRAINT schedule_firings_triggered_by_check;
ALTER TABLE schedule_firings ADD CONSTRAINT schedule_firings_triggered_by_check CHECK (triggered_by IN ('SCHEDULED', 'MANUAL', 'API'));
ALTER TABLE runs DROP CONSTRAINT runs_triggered_by_check;
ALTER TABLE runs ADD CONSTRAINT runs_triggered_by_check CHECK (triggered_by IN ('MANUAL', 'API', 'SCHEDULED', 'CLI'));
