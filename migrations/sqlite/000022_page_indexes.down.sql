DROP INDEX idx_items_failures;
CREATE INDEX idx_violations_run_category ON violations (run_id, category);
DROP INDEX idx_violations_run_category_item;
