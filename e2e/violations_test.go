package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// TestViolationsInBrowser: a run judged by the built-in TaskBench style
// shows its violations per model and category; clicking a count swaps the
// items table to the items that drew it, and an item's page lists them.
func TestViolationsInBrowser(t *testing.T) {
	chromePath(t)
	a := startApp(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if !r.IsJudge() {
			return llmtest.Reply{Content: "answer from " + r.Model + "."}
		}
		violations := `[]`
		if strings.Contains(r.Last(), "answer from fake-small.") {
			violations = `[{"category": "over_max", "detail": "180 words, 100 allowed"}, {"category": "missing_field", "detail": "no summary line"}]`
		}
		return llmtest.Reply{Content: `{"accuracy": {"score": 70, "reasoning": "a"}, "format": {"score": 50, "reasoning": "f"},
			"compliance": {"score": 40, "reasoning": "c"}, "violations": ` + violations + `}`}
	})
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": a.fake.URL}, &prov, 201)
	for _, k := range []string{"v-1", "v-2", "v-3"} {
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": k, "category": "summaries", "question": "Summarise " + k}, nil, 201)
	}
	var col struct{ ID int64 }
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "V", "task_ids": []string{"v-1", "v-2", "v-3"}}, &col, 201)
	var styles []store.JudgementStyle
	apiCall(t, a, "GET", "/api/judgement-styles", nil, &styles, 200)
	i := slices.IndexFunc(styles, func(s store.JudgementStyle) bool { return s.Name == store.TaskBenchStyleName })
	if i < 0 {
		t.Fatalf("no built-in TaskBench style")
	}
	var judge store.Judge
	apiCall(t, a, "POST", "/api/judges", map[string]any{"name": "TaskBench judge", "provider_id": prov.ID, "model": "fake-judge", "style_id": styles[i].ID}, &judge, 201)
	var run struct{ ID int64 }
	apiCall(t, a, "POST", "/api/runs", map[string]any{"name": "Violations", "judge_ids": []int64{judge.ID},
		"targets":        []map[string]any{{"provider_id": prov.ID, "model": "fake-small"}, {"provider_id": prov.ID, "model": "fake-large"}},
		"collection_ids": []int64{col.ID}}, &run, 201)
	waitFinished(t, a, run.ID)

	b := newBrowser(t, a.URL)
	b.open(fmt.Sprintf("/runs/%d", run.ID))
	b.waitFor("the violations table", `document.querySelector("[data-testid=violations-table]")`, 10*time.Second)
	b.screenshot("/tmp/e2e-violations-run.png")
	if got := b.text(`[data-testid=violations-table] td[data-category=over_max] a`); got != "3" {
		t.Errorf("fake-small's over_max count = %q; want 3", got)
	}
	b.click(`[data-testid=violations-table] td[data-category=missing_field] a`)
	b.waitFor("the items of missing_field", `document.querySelector("[data-testid=items-violation-filter]")?.value === "missing_field"`, 10*time.Second)
	if n := mustEval[int](b, "item rows", `document.querySelectorAll("#items [data-testid=item-row]").length`); n != 3 {
		t.Errorf("%d items listed; want fake-small's 3", n)
	}
	if !strings.Contains(mustEval[string](b, "url", `location.search`), "violation=missing_field") {
		t.Errorf("the filter is not in the address bar")
	}
	b.click(`#items [data-testid=item-link]`)
	b.waitFor("the item page", `document.querySelector("[data-testid=judge-violations]")`, 10*time.Second)
	// Badges are set in capitals by the stylesheet.
	if got := strings.ToLower(b.text("[data-testid=judge-violations] ul")); !strings.Contains(got, "over a maximum 180 words, 100 allowed") ||
		!strings.Contains(got, "missing field no summary line") {
		t.Errorf("the item's violations read %q", got)
	}
	b.screenshot("/tmp/e2e-violations-item.png")
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors in the browser:\n  %s", strings.Join(errs, "\n  "))
	}
}
