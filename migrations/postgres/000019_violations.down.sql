DROP TABLE violations;
ALTER TABLE scores DROP COLUMN note;
ALTER TABLE run_judges DROP COLUMN asks_violations;
ALTER TABLE judgement_style_versions DROP COLUMN asks_violations;
