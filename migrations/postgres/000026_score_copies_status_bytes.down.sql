ALTER TABLE items ALTER COLUMN status TYPE TEXT COLLATE "default";
ALTER TABLE scores DROP COLUMN run_target_id, DROP COLUMN answer_length;
