package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store"
	"tribunal/store/storetest"
)

// post submits a form as a browser would (same Origin), without following redirects.
func (a *app) post(t *testing.T, path string, form url.Values, header map[string]string) (*http.Response, *goquery.Document) {
	t.Helper()
	req, _ := http.NewRequest("POST", a.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", a.srv.URL)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
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

func (a *app) get(t *testing.T, path string) (*http.Response, *goquery.Document, string) {
	t.Helper()
	res, err := http.Get(a.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return res, doc, string(b)
}

func TestPages(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)

	for _, path := range []string{"/runs", "/runs/new", "/providers", "/tasks", "/collections"} {
		res, doc, _ := a.get(t, path)
		if res.StatusCode != 200 || doc.Find("nav a[aria-current=page]").Length() != 1 {
			t.Errorf("GET %s: status %d, current nav %d", path, res.StatusCode, doc.Find("nav a[aria-current=page]").Length())
		}
	}
	if res, _, _ := a.get(t, "/runs/12345"); res.StatusCode != 404 {
		t.Errorf("missing run page: %d", res.StatusCode)
	}

	// A bad provider form comes back 422 with the message and the user's input.
	res, doc := a.post(t, "/providers", url.Values{"name": {"Mine"}, "base_url": {"localhost:11434"}, "type": {"OLLAMA"}}, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "base_url") ||
		doc.Find("input[name=name]").AttrOr("value", "") != "Mine" {
		t.Errorf("bad provider form: %d %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
	}
	res, _ = a.post(t, "/providers", url.Values{"name": {"Mine"}, "base_url": {a.fake.URL}, "type": {"OLLAMA"},
		"header_key": {"Authorization", ""}, "header_value": {"Bearer sk-form-secret-7777", ""}, "header_secret": {"secret", "secret"}}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/providers" {
		t.Fatalf("create provider: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, doc, html := a.get(t, "/providers")
	if strings.Contains(html, "sk-form-secret") || !strings.Contains(doc.Find("[data-testid=providers-table]").Text(), "7777") {
		t.Errorf("providers page leaks or hides the masked secret")
	}
	// Cross-site form posts are refused.
	res, _ = a.post(t, "/tasks", url.Values{"task_id": {"x"}, "category": {"c"}, "question": {"q"}}, map[string]string{"Origin": "http://evil.example"})
	if res.StatusCode != 403 {
		t.Errorf("cross-site form post: %d, want 403", res.StatusCode)
	}

	// What users and models write is escaped.
	res, _ = a.post(t, "/tasks", url.Values{"task_id": {"xss-1"}, "category": {"web"}, "question": {`<script>alert("pwned")</script>`}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create task: %d", res.StatusCode)
	}
	_, doc, html = a.get(t, "/tasks?q=alert")
	if strings.Contains(html, `<script>alert("pwned")`) || !strings.Contains(doc.Find("[data-testid=tasks-table]").Text(), `<script>alert("pwned")</script>`) {
		t.Errorf("task question not escaped or not shown")
	}
	res, doc = a.post(t, "/tasks", url.Values{"task_id": {"xss-1"}, "category": {"web"}, "question": {"again"}}, nil)
	if res.StatusCode != 409 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "already exists") {
		t.Errorf("duplicate task form: %d", res.StatusCode)
	}

	// Collections: create, tick a task, see the count.
	res, _ = a.post(t, "/collections", url.Values{"name": {"Web"}}, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/collections/") {
		t.Fatalf("create collection: %d %s", res.StatusCode, loc)
	}
	tasks, _ := a.st.Tasks(t.Context(), store.TaskFilter{})
	res, doc = a.post(t, fmt.Sprintf("%s/tasks/%d", loc, tasks.Items[0].ID), url.Values{"member": {"1"}}, map[string]string{"HX-Request": "true"})
	if res.StatusCode != 200 || doc.Find("[data-testid=collection-count]").Text() != "1 task" {
		t.Errorf("tick task: %d %q", res.StatusCode, doc.Find("[data-testid=collection-count]").Text())
	}
	_, doc, _ = a.get(t, loc)
	if doc.Find("input[data-testid=pick-xss-1][checked]").Length() != 1 {
		t.Errorf("collection page does not show the task as picked")
	}

	// The new-run form validates and keeps the user's picks.
	ps, _ := a.st.Providers(t.Context())
	res, doc = a.post(t, "/runs", url.Values{"judge_provider_id": {fmt.Sprint(ps[0].ID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(ps[0].ID)}, "target_model": {"fake-small"}, "pipeline": {"1"}}, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "collection") ||
		doc.Find("input[name=target_model]").AttrOr("value", "") != "fake-small" || doc.Find("input[data-testid=pipeline][checked]").Length() != 1 {
		t.Errorf("run form without collections: %d %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
	}
	cols, _ := a.st.Collections(t.Context())
	res, _ = a.post(t, "/runs", url.Values{"judge_provider_id": {fmt.Sprint(ps[0].ID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(ps[0].ID)}, "target_model": {"fake-small"}, "collection_ids": {fmt.Sprint(cols[0].ID)},
		"pipeline": {"1"}}, nil)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/runs/") {
		t.Fatalf("start run: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if id, err := strconv.ParseInt(strings.TrimPrefix(res.Header.Get("Location"), "/runs/"), 10, 64); err != nil {
		t.Errorf("run location %q: %v", res.Header.Get("Location"), err)
	} else if run, err := a.st.Run(t.Context(), id); err != nil || !run.Options.Pipeline {
		t.Errorf("the form's pipeline box did not reach the run: %v", err)
	}
	_, doc, _ = a.get(t, res.Header.Get("Location"))
	if doc.Find("[data-testid=progress]").Length() != 1 || doc.Find("[data-testid=run-name]").Text() == "" {
		t.Errorf("run page lacks progress or name")
	}

	// The model picker lists the provider's models.
	_, doc, _ = a.get(t, fmt.Sprintf("/providers/models?judge_provider_id=%d&list=judge-models-0", ps[0].ID))
	if doc.Find("datalist#judge-models-0 option").Length() != 3 {
		t.Errorf("model options: %d", doc.Find("datalist option").Length())
	}
}
