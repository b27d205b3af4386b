package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store"
	"tribunal/store/storetest"
)

// confirmForm is what one of the preview's Import buttons posts.
func confirmForm(t *testing.T, doc *goquery.Document, button string) url.Values {
	t.Helper()
	form := doc.Find("[data-testid=" + button + "]").Closest("form")
	token, ok := form.Find("input[name=token]").Attr("value")
	if form.Length() != 1 || !ok || token == "" || form.AttrOr("action", "") != "/import" {
		t.Fatalf("no %s form with a token", button)
	}
	return url.Values{"token": {token}}
}

// getHX is a GET as HTMX sends it.
func (a *app) getHX(t *testing.T, path string) (*http.Response, *goquery.Document) {
	t.Helper()
	req, _ := http.NewRequest("GET", a.srv.URL+path, nil)
	req.Header.Set("HX-Request", "true")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, doc
}

func counts(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"create", "update", "skipped", "errors", "categories", "checks"} {
		out[k] = doc.Find("[data-testid=import-count-" + k + "]").Text()
	}
	return out
}

func cells(doc *goquery.Document, col int) []string {
	var out []string
	doc.Find("[data-testid=import-row]").Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.Find("td").Eq(col).Text())
	})
	return out
}

// Real GSM8K lines, previewed and imported through the page: counts, the
// default category named, and the tasks saved with a numeric reference.
func TestImportPageGSM8K(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		ctx := context.Background()
		data, err := os.ReadFile("../importer/testdata/gsm8k_sample.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		status, body := a.upload(t, "/import/preview", "gsm8k.jsonl", string(data), nil)
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		want := map[string]string{"create": "5", "update": "0", "skipped": "0", "errors": "0", "categories": "1", "checks": "5"}
		if got := counts(doc); status != 200 || !reflect.DeepEqual(got, want) {
			t.Fatalf("preview: %d, counts %v, want %v", status, got, want)
		}
		if got := doc.Find("[data-testid=import-category-note]").Text(); got != "No category in the file: using “gsm8k” from the file name." {
			t.Errorf("category note %q", got)
		}
		if !strings.Contains(doc.Find("[data-testid=import-gsm8k-note]").Text(), "5 GSM8K answers") {
			t.Errorf("GSM8K note %q", doc.Find("[data-testid=import-gsm8k-note]").Text())
		}
		if got := cells(doc, 5); !reflect.DeepEqual(got, []string{"18", "3", "70000", "540", "20"}) {
			t.Errorf("references %q", got)
		}
		if doc.Find("[data-testid=import-confirm-top]").Text() != "Import 5 tasks" || doc.Find("[data-testid=import-confirm-bottom]").Length() != 1 {
			t.Error("the Import buttons are not at the top and the bottom")
		}
		if page, _ := st.Tasks(ctx, store.TaskFilter{}); page.Total != 0 {
			t.Fatal("the preview wrote tasks")
		}
		res, done := a.post(t, "/import", confirmForm(t, doc, "import-confirm-top"), map[string]string{"HX-Request": "true"})
		if res.StatusCode != 200 || !strings.Contains(done.Find("[data-testid=import-done] header").Text(), "5 created, 0 updated") {
			t.Fatalf("confirm: %d %s", res.StatusCode, done.Text())
		}
		page, err := st.Tasks(ctx, store.TaskFilter{Query: "Janet"})
		if err != nil || page.Total != 1 {
			t.Fatalf("Janet's task: %+v %v", page, err)
		}
		janet := page.Items[0]
		if janet.Category != "gsm8k" || janet.Reference != "18" || !strings.HasPrefix(janet.Excellent, "Janet sells 16 - 3 - 4 = 9 duck eggs") ||
			!reflect.DeepEqual([]store.Check(janet.Checks), []store.Check{{Type: "numeric"}}) {
			t.Errorf("saved task: %+v", janet)
		}
		// The preview was imported: its token is spent.
		res, again := a.post(t, "/import", confirmForm(t, doc, "import-confirm-bottom"), nil)
		if res.StatusCode != http.StatusGone || !strings.Contains(again.Find("[data-testid=form-error]").Text(), "preview it again") {
			t.Errorf("second confirm: %d %q", res.StatusCode, again.Find("[data-testid=form-error]").Text())
		}
	})
}

