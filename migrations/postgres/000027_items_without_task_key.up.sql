-- A million-item run's creation writes an entry in each of the items'
-- indexes per item (issue 18), and the one on run_task_id was the
-- costliest (1.5 of 8.5 s in a bare 1M-row insert): its keys cycle through
-- the run's tasks once per target and repeat, so its inserts land all over
-- it. It only served the foreign key's look-up when a run task is deleted,
-- and the one delete of run tasks, the purge's, comes after it has deleted
-- the run's items (store.purgeNext). So on PostgreSQL items keep their task
-- by value: the creation, which already skips the key checks (they cannot
-- fail there), makes every item from the run's own task rows.
-- SQLite keeps both: its creation is quick at its sizes, and dropping a
-- foreign key there means rebuilding the table.
ALTER TABLE items DROP CONSTRAINT items_run_task_id_fkey;
DROP INDEX idx_items_run_task;
