-- Runs of agents (issue 14, seed 001). A target may be an agent: the run
-- freezes the agent version it used (its config, secrets still sealed) and,
-- at warm-up, the tools its servers offered, so a later edit of the agent
-- never changes what a run did. provider_id/model stay those of the agent's
-- model (the tools executor), so concurrency, prices and costs work as for
-- any target; an http executor's target has neither.
-- No foreign key here, so the down migration can drop the column (SQLite
-- cannot drop one that has a key); AUTOINCREMENT never reuses an agent's id.
ALTER TABLE run_targets ADD COLUMN agent_id INTEGER;
ALTER TABLE run_targets ADD COLUMN agent_name TEXT NOT NULL DEFAULT '';
ALTER TABLE run_targets ADD COLUMN agent_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_targets ADD COLUMN agent TEXT; -- the frozen config; NULL for a model target
ALTER TABLE run_targets ADD COLUMN tools TEXT; -- the tool list warm-up saw, JSON

-- What an agent did for its answer: every tool call in order (JSON list of
-- {turn, server, name, arguments, result, is_error, duration_ms}), the
-- number of model calls, and reasoning text where the provider returns it.
ALTER TABLE items ADD COLUMN tool_calls TEXT;
ALTER TABLE items ADD COLUMN turns INTEGER;
ALTER TABLE items ADD COLUMN reasoning TEXT;

-- Leases on an MCP server's call slots, so its concurrency holds across
-- worker processes: a call holds one slot (0 … concurrency-1) until it ends
-- or its lease runs out (a worker that died).
CREATE TABLE call_slots (
    slot_key TEXT NOT NULL,
    slot INTEGER NOT NULL,
    holder TEXT NOT NULL,
    lease_until DATETIME NOT NULL,
    PRIMARY KEY (slot_key, slot)
);
