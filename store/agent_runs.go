package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"tribunal/mcpclient"
)

// SetTargetTools freezes the tool list an agent target's servers offered at
// warm-up: the run's record of what its agent could call.
func (s *Store) SetTargetTools(ctx context.Context, targetID int64, tools []mcpclient.Tool) error {
	if tools == nil {
		tools = []mcpclient.Tool{}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return fmt.Errorf("store: target tools: %w", err)
	}
	if err := s.conn(ctx).Model(&RunTarget{}).Where("id = ?", targetID).Update("tools", string(b)).Error; err != nil {
		return fmt.Errorf("store: target tools: %w", err)
	}
	return nil
}

// RunTarget returns one run target as stored now (with the tools frozen at
// its warm-up, if it has had one).
func (s *Store) RunTarget(ctx context.Context, id int64) (*RunTarget, error) {
	var t RunTarget
	if err := s.conn(ctx).Take(&t, id).Error; err != nil {
		return nil, fmt.Errorf("store: run target: %w", notFound(err, "run target", id))
	}
	return &t, nil
}

// AcquireCallSlot takes one of limit slots of key (an MCP server) for
// holder until the lease runs out, and reports which; ok is false when all
// are held. It is one statement: two workers racing for the same free slot
// meet on the primary key, and the loser's upsert updates nothing.
func (s *Store) AcquireCallSlot(ctx context.Context, key string, limit int, holder string, lease time.Duration) (slot int, ok bool, err error) {
	now := s.now()
	var got []int
	q := `INSERT INTO call_slots (slot_key, slot, holder, lease_until)
		SELECT ?, n, ?, ? FROM (` + seriesSQL(s.dialect) + `) AS slots
		WHERE NOT EXISTS (SELECT 1 FROM call_slots c WHERE c.slot_key = ? AND c.slot = slots.n AND c.lease_until > ?)
		ORDER BY n LIMIT 1
		ON CONFLICT (slot_key, slot) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
			WHERE call_slots.lease_until <= ?
		RETURNING slot`
	if err := s.conn(ctx).Raw(q, key, holder, now.Add(lease), limit, key, now, now).Scan(&got).Error; err != nil {
		return 0, false, fmt.Errorf("store: acquire call slot: %w", err)
	}
	if len(got) == 0 {
		return 0, false, nil
	}
	return got[0], true, nil
}

// seriesSQL lists the numbers 0 … ?-1 (the placeholder is the limit).
func seriesSQL(d Dialect) string {
	if d == Postgres {
		return `SELECT generate_series(0, ?::int - 1) AS n`
	}
	return `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?) SELECT n FROM seq`
}

// RenewCallSlot extends a holder's lease on a slot while its call runs.
func (s *Store) RenewCallSlot(ctx context.Context, key string, slot int, holder string, lease time.Duration) error {
	err := s.conn(ctx).Exec(`UPDATE call_slots SET lease_until = ? WHERE slot_key = ? AND slot = ? AND holder = ?`,
		s.now().Add(lease), key, slot, holder).Error
	if err != nil {
		return fmt.Errorf("store: renew call slot: %w", err)
	}
	return nil
}

// ReleaseCallSlot frees a slot this holder took.
func (s *Store) ReleaseCallSlot(ctx context.Context, key string, slot int, holder string) error {
	err := s.conn(ctx).Exec(`DELETE FROM call_slots WHERE slot_key = ? AND slot = ? AND holder = ?`, key, slot, holder).Error
	if err != nil {
		return fmt.Errorf("store: release call slot: %w", err)
	}
	return nil
}

// AgentRunCounts counts, per agent id, the runs that benchmarked the agent
// (at any version); an agent no run used is absent.
func (s *Store) AgentRunCounts(ctx context.Context) (map[int64]int64, error) {
	var rows []struct {
		AgentID int64
		Runs    int64
	}
	err := s.conn(ctx).Model(&RunTarget{}).Select("agent_id, COUNT(DISTINCT run_id) AS runs").
		Where("agent_id IS NOT NULL").Group("agent_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: agent run counts: %w", err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.AgentID] = r.Runs
	}
	return out, nil
}

// agentTarget is the run target of an agent at its latest version: the
// config frozen (secrets still sealed), the agent's model, provider, price
// and settings for the tools executor.
func (tx *Store) agentTarget(ctx context.Context, field string, id int64,
	provider func(field string, id int64) (*Provider, error), price func(providerID int64, model string) (Price, error)) (*RunTarget, error) {
	a, err := tx.agent(ctx, id, false)
	if errors.Is(err, ErrNotFound) {
		return nil, invalid(field, "no agent with id %d", id)
	}
	if err != nil {
		return nil, err
	}
	aid, cfg := a.ID, a.AgentInput
	cfg.detach()
	tg := &RunTarget{AgentID: &aid, AgentName: a.Name, AgentVersion: a.Version, Agent: &cfg, WarmupStatus: WarmupPending,
		Settings: TargetSettings{Temperature: cfg.Settings.Temperature, MaxTokens: cfg.Settings.MaxTokens,
			ReasoningEffort: cfg.Settings.ReasoningEffort, SystemPrompt: cfg.SystemPrompt}}
	if cfg.Executor == ExecutorHTTP {
		tg.ProviderName, tg.Model = "http", a.Name
		return tg, nil
	}
	if cfg.ProviderID == nil {
		return nil, invalid(field, "agent %q has no provider any more (it was deleted): edit the agent", a.Name)
	}
	p, err := provider(field, *cfg.ProviderID)
	if err != nil {
		return nil, err
	}
	pr, err := price(p.ID, cfg.Model)
	if err != nil {
		return nil, err
	}
	pid := p.ID
	tg.ProviderID, tg.ProviderName, tg.Model, tg.Price = &pid, p.Name, cfg.Model, pr
	return tg, nil
}
