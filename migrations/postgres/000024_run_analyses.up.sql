-- A finished run's statistics (issue 18), stored as its summary is
-- (000010): on a million-item run they are a scan of every item and
-- verdict, seconds long, while the run's analysis should answer at once in
-- any process. The stamp says which item counts and grades they were
-- computed for; a retry or a grade moves it and makes them stale.
CREATE TABLE run_analyses (
    run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    stamp TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE run_analyses IS 'finished runs'' statistics (package runs), JSON, valid while stamp matches the run''s item counts and grades';
