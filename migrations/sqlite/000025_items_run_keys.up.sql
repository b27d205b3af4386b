-- PostgreSQL only (see postgres/000025): SQLite creates a run's items in-process
-- in a fraction of PostgreSQL's time and keeps its keys.
SELECT 1;
