package store_test

import (
	"context"
	"testing"

	"tribunal/mcpclient"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestAgentRunsCountedAndFiltered: the runs of an agent are counted and
// listed by agent id at any version; a re-run keeps the frozen version and
// leaves the tool list to its own warm-up.
func TestAgentRunsCountedAndFiltered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		base := idleRun(t, st, 1)
		in := agentFixture(t, st)
		a, err := st.CreateAgent(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: *base.Targets[0].ProviderID, Model: "j"},
			CollectionIDs: collectionIDs(base), Targets: []store.ModelRef{{AgentID: a.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetTargetTools(ctx, run.Targets[0].ID, []mcpclient.Tool{{Server: "docs", Name: "search"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
			t.Fatal(err)
		}
		in.Model = "gpt-5"
		if _, err := st.UpdateAgent(ctx, a.ID, in); err != nil {
			t.Fatal(err)
		}
		again, err := st.RerunRun(ctx, run.ID, "MANUAL", "{}")
		if err != nil {
			t.Fatal(err)
		}
		if tg := again.Targets[0]; tg.AgentVersion != 1 || tg.Model != "gpt-4.1" || tg.Tools != nil {
			t.Errorf("re-run's agent target: version %d, model %q, tools %v; want v1 on gpt-4.1, tools listed at its warm-up", tg.AgentVersion, tg.Model, tg.Tools)
		}

		counts, err := st.AgentRunCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) != 1 || counts[a.ID] != 2 {
			t.Errorf("agent run counts = %v, want %d: 2", counts, a.ID)
		}
		for id, want := range map[int64]int64{a.ID: 2, a.ID + 1: 0} {
			page, err := st.Runs(ctx, store.RunFilter{AgentID: id})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != want {
				t.Errorf("runs of agent %d: %d, want %d", id, page.Total, want)
			}
		}
	})
}
