-- Each item's overall (runs.ItemWeights over its scores), kept as the
-- weighted sum of its normalised scores and their total weight (issue 18):
-- a run's statistics read them with one aggregate instead of weighing all
-- its score rows on every recomputation. The engine adds each write's
-- scores as it stores them; NULL means unknown (items of older runs, bulk
-- fills, rejudged ones), and store.TaskOveralls computes those from the
-- scores once, when it first finds them.
ALTER TABLE items ADD COLUMN overall_sum REAL;
ALTER TABLE items ADD COLUMN overall_weight REAL;
-- Finds a run's completed items whose overall is still to be computed.
CREATE INDEX idx_items_overall_unknown ON items (run_id) WHERE status = 'COMPLETED' AND overall_weight IS NULL;
