-- Judges that say what was violated (issue 16 §4, seed 004 §7): a style
-- version may ask its judge for violations [{category, detail}] beside the
-- scores, and a run freezes that with the rest of the style. Each verdict's
-- violations are rows of their own, so a run summary counts them per model
-- and category in SQL and the items list filters by category.
ALTER TABLE judgement_style_versions ADD COLUMN asks_violations BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE run_judges ADD COLUMN asks_violations BOOLEAN NOT NULL DEFAULT FALSE;
-- What of a verdict's violations could not be read (the verdict scored all
-- the same), on the verdict's overall score row.
ALTER TABLE scores ADD COLUMN note TEXT NOT NULL DEFAULT '';

CREATE TABLE violations (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    run_judge_id BIGINT NOT NULL REFERENCES run_judges(id) ON DELETE CASCADE,
    category TEXT NOT NULL CHECK (category IN ('under_min', 'over_max', 'format', 'missing_field', 'other')),
    detail TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_violations_run_category ON violations (run_id, category);
CREATE INDEX idx_violations_item ON violations (item_id);

COMMENT ON COLUMN judgement_style_versions.asks_violations IS 'the judge also lists the violations it saw, as [{category, detail}]';
COMMENT ON COLUMN run_judges.asks_violations IS 'frozen from the style version: the judge lists violations';
COMMENT ON COLUMN scores.note IS 'on a verdict''s overall row: what of its violations list could not be read';
COMMENT ON TABLE violations IS 'one violation a judge listed in its verdict on an item';
COMMENT ON COLUMN violations.category IS 'under_min, over_max, format, missing_field or other (an unknown category is read as other)';
COMMENT ON COLUMN violations.detail IS 'the judge''s words, at most 500 characters';
