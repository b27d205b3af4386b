-- Each score carries what a run's statistics read beside it (issue 18), so
-- they read the scores alone instead of joining every score to its item:
-- the scored item's target (the means by model and metric) and the length
-- of the answer it scored (the judges' length bias). Items never change
-- target, and an answer once scored is never replaced (a retry re-answers
-- only items that failed before any score), so neither copy goes stale;
-- every insert of scores writes both.
ALTER TABLE scores ADD COLUMN run_target_id INTEGER;
ALTER TABLE scores ADD COLUMN answer_length INTEGER;
UPDATE scores SET run_target_id = (SELECT items.run_target_id FROM items WHERE items.id = scores.item_id),
	answer_length = (SELECT LENGTH(COALESCE(items.response, '')) FROM items WHERE items.id = scores.item_id);