// A big file pages by 50 through the kept preview, with its row numbers.
func TestImportPagePaging(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	var b strings.Builder
	b.WriteString("task_id,category,question,reference,checks\n")
	for i := 1; i <= 120; i++ {
		if i == 11 {
			b.WriteString(",,,,\n") // row 11 is blank: skipped, and the rows after it keep their numbers
		}
		cat, check := "even", ""
		if i%2 == 1 {
			cat, check = "odd", "exact_match"
		}
		fmt.Fprintf(&b, "t%03d,%s,What is %d?,%d,%s\n", i, cat, i, i, check)
	}
	status, body := a.upload(t, "/import/preview", "big.csv", b.String(), map[string]string{"collection": "Big"})
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	want := map[string]string{"create": "120", "update": "0", "skipped": "1", "errors": "0", "categories": "2", "checks": "60"}
	if got := counts(doc); status != 200 || !reflect.DeepEqual(got, want) {
		t.Fatalf("preview: %d, counts %v, want %v", status, got, want)
	}
	if doc.Find("[data-testid=import-category-note]").Length() != 0 {
		t.Error("a file with categories got the default")
	}
	rows := cells(doc, 0)
	if len(rows) != 50 || rows[0] != "1" || rows[10] != "12" || rows[49] != "51" {
		t.Fatalf("first page rows %v", rows)
	}
	next, ok := doc.Find("[data-testid=import-pager] a[hx-get]").Filter(":contains('Next')").Attr("hx-get")
	if !ok || doc.Find("[data-testid=import-pager] a[hx-target='#import-rows']").Length() == 0 {
		t.Fatal("no HTMX pager")
	}
	res, part := a.getHX(t, next)
	rows = cells(part, 0)
	if res.StatusCode != 200 || len(rows) != 50 || rows[0] != "52" || part.Find("html > head > title").Length() != 0 ||
		part.Find("#import-rows").Length() != 1 {
		t.Fatalf("page 2: %d, rows %v", res.StatusCode, rows)
	}
	// Without HTMX a page is the whole page, still with both Import buttons.
	last := strings.Replace(next, "page=2", "page=3", 1)
	res, full, _ := a.get(t, last)
	rows = cells(full, 0)
	if res.StatusCode != 200 || len(rows) != 20 || rows[19] != "121" || full.Find("[data-testid=import-confirm-top]").Length() != 1 ||
		full.Find("input[name=collection]").AttrOr("value", "") != "Big" {
		t.Fatalf("page 3: %d, rows %v", res.StatusCode, rows)
	}
	if res, _, _ := a.get(t, "/import/preview/0123456789abcdef?page=2"); res.StatusCode != http.StatusGone {
		t.Errorf("unknown token: %d", res.StatusCode)
	}
	// Import saves every row, not only the pages seen.
	res, done := a.post(t, "/import", confirmForm(t, full, "import-confirm-bottom"), nil)
	if res.StatusCode != 200 || !strings.Contains(done.Find("[data-testid=import-done] header").Text(), "120 created") {
		t.Fatalf("confirm: %d %s", res.StatusCode, done.Find("[data-testid=import-done]").Text())
	}
}

