-- Runs of answers that already exist (issue 15, seed 002): a Langfuse
-- dataset run's traces, or a file of your own outputs. Such a run is of kind
-- IMPORTED; its targets name where the answers came from instead of a model
-- to call (source: {source_id, dataset, run} as JSON, and source_key, its
-- identity, so one dataset run is imported once), and its items are created
-- holding their answers, which the engine scores like answers it fetched.
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'BENCHMARK';
ALTER TABLE run_targets ADD COLUMN imported BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE run_targets ADD COLUMN source TEXT;
ALTER TABLE run_targets ADD COLUMN source_key TEXT NOT NULL DEFAULT '';
CREATE INDEX run_targets_source_key ON run_targets (source_key) WHERE source_key <> '';
