DROP TABLE sources;
