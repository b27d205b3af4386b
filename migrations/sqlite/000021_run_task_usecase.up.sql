-- A run freezes what its tasks' use cases add to the prompts (goal, notes,
-- constraints; issue 16 §2), so editing a use case later changes neither a
-- run's prompts nor its re-run. '{}' is a task without a saved use case.
ALTER TABLE run_tasks ADD COLUMN usecase_fields TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(usecase_fields));
