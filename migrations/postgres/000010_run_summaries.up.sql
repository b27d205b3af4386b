-- A finished run's summary, computed once (issue 12): it is a scan of every
-- item and score, about a second for a 100k-item run, while the run's page
-- and JSON should answer at once in any process. The stamp says which item
-- counts it was computed for; a retry moves them and makes it stale.
CREATE TABLE run_summaries (
    run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    stamp TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE run_summaries IS 'finished runs'' summaries (package runs), JSON, valid while stamp matches the run''s item counts';
