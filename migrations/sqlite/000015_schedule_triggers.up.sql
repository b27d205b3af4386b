-- Schedule triggers (issue 15, seed 002 §3.2 TriggerType): besides its cron
-- expression, a schedule may start its run when called at its webhook (with
-- its own token) or when an event fires (an import from a trace source, or
-- any run, finished). Runs and firings so started say WEBHOOK or EVENT.
-- Column meanings are documented in the PostgreSQL version.

-- SQLite cannot alter a CHECK, and rebuilding runs would cascade-delete its
-- items. A CHECK that only admits more values leaves every stored row valid,
-- which is the case SQLite documents editing the schema text in place for
-- (sqlite.org/lang_altertable.html, "other kinds of table schema changes").
-- The ALTER TABLEs below then bump the schema version, so every connection
-- reads the new text.
PRAGMA writable_schema = ON;
UPDATE sqlite_master
SET sql = replace(sql, 'CHECK (triggered_by IN (''MANUAL'', ''API'', ''SCHEDULED'', ''CLI''))',
                       'CHECK (triggered_by IN (''MANUAL'', ''API'', ''SCHEDULED'', ''CLI'', ''WEBHOOK'', ''EVENT''))')
WHERE type = 'table' AND name = 'runs';
UPDATE sqlite_master
SET sql = replace(sql, 'CHECK (triggered_by IN (''SCHEDULED'', ''MANUAL'', ''API''))',
                       'CHECK (triggered_by IN (''SCHEDULED'', ''MANUAL'', ''API'', ''WEBHOOK'', ''EVENT''))')
WHERE type = 'table' AND name = 'schedule_firings';
PRAGMA writable_schema = OFF;

ALTER TABLE schedules ADD COLUMN trigger_type TEXT NOT NULL DEFAULT 'CRON' CHECK (trigger_type IN ('CRON', 'WEBHOOK', 'EVENT'));
ALTER TABLE schedules ADD COLUMN token_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE schedules ADD COLUMN event TEXT NOT NULL DEFAULT '' CHECK (event IN ('', 'import.finished', 'run.finished'));
ALTER TABLE schedules ADD COLUMN event_source_id INTEGER;
CREATE INDEX idx_schedules_event ON schedules (event) WHERE event <> '';
