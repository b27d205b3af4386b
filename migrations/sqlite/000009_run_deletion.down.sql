DROP INDEX IF EXISTS idx_items_run_task;
DROP INDEX IF EXISTS idx_comparisons_run_task;
DROP INDEX IF EXISTS idx_comparisons_item_b;
DROP INDEX IF EXISTS idx_comparisons_item_a;
DROP INDEX IF EXISTS idx_runs_deleted;
ALTER TABLE runs DROP COLUMN deleted_at;
