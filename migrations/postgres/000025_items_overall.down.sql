DROP INDEX idx_items_overall_unknown;
ALTER TABLE items DROP COLUMN overall_sum, DROP COLUMN overall_weight;
