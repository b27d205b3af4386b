DROP INDEX run_targets_source_key;
ALTER TABLE run_targets DROP COLUMN source_key;
ALTER TABLE run_targets DROP COLUMN source;
ALTER TABLE run_targets DROP COLUMN imported;
ALTER TABLE runs DROP COLUMN kind;
