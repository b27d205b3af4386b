package store

import "context"

// RawAgentColumns returns an agent's stored mcp_servers and http columns and
// the config of its latest version as the database holds them, so tests can
// see what is at rest.
func (s *Store) RawAgentColumns(ctx context.Context, id int64) (string, error) {
	var row struct{ MCPServers, HTTP, Config string }
	err := s.conn(ctx).Raw(`SELECT CAST(a.mcp_servers AS TEXT) AS mcp_servers, CAST(a.http AS TEXT) AS http, CAST(v.config AS TEXT) AS config
		FROM agents a JOIN agent_versions v ON v.agent_id = a.id AND v.version = a.version WHERE a.id = ?`, id).Scan(&row).Error
	return row.MCPServers + "\n" + row.HTTP + "\n" + row.Config, err
}

// RawTargetAgent returns a run target's frozen agent config as stored.
func (s *Store) RawTargetAgent(ctx context.Context, id int64) (string, error) {
	var raw string
	err := s.conn(ctx).Raw(`SELECT agent FROM run_targets WHERE id = ?`, id).Scan(&raw).Error
	return raw, err
}
