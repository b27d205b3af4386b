package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestTargetVersion: a target keeps the version its user typed, and one
// without takes the model id the provider reports in its reply; the run
// freezes both, shows them next to the model (run page, compare, report),
// and a re-run asks the provider again rather than copy its word.
func TestTargetVersion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			rep := llmtest.DefaultReply(r)
			if r.Model == "fake-small" && !r.IsWarmup() {
				rep.Model = "fake-small-2026-01-15"
			}
			return rep
		})
		p := taskBenchFixture(t, a)
		var run struct {
			ID      int64
			Targets []store.RunTarget
		}
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge": {"provider_id": %d, "model": "fake-judge"},
			"targets": [{"provider_id": %d, "model": "fake-small"}, {"provider_id": %d, "model": "fake-large", "version": " q4_K_M "}],
			"usecases": ["support"]}`, p.ID, p.ID, p.ID)}, 201, &run)
		a.waitRunDone(t, run.ID)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
		got := map[string]store.RunTarget{}
		for _, tg := range run.Targets {
			got[tg.Model] = tg
		}
		if tg := got["fake-small"]; tg.Version != "fake-small-2026-01-15" || !tg.VersionReported {
			t.Errorf("reported version: %q (reported %v)", tg.Version, tg.VersionReported)
		}
		if tg := got["fake-large"]; tg.Version != "q4_K_M" || tg.VersionReported {
			t.Errorf("typed version: %q (reported %v)", tg.Version, tg.VersionReported)
		}

		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		if txt := doc.Find("[data-testid=per-model]").Text(); !strings.Contains(txt, "version fake-small-2026-01-15") || !strings.Contains(txt, "version q4_K_M") {
			t.Errorf("run page models: %q", strings.Join(strings.Fields(txt), " "))
		}
		_, _, body := a.get(t, fmt.Sprintf("/compare?run_ids=%d", run.ID))
		if !strings.Contains(body, "version fake-small-2026-01-15") {
			t.Errorf("compare does not name the version")
		}
		_, _, body = a.get(t, fmt.Sprintf("/api/runs/%d/export?format=html", run.ID))
		if !strings.Contains(body, "version q4_K_M") {
			t.Errorf("the HTML report does not name the version")
		}

		again, err := st.RerunRun(context.Background(), run.ID, "MANUAL", "{}")
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range again.Targets {
			if want := map[string]string{"fake-small": "", "fake-large": "q4_K_M"}[tg.Model]; tg.Version != want {
				t.Errorf("re-run %s: version %q, want %q", tg.Model, tg.Version, want)
			}
		}
	})
}
