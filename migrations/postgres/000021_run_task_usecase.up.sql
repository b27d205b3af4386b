-- A run freezes what its tasks' use cases add to the prompts (goal, notes,
-- constraints; issue 16 §2), so editing a use case later changes neither a
-- run's prompts nor its re-run. '{}' is a task without a saved use case.
ALTER TABLE run_tasks ADD COLUMN usecase_fields TEXT NOT NULL DEFAULT '{}';
COMMENT ON COLUMN run_tasks.usecase_fields IS 'JSON {goal, notes, constraints} of the task''s use case when the run was created';
