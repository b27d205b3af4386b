-- Agent configs (issue 14, seed 001): a model plus instructions plus MCP
-- tools, or the user's own deployed agent behind an HTTP endpoint. The
-- servers and the http executor's endpoint are JSON, as a run freezes them
-- whole; their secret header values are sealed inside it with the store's
-- secret box, exactly as provider_headers.header_value.
CREATE TABLE agents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    -- tools: Tribunal runs the tool loop on provider_id/model; http: Tribunal POSTs to http.url
    executor TEXT NOT NULL DEFAULT 'tools',
    provider_id INTEGER REFERENCES providers(id) ON DELETE SET NULL,
    model TEXT NOT NULL DEFAULT '',
    system_prompt TEXT NOT NULL DEFAULT '',
    settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
    max_turns INTEGER NOT NULL DEFAULT 10,
    tool_timeout_seconds INTEGER NOT NULL DEFAULT 30,
    mcp_servers TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(mcp_servers)),
    http TEXT CHECK (json_valid(http)), -- NULL for the tools executor
    tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    -- bumped by every edit; the row of agent_versions with this number holds the same config
    version INTEGER NOT NULL DEFAULT 1,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- Every version of an agent, frozen (the POST body shape, secrets sealed),
-- so a run can name the one it used.
CREATE TABLE agent_versions (
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    config TEXT NOT NULL CHECK (json_valid(config)),
    created_at DATETIME NOT NULL,
    PRIMARY KEY (agent_id, version)
);
