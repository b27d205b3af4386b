DROP TABLE agent_versions;
DROP TABLE agents;
