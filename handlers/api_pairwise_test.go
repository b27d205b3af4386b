package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
	"tribunal/views"
)

// TestPairwiseAPI creates a pairwise run through the API and reads its
// leaderboard, judges' flip rates and counts; the section renders them.
func TestPairwiseAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() { // prefers fake-large's answer, wherever it is
				if strings.Contains(r.Last(), "<<<ANSWER_A\nfrom fake-large") {
					return llmtest.Reply{Content: `{"reasoning": "A is better", "winner": "A"}`}
				}
				return llmtest.Reply{Content: `{"reasoning": "B is better", "winner": "B"}`}
			}
			return llmtest.Reply{Content: "from " + r.Model}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		for i := range 3 {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"p-%d","category":"c","question":"q%d"}`, i, i)}, 201, nil)
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"P","task_ids":["p-0","p-1","p-2"]}`}, 201, &col)

		judge := fmt.Sprintf(`"judge":{"provider_id":%d,"model":"fake-judge"}`, p.ID)
		got := a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"pairwise":true,%s,"targets":[{"provider_id":%d,"model":"fake-small"}],"collection_ids":[%d]}`,
			judge, p.ID, col.ID)}, 422, nil)
		if !strings.Contains(got, "at least two") {
			t.Errorf("a pairwise run of one target: %s", got)
		}
		var run runReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"pairwise":true,%s,"targets":[{"provider_id":%d,"model":"fake-small"},{"provider_id":%d,"model":"fake-large"}],"collection_ids":[%d]}`,
			judge, p.ID, p.ID, col.ID)}, 201, &run)
		a.collectEvents(t, run.ID, "") // the stream ends with the run

		var rep store.PairwiseReport
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/pairwise", run.ID)}, 200, &rep)
		if len(rep.Leaderboard) != 2 || rep.Leaderboard[0].Model != "fake-large" || rep.Leaderboard[0].Wins != 3 ||
			rep.Leaderboard[1].Losses != 3 || rep.Leaderboard[0].Lo <= 1000 || rep.Leaderboard[0].N != 3 {
			t.Errorf("leaderboard %+v", rep.Leaderboard)
		}
		if len(rep.Judges) != 1 || rep.Judges[0].Comparisons != 3 || rep.Judges[0].FlipRate == nil || *rep.Judges[0].FlipRate != 0 {
			t.Errorf("judges %+v", rep.Judges)
		}
		if rep.Comparisons != (store.ComparisonCounts{Total: 3, Done: 3}) {
			t.Errorf("counts %+v", rep.Comparisons)
		}
		// The same answer again, from the cache.
		var again store.PairwiseReport
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/pairwise", run.ID)}, 200, &again)
		if again.Leaderboard[0] != rep.Leaderboard[0] || again.Comparisons != rep.Comparisons {
			t.Errorf("second report %+v, first %+v", again, rep)
		}

		var b strings.Builder
		if err := views.PairwiseSection(views.PairwiseView{RunID: run.ID, Report: rep}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		for _, want := range []string{`id="pairwise"`, "3 of 3 comparisons judged; 0 flipped", `data-testid="flip-rate">0%`} {
			if !strings.Contains(html, want) {
				t.Errorf("section lacks %q:\n%s", want, html)
			}
		}
		if n := strings.Count(html, `data-testid="pairwise-row"`); n != 2 || strings.Index(html, "fake-large") > strings.Index(html, "fake-small") {
			t.Errorf("section rows %d, or out of order:\n%s", n, html)
		}

		// A run judged one answer at a time has no pairwise results.
		var plain runReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{%s,"targets":[{"provider_id":%d,"model":"fake-small"}],"collection_ids":[%d]}`,
			judge, p.ID, col.ID)}, 201, &plain)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/pairwise", plain.ID)}, 404, nil)
	})
}
