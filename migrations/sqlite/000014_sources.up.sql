-- Trace sources (issue 15, seed 002): a Langfuse whose dataset runs hold
-- answers already given, to be imported and scored. The secret key is
-- sealed with the store's secret box, exactly as provider_headers.header_value,
-- and bound to base_url's origin.
CREATE TABLE sources (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL DEFAULT 'LANGFUSE',
    base_url TEXT NOT NULL,
    public_key TEXT NOT NULL,
    secret_key TEXT NOT NULL, -- sealed with the master key (secret.Box); shown only masked
    project TEXT NOT NULL DEFAULT '', -- a label for the Langfuse project the keys belong to
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
