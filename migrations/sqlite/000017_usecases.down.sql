DROP TABLE usecases;
