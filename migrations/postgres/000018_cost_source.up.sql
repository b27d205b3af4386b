-- Where a cost came from (issue 16 §3): a provider's reported cost
-- (OpenRouter's usage.cost) is preferred over the price table, and the item
-- says which: 'provider', 'price_table', 'mixed' (some calls each way) or ''
-- (unknown: no cost, or imported with the answer). cost_source is the
-- answer's, judge_cost_source the judges' (a panel merges its judges').
ALTER TABLE items ADD COLUMN cost_source TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN judge_cost_source TEXT NOT NULL DEFAULT '';
COMMENT ON COLUMN items.cost_source IS 'where cost_usd came from: provider (reported), price_table, mixed, or empty (unknown)';
COMMENT ON COLUMN items.judge_cost_source IS 'where judge_cost_usd came from, merged over the panel: provider, price_table, mixed, or empty (unknown)';
