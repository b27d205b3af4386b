DROP TABLE run_analyses;
