-- Creating a million-item run is one INSERT … SELECT per repeat
-- (store.createItems), and each row's foreign keys cost a trigger call
-- each: for 100,000 items 4.7 s of 10 s on the project VM, more than half
-- of it in the keys to run_tasks and run_targets. An item's task and target
-- always come from that same statement over the run's own rows (or the
-- import's, createImportedItems), and a run's tasks and targets are deleted
-- only with the run, after its items (store.PurgeDeletedRuns), so those two
-- keys check nothing the writers do not already guarantee. The key to the
-- run stays: its ON DELETE CASCADE removes the items with the run.
ALTER TABLE items DROP CONSTRAINT IF EXISTS items_run_task_id_fkey;
ALTER TABLE items DROP CONSTRAINT IF EXISTS items_run_target_id_fkey;

-- Deleting a run task looked up the items citing it here; nothing else reads it.
DROP INDEX IF EXISTS idx_items_run_task;
