-- Each score names its item's target (issue 18): a run's means by model and
-- metric then group its scores alone, instead of joining a million scores
-- to a million items to learn each one's model. Items never change target,
-- so the copy cannot go stale; every insert of scores writes it.
ALTER TABLE scores ADD COLUMN run_target_id BIGINT;
UPDATE scores SET run_target_id = items.run_target_id FROM items WHERE items.id = scores.item_id;
COMMENT ON COLUMN scores.run_target_id IS 'the target of the item scored (items.run_target_id), copied so statistics by model skip the join';
