ALTER TABLE scores DROP COLUMN run_target_id;
