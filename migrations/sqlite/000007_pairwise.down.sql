DROP TABLE IF EXISTS comparisons;
