ALTER TABLE run_tasks DROP COLUMN prompt_template;
ALTER TABLE run_tasks DROP COLUMN input;
ALTER TABLE tasks DROP COLUMN prompt_template;
ALTER TABLE tasks DROP COLUMN input;
