-- Trace sources (issue 15, seed 002): a Langfuse whose dataset runs hold
-- answers already given, to be imported and scored. The secret key is
-- sealed with the store's secret box, exactly as provider_headers.header_value,
-- and bound to base_url's origin.
CREATE TABLE sources (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL DEFAULT 'LANGFUSE',
    base_url TEXT NOT NULL,
    public_key TEXT NOT NULL,
    secret_key TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE sources IS 'Where imported runs read answers that already exist (Langfuse dataset runs)';
COMMENT ON COLUMN sources.secret_key IS 'Sealed with the master key (secret.Box); shown only masked';
COMMENT ON COLUMN sources.project IS 'A label for the Langfuse project the keys belong to (the keys select it)';
