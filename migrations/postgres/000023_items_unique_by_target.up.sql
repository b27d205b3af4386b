-- Creating a run writes each index of items once per item (issue 18: a
-- 1M-item run). Items are created target by target, task by task, so an
-- index in that order grows at its right end, while the unique key in task
-- order had every item land in the middle of it. The unique key now runs in
-- target order and so also serves what idx_items_run_target_task served
-- (its prefix: statistics grouping a run's items by target and task);
-- look-ups by task go through idx_items_run_task. One index fewer to write.
CREATE UNIQUE INDEX idx_items_run_target_task_repeat ON items (run_id, run_target_id, run_task_id, repeat_index);
ALTER TABLE items DROP CONSTRAINT items_run_id_run_task_id_run_target_id_repeat_index_key;
DROP INDEX idx_items_run_target_task;

COMMENT ON INDEX idx_items_run_target_task_repeat IS 'one item per (run, target, task, repeat); statistics group a run''s items by target and task';
