-- Tags on collections, runs and run targets (seed 001: tags separate teams and
-- experiments; every list filters by one). Tasks already have tags (000003).
-- A JSON list of strings, like tasks.tags, so one tag filter fits them all.
ALTER TABLE collections ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE run_targets ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
COMMENT ON COLUMN collections.tags IS 'JSON list of free-form tags; the UI and API filter by one';
COMMENT ON COLUMN runs.tags IS 'JSON list of free-form tags; the UI and API filter by one';
COMMENT ON COLUMN run_targets.tags IS 'JSON list of free-form tags of the model under test in this run';
