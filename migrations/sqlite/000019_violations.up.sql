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
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    run_judge_id INTEGER NOT NULL REFERENCES run_judges(id) ON DELETE CASCADE,
    category TEXT NOT NULL CHECK (category IN ('under_min', 'over_max', 'format', 'missing_field', 'other')),
    detail TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL
);
CREATE INDEX idx_violations_run_category ON violations (run_id, category);
CREATE INDEX idx_violations_item ON violations (item_id);

