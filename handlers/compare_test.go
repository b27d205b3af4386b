package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestCompareAPI compares two runs: a strong model and a weak one, then
// the same strong model again as the baseline's successor with one
// regression; the paired test names the winner and the filters find the
// disagreement and the regression.
func TestCompareAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				switch {
				case strings.Contains(r.Last(), "weak says"):
					return llmtest.Reply{Content: `{"score": 2, "reasoning": "wrong"}`}
				case strings.Contains(r.Last(), "strong2 says q07"):
					return llmtest.Reply{Content: `{"score": 3, "reasoning": "worse this time"}`}
				}
				return llmtest.Reply{Content: `{"score": 9, "reasoning": "right"}`}
			}
			return llmtest.Reply{Content: r.Model + " says " + r.Last()}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"concurrency":8}`, a.fake.URL)}, 201, &p)
		var keys []string
		for i := range 20 {
			k := fmt.Sprintf("q%02d", i)
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":%q,"category":%q,"question":%q}`, k, []string{"x", "y"}[i%2], k)}, 201, nil)
			keys = append(keys, fmt.Sprintf("%q", k))
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"C","task_ids":[` + strings.Join(keys, ",") + `]}`}, 201, &col)
		start := func(models ...string) int64 {
			var targets []string
			for _, m := range models {
				targets = append(targets, fmt.Sprintf(`{"provider_id":%d,"model":%q}`, p.ID, m))
			}
			var run struct{ ID int64 }
			a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[%s],"collection_ids":[%d]}`,
				p.ID, strings.Join(targets, ","), col.ID)}, 201, &run)
			a.collectEvents(t, run.ID, "")
			return run.ID
		}
		first := start("strong", "weak")
		second := start("strong2")

		var cmp struct {
			Entries []struct {
				Model string `json:"model"`
				Score struct {
					Mean, Lo, Hi float64
					N            int
				} `json:"score"`
				Delta *struct{ Mean float64 } `json:"delta"`
			} `json:"entries"`
			Baselines []int `json:"baselines"`
			PairTests []struct {
				A, B    string
				Verdict string  `json:"verdict"`
				PHolm   float64 `json:"p_holm"`
			} `json:"pair_tests"`
			Tasks struct {
				Total int64 `json:"total"`
				Items []struct {
					TaskID    string    `json:"task_id"`
					Regressed bool      `json:"regressed"`
					Answers   []*string `json:"answers"`
					ItemIDs   []int64   `json:"item_ids"`
				} `json:"items"`
			} `json:"tasks"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/compare?run_ids=%d,%d&baseline=%d", first, second, first)}, 200, &cmp)
		if len(cmp.Entries) != 3 || cmp.Entries[0].Model != "strong" || cmp.Entries[0].Score.Mean != 9 || cmp.Entries[0].Score.N != 20 {
			t.Fatalf("entries %+v", cmp.Entries)
		}
		if e := cmp.Entries[1]; e.Score.Mean != 2 || e.Score.Lo != 2 || e.Score.Hi != 2 {
			t.Errorf("weak entry %+v", e)
		}
		// strong2 compares against the baseline run's first entry: (19·9 + 3)/20 − 9 = −0.3.
		if d := cmp.Entries[2].Delta; cmp.Baselines[2] != 0 || d == nil || d.Mean > -0.299 || d.Mean < -0.301 {
			t.Errorf("strong2 delta %+v baselines %v", d, cmp.Baselines)
		}
		if !strings.HasPrefix(cmp.PairTests[0].Verdict, "strong (") || !strings.Contains(cmp.PairTests[0].Verdict, "beats weak") || cmp.PairTests[0].PHolm >= 0.05 {
			t.Errorf("strong vs weak: %+v", cmp.PairTests[0])
		}
		if !strings.HasPrefix(cmp.PairTests[1].Verdict, "No significant difference") {
			t.Errorf("strong vs strong2 (one task apart): %+v", cmp.PairTests[1])
		}
		if cmp.Tasks.Total != 20 || cmp.Tasks.Items[0].Answers[1] == nil || *cmp.Tasks.Items[0].Answers[1] != "weak says q00" {
			t.Fatalf("tasks %+v", cmp.Tasks)
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/compare?run_ids=%d,%d&baseline=%d&only=regressions", first, second, first)}, 200, &cmp)
		if cmp.Tasks.Total != 1 || cmp.Tasks.Items[0].TaskID != "q07" || !cmp.Tasks.Items[0].Regressed {
			t.Errorf("regressions %+v", cmp.Tasks)
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/compare?run_ids=%d&only=disagreements&category=y", first)}, 200, &cmp)
		if cmp.Tasks.Total != 10 { // weak fails every task strong passes; category y holds 10
			t.Errorf("disagreements in y: %d", cmp.Tasks.Total)
		}
		var diff struct {
			Ops []struct{ Kind, Text string } `json:"ops"`
		}
		ids := cmp.Tasks.Items[0].ItemIDs
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/compare/diff?a=%d&b=%d", ids[0], ids[1])}, 200, &diff)
		if len(diff.Ops) != 3 || diff.Ops[0].Kind != "-" || diff.Ops[0].Text != "strong " || diff.Ops[1].Kind != "+" {
			t.Errorf("diff %+v", diff.Ops)
		}
		a.do(t, call{method: "GET", path: "/api/compare?run_ids=x"}, 400, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/compare?run_ids=%d&baseline=999", first)}, 400, nil)
		a.do(t, call{method: "GET", path: "/api/compare?run_ids=99999"}, 404, nil)
		page := a.do(t, call{method: "GET", path: fmt.Sprintf("/compare?run_ids=%d,%d&baseline=%d", first, second, first)}, 200, nil)
		for _, want := range []string{"beats weak", "<svg", "compare-tasks", "Δ vs baseline"} {
			if !strings.Contains(page, want) {
				t.Errorf("compare page lacks %q", want)
			}
		}
	})
}
