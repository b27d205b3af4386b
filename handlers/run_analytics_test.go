package handlers_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// Seed 001's per-model analytics end to end: time and token spreads and
// human grades in the run JSON, the run page and the HTML report, the
// grades following each grade made through the API on an ended run.
func TestRunAnalytics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		// Task i's answer reports 100·(i+1) output tokens: 100, 200, 300, 400.
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				return llmtest.Reply{Content: `{"score": 8, "reasoning": "fine"}`}
			}
			var i int
			if _, err := fmt.Sscanf(r.Last(), "Question %d", &i); err != nil {
				return llmtest.Reply{Content: "ready"} // the warm-up
			}
			return llmtest.Reply{Content: "an answer", Tokens: int64(100 * (i + 1))}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		for i := range 4 {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"t%d","category":"c","question":"Question %d"}`, i, i)}, 201, nil)
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"C","task_ids":["t0","t1","t2","t3"]}`}, 201, &col)
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},
			"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[%d]}`, p.ID, p.ID, col.ID)}, 201, &run)
		a.collectEvents(t, run.ID, "")

		type spread struct{ Mean, Median, Std, Min, Max, N float64 }
		type grades struct {
			Correct, Partial, Wrong, Ungraded int64
			Accuracy, Weighted                *float64
		}
		summary := func() (tokens, timeMs *spread, g grades) {
			t.Helper()
			var detail struct {
				Status  store.RunStatus
				Summary struct {
					Models []struct {
						TimeMs *spread `json:"time_ms"`
						Tokens *spread `json:"tokens"`
						Grades grades  `json:"grades"`
					} `json:"models"`
				} `json:"summary"`
			}
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &detail)
			if detail.Status != store.RunFinished || len(detail.Summary.Models) != 1 {
				t.Fatalf("run %+v", detail)
			}
			m := detail.Summary.Models[0]
			return m.Tokens, m.TimeMs, m.Grades
		}
		tokens, timeMs, g := summary()
		want := spread{Mean: 250, Median: 250, Std: math.Sqrt(12500), Min: 100, Max: 400, N: 4}
		if tokens == nil || math.Abs(tokens.Std-want.Std) > 1e-9 || (spread{tokens.Mean, tokens.Median, want.Std, tokens.Min, tokens.Max, tokens.N}) != want {
			t.Errorf("tokens %+v, want %+v", tokens, want)
		}
		if timeMs == nil || timeMs.N != 4 || timeMs.Min > timeMs.Median || timeMs.Median > timeMs.Max {
			t.Errorf("time %+v", timeMs)
		}
		if g.Ungraded != 4 || g.Correct+g.Partial+g.Wrong != 0 || g.Accuracy != nil || g.Weighted != nil {
			t.Errorf("grades before grading %+v", g)
		}
		page := func() *goquery.Document {
			t.Helper()
			_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
			return doc
		}
		cell := func(doc *goquery.Selection, sel string) string {
			return strings.TrimSpace(doc.Find(sel).First().Text())
		}
		doc := page()
		row := doc.Find(`[data-testid="time-tokens"] tr[data-measure="tokens"]`)
		if got := []string{cell(row, `[data-testid="n"]`), cell(row, `[data-testid="mean"]`), cell(row, `[data-testid="median"]`),
			cell(row, `[data-testid="std"]`), cell(row, `[data-testid="min"]`), cell(row, `[data-testid="max"]`)}; strings.Join(got, " ") != "4 250.0 250.0 111.8 100 400" {
			t.Errorf("page's tokens row %q, want 4 250.0 250.0 111.8 100 400", got)
		}
		if doc.Find(`[data-testid="time-tokens"] tr[data-measure="time_ms"]`).Length() != 1 {
			t.Errorf("page has no time row")
		}
		grading := doc.Find(`[data-testid="human-grades"] tbody tr`)
		if cell(grading, `[data-testid="grades-ungraded"]`) != "4" || cell(grading, `[data-testid="grades-accuracy"]`) != "–" {
			t.Errorf("page's grades before grading: %q", grading.Text())
		}
		// The per-model table keeps its first columns.
		var heads []string
		doc.Find(`[data-testid="per-model"] thead th:not([data-col])`).Each(func(_ int, s *goquery.Selection) { heads = append(heads, s.Text()) })
		if strings.Join(heads, "|") != "Model|Overall [95% CI]|Pass rate|Failed|Cost|Score per $" {
			t.Errorf("per-model columns %q", heads)
		}

		var items struct{ Items []struct{ ID int64 } }
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items", run.ID)}, 200, &items)
		if len(items.Items) != 4 {
			t.Fatalf("items %+v", items)
		}
		for i, grade := range []string{"correct", "partial", "wrong", "correct"} {
			a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/items/%d/grade", items.Items[i].ID), body: fmt.Sprintf(`{"grade":%q}`, grade)}, 200, nil)
		}
		// The last write wins: the fourth item becomes wrong.
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/items/%d/grade", items.Items[3].ID), body: `{"grade":"wrong"}`}, 200, nil)
		_, _, g = summary()
		if g.Correct != 1 || g.Partial != 1 || g.Wrong != 2 || g.Ungraded != 0 || g.Accuracy == nil || *g.Accuracy != 0.25 ||
			g.Weighted == nil || *g.Weighted != 0.375 {
			b, _ := json.Marshal(g)
			t.Errorf("grades after grading %s, want 1 correct, 1 partial, 2 wrong: accuracy 0.25, weighted 0.375", b)
		}
		grading = page().Find(`[data-testid="human-grades"] tbody tr`)
		if got := []string{cell(grading, `[data-testid="grades-correct"]`), cell(grading, `[data-testid="grades-partial"]`),
			cell(grading, `[data-testid="grades-wrong"]`), cell(grading, `[data-testid="grades-accuracy"]`), cell(grading, `[data-testid="grades-weighted"]`)}; strings.Join(got, " ") != "1 1 2 25.0% 37.5%" {
			t.Errorf("page's grades %q, want 1 1 2 25.0%% 37.5%%", got)
		}

		html := a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/export?format=html", run.ID)}, 200, nil)
		rep, err := goquery.NewDocumentFromReader(strings.NewReader(html))
		if err != nil {
			t.Fatal(err)
		}
		var tok []string
		rep.Find(`[data-testid="time-tokens"] tr`).Each(func(_ int, s *goquery.Selection) {
			if strings.TrimSpace(s.Find("td").Eq(1).Text()) == "Output tokens" {
				s.Find("td.n").Each(func(_ int, c *goquery.Selection) { tok = append(tok, c.Text()) })
			}
		})
		if strings.Join(tok, " ") != "4 250.0 250.0 111.8 100 400" {
			t.Errorf("report's tokens row %q", tok)
		}
		var gr []string
		rep.Find(`[data-testid="human-grades"] tbody td.n`).Each(func(_ int, c *goquery.Selection) { gr = append(gr, c.Text()) })
		if strings.Join(gr, " ") != "1 1 2 0 25.0% 37.5%" {
			t.Errorf("report's grades %q", gr)
		}
	})
}
