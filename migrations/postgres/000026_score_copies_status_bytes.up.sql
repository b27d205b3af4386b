-- Each score carries what a run's statistics read beside it (issue 18), so
-- they read the scores alone instead of joining a million scores to a
-- million items: the scored item's target (the means by model and metric)
-- and the length of the answer it scored (the judges' length bias). Items
-- never change target, and an answer once scored is never replaced (a
-- retry re-answers only items that failed before any score), so neither
-- copy goes stale; every insert of scores writes both.
ALTER TABLE scores ADD COLUMN run_target_id BIGINT, ADD COLUMN answer_length BIGINT;
UPDATE scores SET run_target_id = items.run_target_id, answer_length = LENGTH(COALESCE(items.response, ''))
FROM items WHERE items.id = scores.item_id;
COMMENT ON COLUMN scores.run_target_id IS 'the target of the item scored (items.run_target_id), copied so statistics by model skip the join';
COMMENT ON COLUMN scores.answer_length IS 'characters in the answer scored (LENGTH(items.response)), copied so the judges'' length bias skips the join';

-- An item's status is one of a few ASCII words: compared byte by byte ("C")
-- its index entries cost less than under the database's default collation,
-- which a million-item run's creation writes two of per item (the claim's
-- and the target's status index), and every status change again. SQLite
-- compares text byte by byte already.
ALTER TABLE items ALTER COLUMN status TYPE TEXT COLLATE "C";
-- The type change drops the column's planner statistics, and the backfill
-- rewrote every score: gather both again rather than wait for autovacuum.
ANALYZE items;
ANALYZE scores;
