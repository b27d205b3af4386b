package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunOfAgentFreezesItsVersion: a run's agent target freezes the agent's
// config at the version it used (secrets still sealed in the row), takes
// the agent's model, provider and settings, and is labelled with the
// version; a later edit changes the agent, not the run.
func TestRunOfAgentFreezesItsVersion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		base := idleRun(t, st, 2)
		model := base.Targets[0]
		in := agentFixture(t, st)
		temp := 0.2
		in.Settings.Temperature = &temp
		a, err := st.CreateAgent(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: *model.ProviderID, Model: "j"},
			CollectionIDs: collectionIDs(base), Targets: []store.ModelRef{{ProviderID: *model.ProviderID, Model: "m0"}, {AgentID: a.ID, Tags: []string{"agent"}}}})
		if err != nil {
			t.Fatal(err)
		}
		tg := run.Targets[1]
		if tg.AgentID == nil || *tg.AgentID != a.ID || tg.AgentName != "Support bot" || tg.AgentVersion != 1 || tg.Model != "gpt-4.1" ||
			tg.ProviderName != "openai" || tg.Settings.SystemPrompt != "Be brief." || tg.Settings.Temperature == nil || *tg.Settings.Temperature != 0.2 {
			t.Fatalf("agent target = %+v", tg)
		}
		if got := tg.Label(); got != "Support bot (agent v1)" {
			t.Errorf("label = %q", got)
		}
		raw, err := st.RawTargetAgent(ctx, tg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "mcp-secret-4242") || !strings.Contains(raw, "mcp.example.com") {
			t.Errorf("frozen config holds the secret in clear, or no server: %s", raw)
		}
		// Edit the agent: the run keeps version 1 and its server.
		in.MCPServers[0].URL = "https://other.example.com/mcp"
		in.MCPServers[0].Headers[0].Value = "Bearer new-secret"
		if _, err := st.UpdateAgent(ctx, a.ID, in); err != nil {
			t.Fatal(err)
		}
		got, err := st.RunTarget(ctx, tg.ID)
		if err != nil {
			t.Fatal(err)
		}
		cfg := *got.Agent
		if err := st.OpenAgentSecrets(&cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.MCPServers[0].URL != "https://mcp.example.com/mcp" || cfg.MCPServers[0].Headers[0].Value != "Bearer mcp-secret-4242" {
			t.Errorf("frozen config after the edit = %+v", cfg.MCPServers[0])
		}
		if strings.Contains(got.Agent.MCPServers[0].Headers[0].Value, "mcp-secret") {
			t.Error("opening the secrets changed the stored target")
		}
	})
}

// TestRunTargetsRefuseMixedAgentFields: a target names an agent or a model,
// not both; a missing agent is named.
func TestRunTargetsRefuseMixedAgentFields(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		base := idleRun(t, st, 1)
		pid := *base.Targets[0].ProviderID
		for _, tc := range []struct {
			target store.ModelRef
			want   string
		}{
			{store.ModelRef{AgentID: 1, ProviderID: pid, Model: "x"}, "either agent_id or provider_id"},
			{store.ModelRef{AgentID: 999}, "no agent with id 999"},
			{store.ModelRef{AgentID: 1, Settings: store.TargetSettings{SystemPrompt: "x"}}, "edit the agent"},
		} {
			_, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: pid, Model: "j"},
				CollectionIDs: collectionIDs(base), Targets: []store.ModelRef{tc.target}})
			var ve *store.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("target %+v: err = %v, want one saying %q", tc.target, err, tc.want)
			}
		}
	})
}

// idleRun is a run of n tasks that no longer counts against the active-run limit.
func idleRun(t *testing.T, st *store.Store, n int) *store.Run {
	t.Helper()
	r := makeRun(t, st, n, 1)
	if _, err := st.SetRunStatus(context.Background(), r.ID, store.RunCancelled, store.RunRunning); err != nil {
		t.Fatal(err)
	}
	return r
}

func collectionIDs(r *store.Run) []int64 {
	var ids []int64
	for _, c := range r.Collections {
		ids = append(ids, *c.CollectionID)
	}
	return ids
}

// TestCallSlotsHoldTheLimit: at most limit holders at once, a released or
// expired slot is taken again.
func TestCallSlotsHoldTheLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const key = "mcp:https://mcp.example.com/mcp"
		a, ok, err := st.AcquireCallSlot(ctx, key, 2, "w1", time.Minute)
		if err != nil || !ok {
			t.Fatalf("first: ok=%v err=%v", ok, err)
		}
		b, ok, err := st.AcquireCallSlot(ctx, key, 2, "w2", time.Minute)
		if err != nil || !ok || b == a {
			t.Fatalf("second: slot %d (first %d) ok=%v err=%v", b, a, ok, err)
		}
		if _, ok, err := st.AcquireCallSlot(ctx, key, 2, "w3", time.Minute); err != nil || ok {
			t.Fatalf("third of two: ok=%v err=%v", ok, err)
		}
		if _, ok, _ := st.AcquireCallSlot(ctx, "mcp:other", 2, "w3", time.Minute); !ok {
			t.Error("another server's slots are not its own")
		}
		if err := st.ReleaseCallSlot(ctx, key, a, "w1"); err != nil {
			t.Fatal(err)
		}
		c, ok, err := st.AcquireCallSlot(ctx, key, 2, "w3", -time.Second) // a lease that already ran out
		if err != nil || !ok || c != a {
			t.Fatalf("after release: slot %d ok=%v err=%v, want slot %d", c, ok, err, a)
		}
		if _, ok, _ := st.AcquireCallSlot(ctx, key, 2, "w4", time.Minute); !ok {
			t.Error("an expired lease was not taken over")
		}
	})
}
