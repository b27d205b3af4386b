package handlers_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestUseCaseTotalsInSummary: a run over two use cases has, in its summary
// JSON, each use case's totals per target above its categories, with the
// answers' cost; the run page and the HTML report show them as rows.
func TestUseCaseTotalsInSummary(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		p := taskBenchFixture(t, a)
		var run struct {
			ID      int64
			Summary *runs.Summary
		}
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge": {"provider_id": %d, "model": "fake-judge"},
			"targets": [{"provider_id": %d, "model": "fake-small"}], "usecases": ["support", "sales"]}`, p.ID, p.ID)}, 201, &run)
		a.waitRunDone(t, run.ID)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
		ucs := run.Summary.UseCases
		if len(ucs) != 2 || ucs[0].UseCase != "sales" || ucs[1].UseCase != "support" {
			t.Fatalf("use cases: %+v", ucs)
		}
		for _, u := range ucs {
			if len(u.Targets) != 1 || len(u.Categories) != 2 {
				t.Fatalf("%s: %+v", u.UseCase, u)
			}
			tot := u.Targets[0]
			var items, scored int64
			var cost float64
			for _, c := range u.Categories {
				g := c.Targets[0]
				if g.CostUSD == nil || *g.CostUSD <= 0 {
					t.Fatalf("%s / %s has no cost: %+v", u.UseCase, c.Category, g)
				}
				items, scored, cost = items+g.Items, scored+g.Scored, cost+*g.CostUSD
			}
			if tot.Items != 2 || tot.Items != items || tot.Scored != scored || tot.CostUSD == nil || math.Abs(*tot.CostUSD-cost) > 1e-12 {
				t.Errorf("%s total %+v, categories sum to %d items, %d scored, $%v", u.UseCase, tot, items, scored, cost)
			}
		}

		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		table := doc.Find("[data-testid=per-category]")
		if n := table.Find("[data-testid=usecase-total]").Length(); n != 2 {
			t.Errorf("run page: %d use case rows, want 2", n)
		}
		if n := table.Find("[data-testid=category-row]").Length(); n != 4 {
			t.Errorf("run page: %d category rows, want 4", n)
		}
		if first := strings.TrimSpace(table.Find("[data-testid=usecase-total] th").First().Text()); first != "sales" {
			t.Errorf("first use case row %q", first)
		}
		_, _, body := a.get(t, fmt.Sprintf("/api/runs/%d/export?format=html", run.ID))
		if !strings.Contains(body, `data-testid="per-usecase"`) || !strings.Contains(body, "<th>support</th>") {
			t.Errorf("the HTML report has no use case totals")
		}
	})
}