// Problems speak to a person with row numbers and fields; a row without a
// category in a file that has categories is refused in the task form's words.
func TestImportPageProblems(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	ctx := context.Background()

	res, doc := a.post(t, "/import/preview", url.Values{"collection": {"x"}}, map[string]string{"HX-Request": "true"})
	if res.StatusCode != 422 || doc.Find("[data-testid=form-error]").Text() != "Please fix: Choose a file or paste tasks." {
		t.Errorf("nothing sent: %d %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
	}

	// The task form's words for a task without a category.
	_, form := a.post(t, "/tasks", url.Values{"task_id": {"f1"}, "question": {"q"}}, nil)
	formMsg := strings.TrimSpace(strings.TrimPrefix(form.Find("[data-testid=form-error]").Text(), "Please fix:"))
	if formMsg == "" {
		t.Fatal("the task form took a task without a category")
	}

	text := "task_id,category,question\na,math,What is 1+1?\nb,,What is 2+2?\nc,math,\n"
	res, doc = a.post(t, "/import/preview", url.Values{"text": {text}}, nil)
	want := map[string]string{"create": "1", "update": "0", "skipped": "0", "errors": "2", "categories": "1", "checks": "0"}
	if got := counts(doc); res.StatusCode != 422 || !reflect.DeepEqual(got, want) {
		t.Fatalf("preview: %d, counts %v, want %v", res.StatusCode, got, want)
	}
	var problems []string
	doc.Find("[data-testid=import-problem]").Each(func(_ int, s *goquery.Selection) {
		td := s.Find("td")
		problems = append(problems, fmt.Sprintf("row %s line %s column %s %s: %s", td.Eq(0).Text(), td.Eq(1).Text(), td.Eq(2).Text(), td.Eq(3).Text(), td.Eq(4).Text()))
	})
	wantProblems := []string{"row 2 line 3 column 1 " + formMsg, "row 3 line 4 column 1 question: is required"}
	if !reflect.DeepEqual(problems, wantProblems) {
		t.Errorf("problems %q, want %q", problems, wantProblems)
	}
	if doc.Find("[data-testid^=import-confirm]").Length() != 0 || !strings.Contains(doc.Find("[data-testid=import-ready] header").Text(), "Nothing can be imported yet") {
		t.Error("a file with problems offers Import")
	}
	if rows := cells(doc, 2); !reflect.DeepEqual(rows, []string{"a"}) {
		t.Errorf("good rows %v", rows)
	}
	if page, _ := st.Tasks(ctx, store.TaskFilter{}); page.Total != 0 {
		t.Errorf("a file with problems wrote %d tasks", page.Total)
	}

	// A token that is no longer kept is said so, not imported.
	res, doc = a.post(t, "/import", url.Values{"token": {"nope"}}, map[string]string{"HX-Request": "true"})
	if res.StatusCode != http.StatusGone || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "choose the file and preview it again") {
		t.Errorf("unknown token: %d %q", res.StatusCode, doc.Text())
	}
}

// The API answers a file with problems with 422 {"error", "errors"} through
// the error mapper, and takes the collection's name as a missing category.
func TestImportAPICategories(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		status, body := a.rawPost(t, "/api/import?format=csv", "text/csv", "task_id,category,question\na,math,q1\nb,,q2\n")
		var e importErrorReply
		if status != 422 || json.Unmarshal(body, &e) != nil || e.Error != "the file has 1 problem(s); nothing was imported" ||
			len(e.Errors) != 1 || e.Errors[0].Row != 2 || e.Errors[0].Line != 3 || e.Errors[0].Field != "category" || e.Errors[0].Message != "is required" {
			t.Fatalf("row without a category: %d %s", status, body)
		}
		status, body = a.upload(t, "/api/import", "gsm8k.jsonl", `{"question": "Two and two?", "answer": "2+2=<<2+2=4>>4\n#### 4"}`+"\n",
			map[string]string{"collection": "Arithmetic"})
		var r importReply
		if status != 200 || json.Unmarshal(body, &r) != nil || r.Created != 1 {
			t.Fatalf("GSM8K import: %d %s", status, body)
		}
		page, err := st.Tasks(context.Background(), store.TaskFilter{Query: r.TaskIDs[0]})
		if err != nil || page.Total != 1 {
			t.Fatalf("imported task: %+v %v", page, err)
		}
		if task := page.Items[0]; task.Category != "Arithmetic" || task.Reference != "4" || task.Excellent != "2+2=4" {
			t.Errorf("imported task: %+v", task)
		}
		status, body = a.rawPost(t, "/api/import", "text/csv", "  ")
		if status != 400 || !strings.Contains(string(body), `"error":"no file`) {
			t.Errorf("no file: %d %s", status, body)
		}
	})
}
