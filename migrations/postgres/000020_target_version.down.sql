ALTER TABLE run_targets DROP COLUMN version_reported;
ALTER TABLE run_targets DROP COLUMN version;
