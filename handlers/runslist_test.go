package handlers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"tribunal/format"
	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// runsListFixture makes a priced provider, two collections of ten tasks
// and one finished run on each: "strong and weak" on the first (weak's
// answer to q03 fails at once), "solo" on the second.
func runsListFixture(t *testing.T, st *store.Store) (a *app, cols [2]int64, ids [2]int64) {
	t.Helper()
	a = newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
		switch {
		case r.IsJudge() && strings.Contains(r.Last(), "weak says"):
			return llmtest.Reply{Content: `{"score": 2, "reasoning": "wrong"}`}
		case r.IsJudge():
			return llmtest.Reply{Content: `{"score": 9, "reasoning": "right"}`}
		case r.Model == "weak" && strings.Contains(r.Last(), "q03"):
			return llmtest.Reply{Status: 400, Content: "bad request"}
		}
		return llmtest.Reply{Content: r.Model + " says " + r.Last()}
	})
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"concurrency":8,
		"prices":[{"model":"strong","input_per_mtok":1000,"output_per_mtok":2000},{"model":"weak","input_per_mtok":100,"output_per_mtok":200}]}`, a.fake.URL)}, 201, &p)
	for c, name := range []string{"first", "second"} {
		var keys []string
		for i := range 10 {
			k := fmt.Sprintf("%s-q%02d", name, i)
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":%q,"category":"x","question":%q}`, k, k)}, 201, nil)
			keys = append(keys, fmt.Sprintf("%q", k))
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: fmt.Sprintf(`{"name":%q,"task_ids":[%s]}`, name, strings.Join(keys, ","))}, 201, &col)
		cols[c] = col.ID
	}
	for i, models := range [][]string{{"strong", "weak"}, {"solo"}} {
		var targets []string
		for _, m := range models {
			targets = append(targets, fmt.Sprintf(`{"provider_id":%d,"model":%q}`, p.ID, m))
		}
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[%s],"collection_ids":[%d]}`,
			p.ID, strings.Join(targets, ","), cols[i])}, 201, &run)
		a.collectEvents(t, run.ID, "")
		ids[i] = run.ID
	}
	return a, cols, ids
}

// TestRunsListFilters: GET /api/runs and the /runs page filter by
// collection and creation date, refuse malformed values, and keep the
// filters in the pagination links.
func TestRunsListFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a, cols, ids := runsListFixture(t, st)
		today := time.Now().UTC()
		yesterday, tomorrow := today.AddDate(0, 0, -1).Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly)
		for _, tc := range []struct {
			query string
			want  []int64
		}{
			{"", []int64{ids[1], ids[0]}},
			{fmt.Sprintf("collection_id=%d", cols[0]), []int64{ids[0]}},
			{fmt.Sprintf("collection_id=%d", cols[1]), []int64{ids[1]}},
			{"from=" + yesterday, []int64{ids[1], ids[0]}},
			{"from=" + tomorrow, nil},
			{"to=" + yesterday, nil},
			{"to=" + today.Format(time.DateOnly), []int64{ids[1], ids[0]}}, // a date ends at the end of that day
			{"from=" + today.Add(-time.Hour).Format(time.RFC3339) + "&to=" + today.Add(time.Hour).Format(time.RFC3339), []int64{ids[1], ids[0]}},
			{fmt.Sprintf("from=%s&collection_id=%d&status=FINISHED", yesterday, cols[1]), []int64{ids[1]}},
			{fmt.Sprintf("collection_id=%d&status=RUNNING", cols[1]), nil},
		} {
			var page struct {
				Total int64
				Items []struct{ ID int64 }
			}
			a.do(t, call{method: "GET", path: "/api/runs?" + strings.ReplaceAll(tc.query, "+", "%2B")}, 200, &page)
			var got []int64
			for _, r := range page.Items {
				got = append(got, r.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || page.Total != int64(len(tc.want)) {
				t.Errorf("GET /api/runs?%s: %v (total %d), want %v", tc.query, got, page.Total, tc.want)
			}
		}
		for query, want := range map[string]string{
			"from=yesterday":      "from must be an RFC 3339 date",
			"to=2026-13-01":       "to must be an RFC 3339 date",
			"collection_id=first": "collection_id must be a collection id",
		} {
			if body := a.do(t, call{method: "GET", path: "/api/runs?" + query}, 400, nil); !strings.Contains(body, want) {
				t.Errorf("GET /api/runs?%s: %s, want %q", query, body, want)
			}
		}

		_, doc, _ := a.get(t, fmt.Sprintf("/runs?collection_id=%d", cols[0]))
		if rows := doc.Find("[data-testid=run-row]"); rows.Length() != 1 || rows.AttrOr("data-run-id", "") != fmt.Sprint(ids[0]) {
			t.Errorf("/runs by collection: %d rows", rows.Length())
		}
		if sel := doc.Find("[data-testid=collection-filter] option[selected]").Text(); sel != "first" {
			t.Errorf("collection filter shows %q selected", sel)
		}
		_, doc, _ = a.get(t, "/runs?per_page=1&from="+yesterday)
		next, ok := doc.Find(".pagination a[href*='page=2']").Attr("href")
		if !ok || !strings.Contains(next, "from="+yesterday) {
			t.Errorf("pagination link %q keeps no filter", next)
		}
		if res, _, body := a.get(t, "/runs?to=soon"); res.StatusCode != 400 || !strings.Contains(body, "to must be an RFC 3339 date") {
			t.Errorf("/runs?to=soon: %d", res.StatusCode)
		}
	})
}

// TestRunsListFigures: a finished run's row shows its best model and
// overall, pass rate, duration, cost and failed count as its summary has
// them; Compare with fewer than two runs ticked says why, with two it
// opens the comparison.
func TestRunsListFigures(t *testing.T) {
	a, _, ids := runsListFixture(t, storetest.SQLite(t))
	var run struct {
		store.Run
		Summary *runs.Summary `json:"summary"`
	}
	a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", ids[0])}, 200, &run)
	sum := run.Summary
	if sum == nil || sum.Best.OverallTargetID == 0 || sum.Overall.Failed != 1 || sum.Overall.CostUSD == nil {
		t.Fatalf("fixture run's summary: %+v", sum)
	}
	var best store.RunTarget
	var overall *float64
	for _, tg := range run.Targets {
		if tg.ID == sum.Best.OverallTargetID {
			best = tg
		}
	}
	for _, m := range sum.Models {
		if m.TargetID == sum.Best.OverallTargetID {
			overall = m.Overall
		}
	}
	cost := *sum.Overall.CostUSD
	if sum.Overall.JudgeCostUSD != nil {
		cost += *sum.Overall.JudgeCostUSD
	}
	_, doc, _ := a.get(t, "/runs")
	row := doc.Find(fmt.Sprintf("[data-testid=run-row][data-run-id='%d']", ids[0]))
	cell := func(id string) string {
		return strings.Join(strings.Fields(row.Find("[data-testid="+id+"]").Text()), " ")
	}
	for id, want := range map[string]string{
		"run-overall":   "Fake / strong " + format.Overall(overall),
		"run-pass-rate": format.Pct(sum.Overall.PassRate),
		"run-duration":  format.Duration(run.FinishedAt.Sub(*run.StartedAt)),
		"run-cost":      format.USD(&cost),
		"run-failed":    "1",
	} {
		if got := cell(id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if best.Model != "strong" {
		t.Errorf("best model %q", best.Model)
	}
	if doc.Find("thead th").FilterFunction(func(_ int, s *goquery.Selection) bool { return s.Text() == "Pass rate" }).Length() != 1 {
		t.Error("no Pass rate column")
	}
	solo := doc.Find(fmt.Sprintf("[data-testid=run-row][data-run-id='%d'] [data-testid=run-overall]", ids[1])).Text()
	if !strings.Contains(solo, "Fake / solo") {
		t.Errorf("one-model run's overall: %q", solo)
	}

	_, doc, _ = a.get(t, fmt.Sprintf("/runs?compare=1&run_ids=%d", ids[0]))
	if msg := doc.Find("[data-testid=compare-error]").Text(); !strings.Contains(msg, "Tick two or more runs to compare") {
		t.Errorf("compare with one run ticked: %q", msg)
	}
	if _, ok := doc.Find(fmt.Sprintf("input[name=run_ids][value='%d']", ids[0])).Attr("checked"); !ok {
		t.Error("the ticked run lost its tick")
	}
	res, _, _ := a.get(t, fmt.Sprintf("/runs?compare=1&run_ids=%d&run_ids=%d", ids[0], ids[1]))
	if res.StatusCode != 200 || res.Request.URL.Path != "/compare" || res.Request.URL.Query().Get("run_ids") != fmt.Sprintf("%d,%d", ids[0], ids[1]) {
		t.Errorf("compare with two ticked: %d at %s", res.StatusCode, res.Request.URL)
	}
	if res, _, _ := a.get(t, fmt.Sprintf("/compare?run_ids=%d&run_ids=%d", ids[0], ids[1])); res.StatusCode != 200 {
		t.Errorf("/compare with repeated run_ids: %d", res.StatusCode)
	}
}
