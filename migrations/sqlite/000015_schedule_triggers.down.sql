DROP INDEX idx_schedules_event;
ALTER TABLE schedules DROP COLUMN event_source_id;
ALTER TABLE schedules DROP COLUMN event;
ALTER TABLE schedules DROP COLUMN token_hash;
ALTER TABLE schedules DROP COLUMN trigger_type;
-- The narrower checks cannot hold webhook and event rows: they read as API.
UPDATE schedule_firings SET triggered_by = 'API' WHERE triggered_by IN ('WEBHOOK', 'EVENT');
UPDATE runs SET triggered_by = 'API' WHERE triggered_by IN ('WEBHOOK', 'EVENT');
PRAGMA writable_schema = ON;
UPDATE sqlite_master
SET sql = replace(sql, 'CHECK (triggered_by IN (''MANUAL'', ''API'', ''SCHEDULED'', ''CLI'', ''WEBHOOK'', ''EVENT''))',
                       'CHECK (triggered_by IN (''MANUAL'', ''API'', ''SCHEDULED'', ''CLI''))')
WHERE type = 'table' AND name = 'runs';
UPDATE sqlite_master
SET sql = replace(sql, 'CHECK (triggered_by IN (''SCHEDULED'', ''MANUAL'', ''API'', ''WEBHOOK'', ''EVENT''))',
                       'CHECK (triggered_by IN (''SCHEDULED'', ''MANUAL'', ''API''))')
WHERE type = 'table' AND name = 'schedule_firings';
PRAGMA writable_schema = OFF;
-- A harmless schema change bumps the schema version, so connections re-read the text.
CREATE INDEX idx_schedules_unused ON schedules (id);
DROP INDEX idx_schedules_unused;
