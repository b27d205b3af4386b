ALTER TABLE items DROP COLUMN judge_cost_source;
ALTER TABLE items DROP COLUMN cost_source;
