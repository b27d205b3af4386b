-- Agent configs (issue 14, seed 001): a model plus instructions plus MCP
-- tools, or the user's own deployed agent behind an HTTP endpoint. The
-- servers and the http executor's endpoint are JSON, as a run freezes them
-- whole; their secret header values are sealed inside it with the store's
-- secret box, exactly as provider_headers.header_value.
CREATE TABLE agents (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    executor TEXT NOT NULL DEFAULT 'tools',
    provider_id BIGINT REFERENCES providers(id) ON DELETE SET NULL,
    model TEXT NOT NULL DEFAULT '',
    system_prompt TEXT NOT NULL DEFAULT '',
    settings JSONB NOT NULL DEFAULT '{}',
    max_turns INTEGER NOT NULL DEFAULT 10,
    tool_timeout_seconds INTEGER NOT NULL DEFAULT 30,
    mcp_servers JSONB NOT NULL DEFAULT '[]',
    http JSONB,
    tags TEXT NOT NULL DEFAULT '[]',
    version INTEGER NOT NULL DEFAULT 1,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE agents IS 'Agent configs: the latest version of each; agent_versions keeps every version';
COMMENT ON COLUMN agents.executor IS 'tools: Tribunal runs the tool loop on provider_id/model; http: Tribunal POSTs to http.url';
COMMENT ON COLUMN agents.mcp_servers IS 'JSON list of MCP servers (name, url, transport, command, headers, allowed_tools, concurrency); secret header values sealed';
COMMENT ON COLUMN agents.http IS 'JSON {url, headers} of the http executor (NULL for tools); secret header values sealed';
COMMENT ON COLUMN agents.version IS 'Bumped by every edit; the row of agent_versions with this number holds the same config';

-- Every version of an agent, frozen, so a run can name the one it used.
CREATE TABLE agent_versions (
    agent_id BIGINT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    config JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (agent_id, version)
);
COMMENT ON COLUMN agent_versions.config IS 'The whole agent config as saved (the POST body shape), secret header values sealed';
