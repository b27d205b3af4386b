package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestEvaluationAPI drives the evaluation endpoints by their exact paths:
// styles with versions, judges, a panel run with checks and prices, its
// scores, grades and aggregates.
func TestEvaluationAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				if strings.Contains(r.Messages[0].Content, "Lenient") {
					return llmtest.Reply{Content: `{"accuracy": {"score": 5, "reasoning": "fine"}, "depth": {"score": 3, "reasoning": "ok"}}`}
				}
				return llmtest.Reply{Content: `{"accuracy": {"score": 3, "reasoning": "meh"}, "depth": {"score": 1, "reasoning": "thin"}}`}
			}
			if r.Model == "cheap" {
				return llmtest.Reply{Content: "Paris", Tokens: 1}
			}
			return llmtest.Reply{Content: "It is Lyon", Tokens: 3}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,
			"prices":[{"model":"cheap","input_per_mtok":1,"output_per_mtok":1},{"model":"dear","input_per_mtok":10,"output_per_mtok":30}]}`, a.fake.URL)}, 201, &p)
		if len(p.Prices) != 2 || p.Prices[1].OutputPerMTok != 30 {
			t.Fatalf("provider prices %+v", p.Prices)
		}
		a.do(t, call{method: "POST", path: "/api/providers", body: `{"name":"Bad","base_url":"http://x","prices":[{"model":"m","input_per_mtok":-1,"output_per_mtok":1}]}`}, 422, nil)

		// Styles: create, refuse bad ones, a PUT makes version 2 under the same id.
		var style store.JudgementStyle
		a.do(t, call{method: "POST", path: "/api/judgement-styles", body: `{"name":"geo","scale_min":0,"scale_max":5,
			"metrics":[{"name":"accuracy","weight":3},{"name":"depth","description":"detail","weight":1}]}`}, 201, &style)
		if style.Version != 1 || !strings.Contains(style.PromptTemplate, "{{.Question}}") || len(style.Metrics) != 2 {
			t.Fatalf("style %+v", style)
		}
		got := a.do(t, call{method: "POST", path: "/api/judgement-styles", body: `{"name":"x","prompt_template":"{{.Question}}"}`}, 422, nil)
		if !strings.Contains(got, "prompt_template") {
			t.Errorf("bad template: %s", got)
		}
		// A template that would render without bound is refused on save.
		got = a.do(t, call{method: "POST", path: "/api/judgement-styles", body: `{"name":"x","prompt_template":"{{range 10000000}}xxxxxxxxxxxxxxxxxxxx{{end}}{{.Response}}"}`}, 422, nil)
		if !strings.Contains(got, "prompt_template") || !strings.Contains(got, "counts to 1000 at most") {
			t.Errorf("unbounded template: %s", got)
		}
		var v2 store.JudgementStyle
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/judgement-styles/%d", style.ID), body: `{"name":"geo","scale_min":0,"scale_max":5,
			"metrics":[{"name":"accuracy","weight":3},{"name":"depth","weight":1}]}`}, 200, &v2)
		if v2.ID != style.ID || v2.Version != 2 {
			t.Fatalf("PUT gave %+v, want version 2 of style %d", v2, style.ID)
		}
		var versions []store.JudgementStyle
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/judgement-styles/%d/versions", style.ID)}, 200, &versions)
		if len(versions) != 2 {
			t.Fatalf("versions %+v", versions)
		}

		// Judges.
		var strict, lenient store.Judge
		a.do(t, call{method: "POST", path: "/api/judges", body: fmt.Sprintf(`{"name":"Strict","provider_id":%d,"model":"fake-judge",
			"personality_name":"Strict examiner","personality_description":"Deducts for every slip.","style_id":%d}`, p.ID, style.ID)}, 201, &strict)
		a.do(t, call{method: "POST", path: "/api/judges", body: fmt.Sprintf(`{"name":"Lenient","provider_id":%d,"model":"fake-judge",
			"personality_name":"Lenient teacher","style_id":%d}`, p.ID, style.ID)}, 201, &lenient)
		a.do(t, call{method: "POST", path: "/api/judges", body: `{"name":"x","provider_id":999,"model":"m"}`}, 422, nil)
		var judges []store.Judge
		a.do(t, call{method: "GET", path: "/api/judges"}, 200, &judges)
		if len(judges) != 2 || judges[1].PersonalityName != "Strict examiner" {
			t.Fatalf("judges %+v", judges)
		}

		// Tasks with the new fields.
		var task store.Task
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"capital","category":"geo","usecase":"travel","question":"Capital of France?",
			"reference":"Paris","tags":["europe"," europe ",""],"checks":[{"type":"exact_match"},{"type":"regex","value":"(?i)paris"}],
			"judge_instructions":"Only the city counts."}`}, 201, &task)
		if task.Reference != "Paris" || len(task.Tags) != 1 || len(task.Checks) != 2 || task.UseCase != "travel" {
			t.Fatalf("task %+v", task)
		}
		got = a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"bad","category":"c","question":"q","checks":[{"type":"regex","value":"("}]}`}, 422, nil)
		if !strings.Contains(got, "checks[0]") {
			t.Errorf("bad regex check: %s", got)
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"G","task_ids":["capital"]}`}, 201, &col)

		// A panel run with settings and repeats.
		body := fmt.Sprintf(`{"judge_ids":[%d,%d],"targets":[{"provider_id":%d,"model":"cheap","settings":{"temperature":0}},
			{"provider_id":%d,"model":"dear","settings":{"max_tokens":50}}],"collection_ids":[%d],"repeats":2}`, strict.ID, lenient.ID, p.ID, p.ID, col.ID)
		a.do(t, call{method: "POST", path: "/api/runs", body: strings.Replace(body, `"repeats":2`, `"repeats":0.5`, 1)}, 400, nil)
		a.do(t, call{method: "POST", path: "/api/runs", body: strings.Replace(body, `"temperature":0`, `"temperature":7`, 1)}, 422, nil)
		var run struct {
			ID     int64            `json:"id"`
			Judges []store.RunJudge `json:"judges"`
		}
		a.do(t, call{method: "POST", path: "/api/runs", body: body}, 201, &run)
		if len(run.Judges) != 2 || run.Judges[0].StyleVersion != 2 || run.Judges[0].PersonalityName != "Strict examiner" {
			t.Fatalf("run judges %+v", run.Judges)
		}
		a.collectEvents(t, run.ID, "")

		var detail struct {
			Status  store.RunStatus `json:"status"`
			Summary struct {
				PerModel    []store.ModelStats `json:"per_model"`
				Models      []runs.ModelScore  `json:"models"`
				BestOverall int64              `json:"best_overall_target_id"`
				BestValue   int64              `json:"best_value_target_id"`
				Best        runs.Best          `json:"best"`
				Breakdown   store.Breakdown    `json:"breakdown"`
			} `json:"summary"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &detail)
		if detail.Status != store.RunFinished || len(detail.Summary.PerModel) != 2 {
			t.Fatalf("run %+v", detail)
		}
		cheap, dear := detail.Summary.PerModel[0], detail.Summary.PerModel[1]
		// Both judges score the same whatever the answer, so judge metrics tie; the checks decide:
		// "Paris" passes exact_match and regex, "It is Lyon" neither, so cheap's overall is higher.
		// With 2 scored items each, too few to pick from, no model is named best.
		if detail.Summary.BestOverall != 0 || detail.Summary.BestValue != 0 || !strings.Contains(detail.Summary.Best.Note, "not enough data") {
			t.Errorf("best overall %d, best value %d, note %q; want none with 2 items each", detail.Summary.BestOverall,
				detail.Summary.BestValue, detail.Summary.Best.Note)
		}
		if m := detail.Summary.Models; len(m) != 2 || m[0].Overall == nil || m[1].Overall == nil || *m[0].Overall <= *m[1].Overall {
			t.Errorf("overall scores %+v: cheap should lead", m)
		}
		if cheap.CostUSD == nil || dear.CostUSD == nil || *dear.CostUSD <= *cheap.CostUSD {
			t.Errorf("costs cheap %v dear %v", cheap.CostUSD, dear.CostUSD)
		}
		if cheap.Items != 2 || cheap.AvgScore == nil || *cheap.AvgScore != 3.5 { // mean of strict (3·3+1)/4 = 2.5 and lenient (3·5+3)/4 = 4.5
			t.Errorf("cheap stats %+v", cheap.Stats)
		}

		// Scores: paginated and filtered by model, judge and metric.
		var scores store.Page[store.ScoreView]
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/scores?per_page=5", run.ID)}, 200, &scores)
		// 4 items × (2 judges × 3 metrics + 2 checks) = 32
		if scores.Total != 32 || len(scores.Items) != 5 {
			t.Fatalf("scores total %d, page %d", scores.Total, len(scores.Items))
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/scores?model=dear&judge=Strict&metric=accuracy", run.ID)}, 200, &scores)
		if scores.Total != 2 || scores.Items[0].Score != 3 || scores.Items[0].Judge != "Strict" || scores.Items[0].TaskID != "capital" {
			t.Fatalf("filtered scores %+v", scores)
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/scores?judge=check:exact_match&model=cheap", run.ID)}, 200, &scores)
		if scores.Total != 2 || scores.Items[0].Score != 1 || scores.Items[0].Metric != "check_exact_match" {
			t.Fatalf("check scores %+v", scores)
		}
		a.do(t, call{method: "GET", path: "/api/runs/9999/scores"}, 404, nil)

		// Grades: last write wins; bad grades are refused.
		item := scores.Items[0].ItemID
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/items/%d/grade", item), body: `{"grade":"wrong"}`}, 200, nil)
		var g store.Grade
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/items/%d/grade", item), body: `{"grade":"correct","notes":"exact"}`}, 200, &g)
		if g.Grade != "correct" || g.Notes != "exact" {
			t.Fatalf("grade %+v", g)
		}
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/items/%d/grade", item), body: `{"grade":"maybe"}`}, 422, nil)
		a.do(t, call{method: "PUT", path: "/api/items/99999/grade", body: `{"grade":"correct"}`}, 404, nil)
		var agreement struct {
			Judges []struct {
				Judge string `json:"judge"`
				Human *struct {
					N int `json:"n"`
				} `json:"human"`
			} `json:"judges"`
			Pairs []struct {
				Agreement *struct{ N int } `json:"agreement"`
			} `json:"pairs"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/agreement", run.ID)}, 200, &agreement)
		if len(agreement.Judges) != 2 || agreement.Judges[0].Human == nil || agreement.Judges[0].Human.N != 1 ||
			len(agreement.Pairs) != 1 || agreement.Pairs[0].Agreement == nil || agreement.Pairs[0].Agreement.N != 4 {
			t.Errorf("agreement %+v", agreement)
		}

		// Re-run with the same settings.
		var re struct {
			ID          int64  `json:"id"`
			SourceRunID *int64 `json:"source_run_id"`
			Repeats     int    `json:"repeats"`
		}
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/runs/%d/rerun", run.ID)}, 201, &re)
		if re.SourceRunID == nil || *re.SourceRunID != run.ID || re.Repeats != 2 {
			t.Fatalf("re-run %+v", re)
		}
		a.collectEvents(t, re.ID, "")
	})
}

