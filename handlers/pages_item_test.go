package handlers_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// evilAnswer is what model "evil" answers: HTML and a javascript: link
// around some Markdown.
const evilAnswer = "<img src=x onerror=alert(1)> **bold** [x](javascript:alert(1)) [ok](https://example.com)"

func itemScript(r llmtest.ChatRequest) llmtest.Reply {
	if r.IsJudge() {
		return llmtest.Reply{Content: `{"score": 7, "reasoning": "<script>alert(2)</script> fine"}`}
	}
	if r.Model == "evil" {
		return llmtest.Reply{Content: evilAnswer}
	}
	return llmtest.Reply{Content: "plain answer"}
}

// itemRun runs three tasks on models "evil" and "plain" with one judge and
// returns the run's id and evil's items in id order.
func itemRun(t *testing.T, a *app) (int64, []store.ItemView) {
	t.Helper()
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
	for i := range 3 {
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(
			`{"task_id":"i-%d","category":"math","question":"What is %d+%d?","reference":"%d","excellent":"exactly %d","incorrect_answer_direction":"a <b>wrong</b> sum"}`,
			i, i, i, 2*i, 2*i)}, 201, nil)
	}
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"I","task_ids":["i-0","i-1","i-2"]}`}, 201, &col)
	var run runReply
	a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(
		`{"name":"Items","judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"evil"},{"provider_id":%d,"model":"plain"}],"collection_ids":[%d]}`,
		p.ID, p.ID, p.ID, col.ID)}, 201, &run)
	a.collectEvents(t, run.ID, "")
	var items store.Page[store.ItemView]
	a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?model=evil", run.ID)}, 200, &items)
	if len(items.Items) != 3 {
		t.Fatalf("%d items of evil, want 3", len(items.Items))
	}
	return run.ID, items.Items
}

func attr(s *goquery.Selection, name string) string {
	v, _ := s.Attr(name)
	return v
}

func TestItemPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, itemScript)
		runID, evil := itemRun(t, a)
		first, second, last := evil[0].ID, evil[1].ID, evil[2].ID

		// The run's items table, filtered, links each row to its item with the filter.
		res, doc, _ := a.get(t, fmt.Sprintf("/runs/%d?model=evil", runID))
		if res.StatusCode != 200 {
			t.Fatalf("run page: %d", res.StatusCode)
		}
		rows := doc.Find("[data-testid=item-row]")
		if rows.Length() != 3 {
			t.Fatalf("%d rows in the filtered table, want 3", rows.Length())
		}
		if got, want := attr(rows.First().Find("a[data-testid=item-link]"), "href"), fmt.Sprintf("/items/%d?model=evil", first); got != want {
			t.Errorf("first row links to %q, want %q", got, want)
		}

		res, doc, body := a.get(t, fmt.Sprintf("/items/%d?model=evil", first))
		if res.StatusCode != 200 {
			t.Fatalf("item page: %d %s", res.StatusCode, body)
		}
		answer := doc.Find("[data-testid=item-answer]")
		if answer.Find("strong").Text() != "bold" {
			t.Errorf("the answer's Markdown is not rendered: %s", goquery.NewDocumentFromNode(answer.Nodes[0]).Text())
		}
		doc.Find("[data-testid=item-page] *").Each(func(_ int, el *goquery.Selection) {
			for _, at := range el.Nodes[0].Attr {
				if strings.HasPrefix(at.Key, "on") || strings.HasPrefix(strings.TrimSpace(at.Val), "javascript:") {
					t.Errorf("<%s %s=%q> on the page", goquery.NodeName(el), at.Key, at.Val)
				}
			}
			if goquery.NodeName(el) == "img" || goquery.NodeName(el) == "script" && strings.Contains(el.Text(), "alert") {
				t.Errorf("an injected <%s> on the page", goquery.NodeName(el))
			}
		})
		if ok := answer.Find(`a[href="https://example.com"]`); attr(ok, "rel") != "noopener noreferrer" {
			t.Errorf("a safe link lost its rel: %q", attr(ok, "rel"))
		}
		if !strings.Contains(doc.Find("[data-testid=item-references]").Text(), "a <b>wrong</b> sum") {
			t.Error("the incorrect-answer direction is missing or not shown as text")
		}
		if s := doc.Find("[data-testid=judge-verdict]"); s.Length() != 1 || s.Find("[data-testid=judge-score]").Text() != "7.00/10" ||
			!strings.Contains(s.Find("[data-testid=judge-prompt]").Text(), "**bold**") || !strings.Contains(s.Find("[data-testid=judge-raw]").Text(), `"score": 7`) {
			t.Errorf("judge verdict: %q", s.Text())
		}

		// Previous and next walk the filtered list; the back link keeps the filter.
		if doc.Find("[data-testid=item-prev]").Length() != 0 {
			t.Error("the first item has a previous link")
		}
		if got, want := attr(doc.Find("[data-testid=item-next]").First(), "href"), fmt.Sprintf("/items/%d?model=evil", second); got != want {
			t.Errorf("next: %q, want %q", got, want)
		}
		if got := strings.Join(strings.Fields(doc.Find("[data-testid=item-position]").First().Text()), " "); got != "the run's items · evil" {
			t.Errorf("position %q", got)
		}
		if got, want := attr(doc.Find("[data-testid=item-back]"), "href"), fmt.Sprintf("/runs/%d?model=evil#items", runID); got != want {
			t.Errorf("back: %q, want %q", got, want)
		}
		// Further on, the back link opens the items table at the item, by cursor.
		_, doc, _ = a.get(t, fmt.Sprintf("/items/%d?model=evil", second))
		if got, want := attr(doc.Find("[data-testid=item-back]"), "href"), fmt.Sprintf("/runs/%d?after=%d&model=evil#items", runID, first); got != want {
			t.Errorf("back from the second item: %q, want %q", got, want)
		}
		// An item outside the filter says so.
		_, doc, _ = a.get(t, fmt.Sprintf("/items/%d?model=evil&status=FAILED", second))
		if got := strings.Join(strings.Fields(doc.Find("[data-testid=item-position]").First().Text()), " "); got != "not in the run's items · Failed · evil" {
			t.Errorf("position outside the filter %q", got)
		}
		_, doc, _ = a.get(t, fmt.Sprintf("/items/%d?model=evil", last))
		if doc.Find("[data-testid=item-next]").Length() != 0 || attr(doc.Find("[data-testid=item-prev]").First(), "href") != fmt.Sprintf("/items/%d?model=evil", second) {
			t.Error("the last item of the filter links past the end or not back")
		}
		// Unfiltered, the next item is another model's.
		_, doc, _ = a.get(t, fmt.Sprintf("/items/%d", first))
		if attr(doc.Find("[data-testid=item-next]").First(), "href") == fmt.Sprintf("/items/%d", second) && second != first+1 {
			t.Error("the unfiltered next skips items")
		}

		// The API shows the same detail.
		var d runs.ItemDetail
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d?model=evil", second)}, 200, &d)
		if d.ID != second || d.Response == nil || *d.Response != evilAnswer || d.Place.Prev != first || d.Place.Next != last ||
			!d.Place.InList || len(d.Judges) != 1 || d.Judges[0].Raw == "" || d.Task.Reference == "" {
			t.Errorf("API item: %+v", d)
		}

		// Grading in place.
		path := fmt.Sprintf("/items/%d/grade?model=evil", first)
		res, doc = a.post(t, path, url.Values{"grade": {"partial"}, "notes": {"half <right>"}}, map[string]string{"HX-Request": "true"})
		if res.StatusCode != 200 || !strings.Contains(doc.Find("[data-testid=item-grade-current]").Text(), "partial") ||
			doc.Find("[data-testid=item-grade-notes]").Text() != "half <right>" {
			t.Fatalf("grade: %d %q", res.StatusCode, doc.Text())
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d", first)}, 200, &d)
		if d.Grade == nil || d.Grade.Grade != "partial" || d.Grade.Notes != "half <right>" {
			t.Errorf("stored grade: %+v", d.Grade)
		}
		res, doc = a.post(t, path, url.Values{"grade": {"great"}, "notes": {"kept"}}, map[string]string{"HX-Request": "true"})
		if res.StatusCode != 422 || doc.Find("[data-testid=form-error]").Length() != 1 || doc.Find("[data-testid=item-grade-notes]").Text() != "kept" {
			t.Errorf("bad grade: %d %q", res.StatusCode, doc.Text())
		}
		res, _ = a.post(t, path, url.Values{"grade": {"correct"}}, nil)
		if res.StatusCode != 303 || res.Header.Get("Location") != fmt.Sprintf("/items/%d?model=evil", first) {
			t.Errorf("grade without HTMX: %d to %q", res.StatusCode, res.Header.Get("Location"))
		}

		// An item that does not exist.
		for _, p := range []string{"/items/999999", "/items/nope"} {
			if res, doc, _ := a.get(t, p); res.StatusCode != 404 || doc.Find("[data-testid=item-page]").Length() != 0 {
				t.Errorf("GET %s: %d", p, res.StatusCode)
			}
		}
		a.do(t, call{method: "GET", path: "/api/items/999999"}, 404, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d?status=SOMETIMES", first)}, 400, nil)
	})
}
