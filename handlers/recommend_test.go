package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// recommendRuns stores a finished run on use case "support" (tasks s1–s3)
// where "good" scores 90, "cheap" 80 for a tenth of the price, and "thin"
// answered one task only.
func recommendRuns(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "prov", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	tasks := []string{"s1", "s2", "s3"}
	for _, k := range tasks {
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: k, Category: "billing", Question: "q " + k, UseCase: "support"}); err != nil {
			t.Fatal(err)
		}
	}
	usd := func(v float64) *float64 { return &v }
	var res []storetest.ItemResult
	for _, k := range tasks {
		res = append(res,
			storetest.ItemResult{Model: "good", Task: k, Overall: 0.9, TimeMs: 800, CostUSD: usd(0.01), TokensPerS: 40},
			storetest.ItemResult{Model: "cheap", Task: k, Overall: 0.8, TimeMs: 300, CostUSD: usd(0.001), TokensPerS: 90})
	}
	res = append(res, storetest.ItemResult{Model: "thin", Task: "s1", Overall: 1, TimeMs: 100, CostUSD: usd(0.0001), TokensPerS: 99})
	storetest.FixedRun(t, st, "support run", p.ID, []string{"good", "cheap", "thin"}, tasks, res)
}

func TestRecommendAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		recommendRuns(t, st)
		a := newApp(t, st, nil)
		var rec struct {
			Models []map[string]any `json:"models"`
		}
		a.do(t, call{method: "GET", path: "/api/recommend?usecase=support&min_items=3&cost_priority=high"}, 200, &rec)
		if len(rec.Models) != 3 {
			t.Fatalf("models %+v", rec.Models)
		}
		good, cheap, thin := rec.Models[0], rec.Models[1], rec.Models[2]
		for _, field := range []string{"provider", "model", "overall", "overall_ci", "cost_per_1k_usd", "median_latency_ms", "tokens_per_s", "n", "pareto", "reason", "eligible"} {
			if _, ok := good[field]; !ok {
				t.Errorf("reply lacks %q: %v", field, good)
			}
		}
		if good["model"] != "good" || good["provider"] != "prov" || good["overall"].(float64) < 89.99 || good["overall"].(float64) > 90.01 ||
			good["cost_per_1k_usd"].(float64) < 9.99 || good["cost_per_1k_usd"].(float64) > 10.01 || good["median_latency_ms"] != 800.0 ||
			good["n"] != 3.0 || good["pareto"] != true || good["reason"] != "best overall" {
			t.Errorf("good %v", good)
		}
		if cheap["model"] != "cheap" || cheap["pareto"] != true || cheap["reason"] != "on the Pareto front: no other model is both better and cheaper" {
			t.Errorf("cheap %v", cheap)
		}
		if thin["model"] != "thin" || thin["eligible"] != false || thin["pareto"] != false || thin["reason"] != "not enough data: 1 scored item (at least 3 needed)" {
			t.Errorf("thin %v", thin)
		}
		// A budget between the two: the cheap one is kept, and first.
		a.do(t, call{method: "GET", path: "/api/recommend?usecase=support&min_items=3&budget_usd_per_1k=2"}, 200, &rec)
		if rec.Models[0]["model"] != "cheap" || rec.Models[0]["reason"] != "best overall within budget" {
			t.Errorf("within a budget: %v", rec.Models[0])
		}
		for _, m := range rec.Models[1:] {
			if m["model"] == "good" && (m["eligible"] != false || m["reason"] != "over budget: $10.00 per 1k tasks (budget $2.00)") {
				t.Errorf("over budget: %v", m)
			}
		}
		for path, want := range map[string]string{
			"/api/recommend?usecase=support&budget_usd_per_1k=abc": "budget_usd_per_1k must be a number",
			"/api/recommend?usecase=support&min_overall=-3":        "min_overall must be a number, 0 or more",
			"/api/recommend?usecase=support&min_items=0":           "min_items must be a whole number",
			"/api/recommend": "name a use case (usecase) or a category (category)",
			"/api/recommend?usecase=support&category=billing":    "not both",
			"/api/recommend?usecase=support&cost_priority=cheap": "cost_priority: must be one of low, balanced, high",
		} {
			if body := a.do(t, call{method: "GET", path: path}, 400, nil); !strings.Contains(body, want) {
				t.Errorf("%s: %s, want %q", path, body, want)
			}
		}
		if body := a.do(t, call{method: "GET", path: "/api/recommend?usecase=nobody"}, 404, nil); !strings.Contains(body, `use case \"nobody\" not found`) {
			t.Errorf("unknown use case: %s", body)
		}
	})
}

