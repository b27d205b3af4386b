package handlers_test

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestCostSource: a provider's reported cost (usage.cost) is preferred over
// the price table. fake-small's calls report theirs, fake-large's do not
// (priced from the table), and the judge reports its own; each item says
// where its costs came from in the items API, the item API, the CSV export
// and the summary, and the run page says it per model.
func TestCostSource(t *testing.T) {
	const reported, judgeReported = 0.0125, 0.002
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			switch {
			case r.IsJudge():
				c := judgeReported
				return llmtest.Reply{Content: `{"score": 7, "reasoning": "ok"}`, Cost: &c}
			case r.Model == "fake-small" && !r.IsWarmup():
				c := reported
				return llmtest.Reply{Content: costAnswer, Cost: &c}
			}
			return llmtest.Reply{Content: costAnswer}
		})
		// Both models have prices: fake-small's reported cost wins over its table price.
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"prices":[
			{"model":"fake-small","input_per_mtok":1000,"output_per_mtok":1000},
			{"model":"fake-large","input_per_mtok":2000,"output_per_mtok":3000},
			{"model":"fake-judge","input_per_mtok":1,"output_per_mtok":1}]}`, a.fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"s-1","category":"c","question":"One question here?"}`}, 201, nil)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"s-2","category":"c","turns":["First turn?","Second turn now?"]}`}, 201, nil)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"S","task_ids":["s-1","s-2"]}`}, 201, &col)
		var run costRunReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(
			`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%[1]d,"model":"fake-small"},{"provider_id":%[1]d,"model":"fake-large"}],"collection_ids":[%d]}`,
			p.ID, col.ID)}, 201, &run)
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("run: %+v", r)
		}

		var items store.Page[runs.ItemRow]
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?per_page=100", run.ID)}, 200, &items)
		if len(items.Items) != 4 {
			t.Fatalf("%d items", len(items.Items))
		}
		turns := map[string]float64{"s-1": 1, "s-2": 2}
		for _, it := range items.Items {
			var wantUSD float64
			var want store.CostSource
			if it.Model == "fake-small" {
				wantUSD, want = reported*turns[it.TaskID], store.CostProvider
			} else {
				wantUSD, want = (float64(*it.PromptTokens)*2000+float64(*it.CompletionTokens)*3000)/1e6, store.CostPriceTable
			}
			if it.CostUSD == nil || math.Abs(*it.CostUSD-wantUSD) > 1e-12 || it.CostSource != want || it.JudgeCostSource != store.CostProvider {
				t.Errorf("%s on %s: cost %v from %q (judges from %q), want %g from %q", it.TaskID, it.Model, it.CostUSD, it.CostSource, it.JudgeCostSource, wantUSD, want)
			}
			var d runs.ItemDetail
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d", it.ID)}, 200, &d)
			if d.AnswerCostSource != want || d.JudgeCostSource != store.CostProvider || math.Abs(d.JudgeCostUSD-judgeReported) > 1e-12 {
				t.Errorf("item %d: answer from %q, judging %g from %q", it.ID, d.AnswerCostSource, d.JudgeCostUSD, d.JudgeCostSource)
			}
		}

		// The CSV export carries each item's source beside its cost.
		res, err := http.Get(a.srv.URL + fmt.Sprintf("/api/runs/%d/export?format=csv", run.ID))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(res.Body).ReadAll()
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		model, source, cost := slices.Index(rows[0], "model"), slices.Index(rows[0], "cost_source"), slices.Index(rows[0], "cost_usd")
		if source < 0 || len(rows) != 5 {
			t.Fatalf("CSV header %v, %d rows", rows[0], len(rows))
		}
		for _, r := range rows[1:] {
			want := map[string]string{"fake-small": "provider", "fake-large": "price_table"}[r[model]]
			if usd, _ := strconv.ParseFloat(r[cost], 64); r[source] != want || usd <= 0 {
				t.Errorf("CSV row of %s: cost %s from %q, want from %q", r[model], r[cost], r[source], want)
			}
		}

		// The summary says per model where its cost came from, and so does the page.
		var got handlers.RunJSON
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &got)
		sources := map[string]store.CostSource{}
		for _, pm := range got.Summary.PerModel {
			sources[pm.Model] = pm.CostSource
		}
		if sources["fake-small"] != store.CostProvider || sources["fake-large"] != store.CostPriceTable ||
			got.Summary.Overall.CostSource != store.CostMixed || got.Summary.Overall.JudgeCostSource != store.CostProvider {
			t.Errorf("summary sources: per model %v, overall %q, judges %q", sources, got.Summary.Overall.CostSource, got.Summary.Overall.JudgeCostSource)
		}
		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d/results", run.ID))
		var words []string
		doc.Find("[data-testid=per-model] [data-testid=cost-source]").Each(func(_ int, s *goquery.Selection) {
			words = append(words, strings.TrimSpace(s.Text()))
		})
		if strings.Join(words, ",") != "reported by provider,from prices" {
			t.Errorf("per-model cost sources on the page: %v", words)
		}
		if got := doc.Find("[data-testid=judge-cost-source]").Text(); !strings.Contains(got, "judging cost reported by provider") {
			t.Errorf("judging cost source: %q", got)
		}
	})
}
