ALTER TABLE items DROP COLUMN judge_attempts;
ALTER TABLE items DROP COLUMN answer_attempts;
