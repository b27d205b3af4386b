package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestItemsTablePager: the items table's pager links its neighbours by
// keyset cursor with their page numbers, its ends by number (the last
// read from the end), and a page reached by cursor alone shows its items
// without a number; the filter rides along.
func TestItemsTablePager(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 120)
		var res []storetest.ItemResult
		for i := range keys {
			keys[i] = fmt.Sprintf("t%03d", i)
			if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: keys[i], Category: "c", Question: "q " + keys[i]}); err != nil {
				t.Fatal(err)
			}
			res = append(res, storetest.ItemResult{Model: "a", Task: keys[i], Overall: 0.5})
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"a", "b"}, keys, res)
		a := newApp(t, st, nil)
		all, err := st.RunItems(ctx, run.ID, store.ItemFilter{Model: "a", PerPage: 500})
		if err != nil {
			t.Fatal(err)
		}
		id := func(i int) int64 { return all.Items[i].ID }
		base := fmt.Sprintf("/runs/%d/items", run.ID)

		doc := itemsPage(t, a, base+"?model=a")
		checkItemsPage(t, doc, "page 1", id(0), id(49), "120 in all · page 1 of 3")
		next := pagerLink(doc, "Next ›")
		if want := fmt.Sprintf("%s?after=%d&model=a&page=2", base, id(49)); next != want {
			t.Errorf("next: %q, want %q", next, want)
		}
		if pagerLink(doc, "‹ Prev") != "" || pagerLink(doc, "« First") != "" {
			t.Error("the first page links back")
		}

		doc = itemsPage(t, a, next)
		checkItemsPage(t, doc, "page 2", id(50), id(99), "120 in all · page 2 of 3")
		prev := pagerLink(doc, "‹ Prev")
		if want := fmt.Sprintf("%s?before=%d&model=a&page=1", base, id(50)); prev != want {
			t.Errorf("prev: %q, want %q", prev, want)
		}
		if v, _ := doc.Find("#items-cursor").Attr("value"); v != fmt.Sprint(id(49)) || doc.Find("#items-cursor").AttrOr("name", "") != "after" {
			t.Errorf("the live refresh keeps no cursor: %q", v)
		}
		checkItemsPage(t, itemsPage(t, a, prev), "back to page 1", id(0), id(49), "120 in all · page 1 of 3")

		last := pagerLink(doc, "Last »")
		if want := fmt.Sprintf("%s?model=a&page=3", base); last != want {
			t.Errorf("last: %q, want %q", last, want)
		}
		doc = itemsPage(t, a, last)
		checkItemsPage(t, doc, "page 3", id(100), id(119), "120 in all · page 3 of 3")
		if pagerLink(doc, "Next ›") != "" || pagerLink(doc, "Last »") != "" {
			t.Error("the last page links on")
		}

		// By cursor alone (an item page's way back): its items, no number.
		doc = itemsPage(t, a, fmt.Sprintf("%s?model=a&after=%d", base, id(9)))
		checkItemsPage(t, doc, "after the tenth", id(10), id(59), "120 in all")
		if want := fmt.Sprintf("%s?after=%d&model=a", base, id(59)); pagerLink(doc, "Next ›") != want {
			t.Errorf("next of a page without a number: %q, want %q", pagerLink(doc, "Next ›"), want)
		}
	})
}

func itemsPage(t *testing.T, a *app, path string) *goquery.Document {
	t.Helper()
	res, doc, body := a.get(t, path)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	return doc
}

// checkItemsPage checks the table's first and last rows and the pager's words.
func checkItemsPage(t *testing.T, doc *goquery.Document, name string, first, last int64, words string) {
	t.Helper()
	rows := doc.Find("[data-testid=item-row]")
	if got := [2]string{rows.First().AttrOr("data-item-id", ""), rows.Last().AttrOr("data-item-id", "")}; got != [2]string{fmt.Sprint(first), fmt.Sprint(last)} {
		t.Errorf("%s: rows %v, want %d…%d", name, got, first, last)
	}
	if got := strings.Join(strings.Fields(doc.Find(".pagination .muted").Text()), " "); got != words {
		t.Errorf("%s: pager says %q, want %q", name, got, words)
	}
}

// pagerLink is the pager's link labelled label ("" when disabled).
func pagerLink(doc *goquery.Document, label string) string {
	var href string
	doc.Find(".pagination a").Each(func(_ int, a *goquery.Selection) {
		if a.Text() == label {
			href = a.AttrOr("href", "")
		}
	})
	return href
}
