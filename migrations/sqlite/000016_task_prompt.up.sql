-- The prompt the model gets (issue 16 §1): a task's input data (inline, or
-- the contents of its input_file read at import) and its own
-- prompt_template (Go text/template), which replaces the built-in layout of
-- package prompt. Runs freeze both with the rest of the task.
ALTER TABLE tasks ADD COLUMN input TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN prompt_template TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN input TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN prompt_template TEXT NOT NULL DEFAULT '';
