-- PostgreSQL's 000027 drops the items' foreign key to run_tasks and its
-- index, the costliest of a million-item run's creation. SQLite keeps
-- both: its creation is quick at its sizes, and dropping a foreign key
-- there means rebuilding the table. Nothing to change.
SELECT 1;
