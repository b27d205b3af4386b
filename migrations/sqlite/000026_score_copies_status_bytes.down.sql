ALTER TABLE scores DROP COLUMN answer_length;
ALTER TABLE scores DROP COLUMN run_target_id;
