ALTER TABLE run_tasks DROP COLUMN usecase_fields;
