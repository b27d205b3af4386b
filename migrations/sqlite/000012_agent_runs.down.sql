DROP TABLE call_slots;
ALTER TABLE items DROP COLUMN reasoning;
ALTER TABLE items DROP COLUMN turns;
ALTER TABLE items DROP COLUMN tool_calls;
ALTER TABLE run_targets DROP COLUMN tools;
ALTER TABLE run_targets DROP COLUMN agent;
ALTER TABLE run_targets DROP COLUMN agent_version;
ALTER TABLE run_targets DROP COLUMN agent_name;
ALTER TABLE run_targets DROP COLUMN agent_id;
