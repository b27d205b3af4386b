-- A target's model version (seed 003, issue 16 §6): what the user named
-- when starting the run, else the model id the provider reported in its
-- first reply, so a run says which build of a model answered.
ALTER TABLE run_targets ADD COLUMN version TEXT NOT NULL DEFAULT '';
-- A reported version is the provider's word for this run only: a re-run asks again.
ALTER TABLE run_targets ADD COLUMN version_reported BOOLEAN NOT NULL DEFAULT FALSE;
COMMENT ON COLUMN run_targets.version IS 'the model version: as the user named it, else the model id of the provider''s first reply; empty before it';
COMMENT ON COLUMN run_targets.version_reported IS 'true when version is the model id the provider reported, not the user''s';
