package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"tribunal/store"
)

// TestItemPageFromTable filters a finished run's items table by model,
// clicks a row, lands on the item's page, follows "next" within the filter
// and grades that item in place.
func TestItemPageFromTable(t *testing.T) {
	chromePath(t)
	a, st := startAppWithStore(t, gradingScript)

	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": a.fake.URL}, &prov, 201)
	var keys []string
	for _, q := range gradingQuestions {
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": q.key, "category": "math", "question": q.question}, nil, 201)
		keys = append(keys, q.key)
	}
	var col struct{ ID int64 }
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Items", "task_ids": keys}, &col, 201)
	var run struct {
		ID     int64
		Status string
	}
	apiCall(t, a, "POST", "/api/runs", map[string]any{"name": "Item run", "judge": map[string]any{"provider_id": prov.ID, "model": "fake-judge"},
		"targets":        []map[string]any{{"provider_id": prov.ID, "model": "fake-small"}, {"provider_id": prov.ID, "model": "fake-large"}},
		"collection_ids": []int64{col.ID}}, &run, 201)
	waitFinished(t, a, run.ID)

	b := newBrowser(t, a.URL)
	b.open(fmt.Sprintf("/runs/%d", run.ID))
	b.choose("[data-testid=items-model-filter]", "fake-large")
	b.waitFor("the table filtered to fake-large", `(() => {
		const rows = [...document.querySelectorAll("[data-testid=item-row]")];
		return rows.length === 3 && rows.every(r => r.innerText.includes("fake-large"));
	})()`, 10*time.Second)
	// A click anywhere on the row, not only on its link, opens the item.
	b.click("[data-testid=item-row] td.clip-cell")
	b.waitFor("the item page", `document.querySelector("[data-testid=item-page]") && location.search.includes("model=fake-large")`, 10*time.Second)
	itemID := func() int64 {
		id, _ := strconv.ParseInt(mustEval[string](b, "item id", `document.querySelector("[data-testid=item-page]").dataset.itemId`), 10, 64)
		return id
	}
	first := itemID()
	if text := b.text("[data-testid=item-page]"); !strings.Contains(text, "The answer to «") || !strings.Contains(text, "fake-large") {
		t.Errorf("the item page does not show the answer: %s", text)
	}

	b.click("[data-testid=item-next]")
	b.waitFor("the next item", fmt.Sprintf(`document.querySelector("[data-testid=item-page]") && document.querySelector("[data-testid=item-page]").dataset.itemId !== "%d"`, first), 10*time.Second)
	second := itemID()
	if h := b.text("h1"); !strings.Contains(h, "fake-large") || second <= first {
		t.Errorf("next went from %d to %d (%s), want the next fake-large item", first, second, h)
	}
	if prev := mustEval[string](b, "previous link", `new URL(document.querySelector("[data-testid=item-prev]").href).pathname`); prev != fmt.Sprintf("/items/%d", first) {
		t.Errorf("previous links to %q, want item %d", prev, first)
	}
	if pos := b.text("[data-testid=item-position]"); !strings.HasPrefix(pos, "the run's items") {
		t.Errorf("position %q, want the run's items", pos)
	}

	b.typeInto("[data-testid=item-grade-notes]", "off by one")
	b.click("[data-testid=item-grade-wrong]")
	b.waitFor("the grade saved", `document.querySelector("[data-testid=item-grade-current]").innerText.includes("wrong")`, 10*time.Second)
	g, err := st.ItemGrade(t.Context(), second)
	if err != nil || g == nil || g.Grade != store.GradeWrong || g.Notes != "off by one" {
		t.Fatalf("stored grade of item %d: %+v, %v", second, g, err)
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
