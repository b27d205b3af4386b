-- Schedule triggers (issue 15, seed 002 §3.2 TriggerType): besides its cron
-- expression, a schedule may start its run when called at its webhook (with
-- its own token) or when an event fires (an import from a trace source, or
-- any run, finished). Runs and firings so started say WEBHOOK or EVENT.
ALTER TABLE runs DROP CONSTRAINT runs_triggered_by_check;
ALTER TABLE runs ADD CONSTRAINT runs_triggered_by_check
    CHECK (triggered_by IN ('MANUAL', 'API', 'SCHEDULED', 'CLI', 'WEBHOOK', 'EVENT'));
ALTER TABLE schedule_firings DROP CONSTRAINT schedule_firings_triggered_by_check;
ALTER TABLE schedule_firings ADD CONSTRAINT schedule_firings_triggered_by_check
    CHECK (triggered_by IN ('SCHEDULED', 'MANUAL', 'API', 'WEBHOOK', 'EVENT'));

ALTER TABLE schedules ADD COLUMN trigger_type TEXT NOT NULL DEFAULT 'CRON' CHECK (trigger_type IN ('CRON', 'WEBHOOK', 'EVENT'));
-- hex SHA-256 of the webhook token; the token itself is shown once and never stored
ALTER TABLE schedules ADD COLUMN token_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE schedules ADD COLUMN event TEXT NOT NULL DEFAULT '' CHECK (event IN ('', 'import.finished', 'run.finished'));
-- no foreign key: trace sources arrive in their own migration (000014), and a schedule
-- whose source is gone simply never hears from it
ALTER TABLE schedules ADD COLUMN event_source_id BIGINT;
CREATE INDEX idx_schedules_event ON schedules (event) WHERE event <> '';

COMMENT ON COLUMN schedules.trigger_type IS 'CRON (the cron expression), WEBHOOK (POST /api/schedules/{id}/trigger with the token) or EVENT';
COMMENT ON COLUMN schedules.token_hash IS 'hex SHA-256 of a WEBHOOK schedule''s token, compared in constant time; empty otherwise';
COMMENT ON COLUMN schedules.event IS 'the event an EVENT schedule listens for: import.finished or run.finished';
COMMENT ON COLUMN schedules.event_source_id IS 'import.finished only from this trace source; NULL hears every source';
