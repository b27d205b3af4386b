-- Each score names its item's target (issue 18): a run's means by model and
-- metric then group its scores alone, instead of joining every score to its
-- item to learn its model. Items never change target, so the copy cannot go
-- stale; every insert of scores writes it.
ALTER TABLE scores ADD COLUMN run_target_id INTEGER;
UPDATE scores SET run_target_id = (SELECT items.run_target_id FROM items WHERE items.id = scores.item_id);
