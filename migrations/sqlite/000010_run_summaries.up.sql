-- A finished run's summary, computed once (issue 12): it is a scan of every
-- item and score, about a second for a 100k-item run, while the run's page
-- and JSON should answer at once. The stamp says which item counts it was
-- computed for; a retry moves them and makes it stale.
CREATE TABLE run_summaries (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    stamp TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