// TestOpenRouterPrices: listing an OpenRouter provider's models picks up its
// published prices for models without a price set by hand.
func TestOpenRouterPrices(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		a.fake.Pricing = map[string][2]string{"fake-small": {"0.0000005", "0.0000015"}, "fake-large": {"-1", "-1"}, "fake-judge": {"0.000001", "0.000002"}}
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"OR","type":"OPENROUTER","base_url":%q,
			"prices":[{"model":"fake-judge","input_per_mtok":9,"output_per_mtok":9}]}`, a.fake.URL)}, 201, &p)
		var models []struct {
			ID            string   `json:"id"`
			InputPerMTok  *float64 `json:"input_per_mtok"`
			OutputPerMTok *float64 `json:"output_per_mtok"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/providers/%d/models", p.ID)}, 200, &models)
		prices := map[string][2]float64{}
		for _, m := range models {
			if m.InputPerMTok != nil {
				prices[m.ID] = [2]float64{*m.InputPerMTok, *m.OutputPerMTok}
			}
		}
		// 0.0000005 USD/token = 0.5 USD per million; the variable-priced model has none; the manual price wins.
		if prices["fake-small"] != [2]float64{0.5, 1.5} || len(prices) != 2 || prices["fake-judge"] != [2]float64{9, 9} {
			t.Errorf("prices %v", prices)
		}
		var got store.Provider
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/providers/%d", p.ID)}, 200, &got)
		if len(got.Prices) != 2 || got.Prices[1].Model != "fake-small" || got.Prices[1].Source != "OPENROUTER" {
			t.Errorf("stored prices %+v", got.Prices)
		}
	})
}
