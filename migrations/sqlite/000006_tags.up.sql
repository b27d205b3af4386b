-- Tags on collections, runs and run targets (seed 001: tags separate teams and
-- experiments; every list filters by one). Tasks already have tags (000003).
-- A JSON list of strings, like tasks.tags, so one tag filter fits them all.
ALTER TABLE collections ADD COLUMN tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags));
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags));
ALTER TABLE run_targets ADD COLUMN tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags));
