DROP TABLE run_summaries;