func TestRecommendPage(t *testing.T) {
	st := storetest.SQLite(t)
	recommendRuns(t, st)
	a := newApp(t, st, nil)
	res, doc, _ := a.get(t, "/recommend")
	if res.StatusCode != 200 || doc.Find("nav a[aria-current=page]").Text() != "Recommend" {
		t.Fatalf("page: %d, current nav %q", res.StatusCode, doc.Find("nav a[aria-current=page]").Text())
	}
	if doc.Find("[data-testid=recommend-usecase] option[value=support]").Length() != 1 || doc.Find("[data-testid=recommend-category] option[value=billing]").Length() != 1 {
		t.Errorf("the pickers do not offer the use case and its category")
	}
	_, doc, _ = a.get(t, "/recommend?usecase=support&min_items=3&cost_priority=balanced")
	rows := doc.Find("[data-testid=recommend-row]")
	if got := attrs(rows, "data-model"); strings.Join(got, ",") != "good,cheap,thin" {
		t.Errorf("rows %v", got)
	}
	if got := texts(doc.Find("[data-testid=recommend-reason]")); len(got) != 3 || got[2] != "not enough data: 1 scored item (at least 3 needed)" {
		t.Errorf("reasons %q", got)
	}
	if doc.Find("[data-testid=recommend-pareto]").Length() != 2 || doc.Find("[data-testid=recommend-chart] svg").Length() != 1 {
		t.Errorf("pareto badges %d, chart %d", doc.Find("[data-testid=recommend-pareto]").Length(), doc.Find("[data-testid=recommend-chart] svg").Length())
	}
	if got := doc.Find("select[name=cost_priority] option[selected]").AttrOr("value", ""); got != "balanced" {
		t.Errorf("the form forgot its cost priority: %q", got)
	}
	// Through HTMX the answer alone comes back; a bad value says why, with a 400.
	res, doc = a.getHX(t, "/recommend?usecase=support&budget_usd_per_1k=lots")
	if res.StatusCode != http.StatusBadRequest || doc.Find("form").Length() != 0 ||
		!strings.Contains(doc.Find("[data-testid=recommend-error]").Text(), `budget_usd_per_1k must be a number, 0 or more, got "lots"`) {
		t.Errorf("bad budget: %d %q", res.StatusCode, doc.Find("[data-testid=recommend-error]").Text())
	}
}

// A use case without runs falls back on the providers' model lists; a
// provider that cannot list them is named with its reason (not only on
// hover), in a sentence without stray spaces.
func TestRecommendPageNamesProvidersThatFail(t *testing.T) {
	st := storetest.SQLite(t)
	recommendRuns(t, st)
	a := newApp(t, st, nil)
	a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id": "new-1", "category": "c", "question": "q", "usecase": "fresh"}`}, 201, nil)
	_, doc, _ := a.get(t, "/recommend?usecase=fresh")
	got := strings.Join(strings.Fields(doc.Find("[data-testid=recommend-provider-errors]").Text()), " ")
	if !strings.HasPrefix(got, "Could not list the models of prov (") || !strings.HasSuffix(got, ").") || strings.Contains(got, " .") || strings.Contains(got, " ,") {
		t.Errorf("provider errors %q", got)
	}
}
