package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store"
	"tribunal/store/storetest"
)

// A paused run: active, so its page offers no Delete, while the API still
// deletes it (204).
func TestRunPageDeleteDisabledWhileActive(t *testing.T) {
	ctx := context.Background()
	st := storetest.SQLite(t)
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTasks(ctx, []store.TaskInput{{TaskKey: "k1", Category: "c", Question: "q?"}}); err != nil {
		t.Fatal(err)
	}
	col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "c", TaskIDs: &[]store.TaskRef{{Key: "k1"}}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.CreateRun(ctx, store.RunInput{Judge: &store.ModelRef{ProviderID: p.ID, Model: "j"},
		Targets: []store.ModelRef{{ProviderID: p.ID, Model: "m"}}, CollectionIDs: []int64{col.ID}})
	if err != nil {
		t.Fatal(err)
	}
	// Paused before any engine sees it.
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunPaused, store.RunPending); err != nil {
		t.Fatal(err)
	}
	a := newApp(t, st, nil)
	_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
	del := doc.Find("#progress [data-testid=delete-run]")
	if del.Length() != 1 {
		t.Fatalf("no delete button")
	}
	if _, off := del.Attr("disabled"); !off || !strings.Contains(del.AttrOr("title", ""), "Cancel") {
		t.Errorf("Delete of a paused run: disabled %v, title %q", off, del.AttrOr("title", ""))
	}
	badge := doc.Find("#progress [data-testid=status]")
	if badge.Text() != "Paused" || badge.AttrOr("data-status", "") != "PAUSED" {
		t.Errorf("status badge %q (data-status %q), want Paused / PAUSED", badge.Text(), badge.AttrOr("data-status", ""))
	}
	// Once it ends, Delete is offered again.
	if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPaused); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = a.get(t, fmt.Sprintf("/runs/%d", run.ID))
	if _, off := doc.Find("#progress [data-testid=delete-run]").Attr("disabled"); off {
		t.Errorf("Delete of a cancelled run is disabled")
	}
	if got := doc.Find("#progress [data-testid=status]").Text(); got != "Cancelled" {
		t.Errorf("cancelled badge %q", got)
	}
	a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 204, nil)
}

// The log time never wraps; the run's actions wrap as whole buttons and
// are compact, so at 1400 px they fit in one row.
func TestRunPageCSS(t *testing.T) {
	b, err := os.ReadFile("../assets/app.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	rule := func(sel string) string {
		i := strings.Index(css, sel+" {")
		if i < 0 {
			i = strings.Index(css, sel+",")
		}
		if i < 0 {
			return ""
		}
		j := strings.Index(css[i:], "}")
		return css[i : i+j]
	}
	if r := rule(".live-log .log-entry .log-time"); !strings.Contains(r, "white-space: nowrap") || !strings.Contains(r, "flex: none") {
		t.Errorf("log time rule %q", r)
	}
	if r := rule(".run-actions"); !strings.Contains(r, "flex-wrap: wrap") || !strings.Contains(r, "max-width: 100%") {
		t.Errorf("run actions rule %q", r)
	}
	if r := rule(".run-actions > button"); !strings.Contains(r, "white-space: nowrap") || !strings.Contains(r, "font-size: var(--tb-small)") {
		t.Errorf("run action button rule %q", r)
	}
}

// A built-in style's Delete is off on the page, and the API refuses with 409.
func TestBuiltinStyleCannotBeDeleted(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	ctx := context.Background()
	def, err := a.st.DefaultStyle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error string }
	a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/judgement-styles/%d", def.ID)}, 409, &e)
	if !strings.Contains(e.Error, "built in") {
		t.Errorf("409 message %q", e.Error)
	}
	_, doc, _ := a.get(t, "/styles")
	rows := doc.Find("[data-testid=style-row]")
	if rows.Length() == 0 {
		t.Fatal("no styles")
	}
	rows.Each(func(_ int, r *goquery.Selection) {
		del := r.Find("[data-testid=delete-style]")
		_, off := del.Attr("disabled")
		_, posts := del.Attr("hx-post")
		if builtin := r.Find(".badge:contains('built in')").Length() > 0; builtin && (!off || posts) {
			t.Errorf("built-in style %q offers Delete", r.Find("strong").First().Text())
		}
	})
	var st store.JudgementStyle
	a.do(t, call{method: "POST", path: "/api/judgement-styles", body: `{"name":"Mine","scale_min":1,"scale_max":10}`}, 201, &st)
	_, doc, _ = a.get(t, "/styles")
	del := doc.Find("[data-testid=style-row]:contains('Mine') [data-testid=delete-style]")
	if _, off := del.Attr("disabled"); off || del.AttrOr("hx-post", "") == "" {
		t.Errorf("a user's style cannot be deleted from the page")
	}
}

// A GET of a path that exists for POST only is a missing page (404, the
// error page), not 405; the JSON API keeps 405 semantics untouched.
func TestGuessedPagePathsAre404(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	for _, path := range []string{"/judges/styles", "/runs/1/pause", "/providers/1/delete", "/import/preview", "/schedules/preview"} {
		res, doc, _ := a.get(t, path)
		if res.StatusCode != 404 || doc.Find("[data-testid=error-message]").Length() != 1 || res.Header.Get("Allow") != "" {
			t.Errorf("GET %s: %d, error page %d, Allow %q", path, res.StatusCode, doc.Find("[data-testid=error-message]").Length(), res.Header.Get("Allow"))
		}
		req, _ := http.NewRequest("HEAD", a.srv.URL+path, nil)
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 404 {
			t.Errorf("HEAD %s: %v %v", path, res, err)
		}
	}
	// A wrong method other than GET is still 405.
	req, _ := http.NewRequest("PUT", a.srv.URL+"/judges", nil)
	req.Header.Set("Origin", a.srv.URL)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 405 {
		t.Errorf("PUT /judges: %v %v", res, err)
	}
}

// Each enum reads in words on the pages, the raw value kept for programs.
func TestEnumsInWords(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	res, _ := a.post(t, "/providers", url.Values{"name": {"Any"}, "base_url": {a.fake.URL}, "type": {"CUSTOM_OPEN_AI_COMPATIBLE"}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create provider: %d", res.StatusCode)
	}
	_, doc, body := a.get(t, "/providers")
	cell := doc.Find("[data-testid=providers-table] td[data-type]")
	if cell.Text() != "OpenAI-compatible" || cell.AttrOr("data-type", "") != "CUSTOM_OPEN_AI_COMPATIBLE" {
		t.Errorf("provider type cell %q (%q)", cell.Text(), cell.AttrOr("data-type", ""))
	}
	if opt := doc.Find("select[name=type] option[value=CUSTOM_OPEN_AI_COMPATIBLE]"); opt.Text() != "OpenAI-compatible" {
		t.Errorf("provider type option %q", opt.Text())
	}
	if strings.Contains(doc.Find("main").Text(), "CUSTOM_OPEN_AI_COMPATIBLE") {
		t.Errorf("raw provider type shown: %s", body)
	}
	_, doc, _ = a.get(t, "/alerts")
	if opt := doc.Find("select[name=condition] option[value=LESS_THAN]"); opt.Text() != "less than" {
		t.Errorf("LESS_THAN option %q", opt.Text())
	}
	if opt := doc.Find("select[name=condition] option[value=PERCENTAGE_DROP]"); opt.Text() != "drops by more than … %" {
		t.Errorf("PERCENTAGE_DROP option %q", opt.Text())
	}
}

// Every create, update and delete from the pages lands on a page that says
// it worked, once.
func TestSuccessFlash(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	follow := func(res *http.Response) (string, int) {
		t.Helper()
		doc, got := followRedirect(t, a, res)
		cleared := false
		for _, c := range got.Cookies() {
			if c.Name == "tribunal_flash" && c.MaxAge < 0 {
				cleared = true
			}
		}
		if !cleared {
			t.Errorf("GET %s did not clear the flash", got.Request.URL.Path)
		}
		return doc.Find("#flash [data-testid=flash-success]").Text(), got.StatusCode
	}
	res, _ := a.post(t, "/providers", url.Values{"name": {"P"}, "base_url": {a.fake.URL}, "type": {"OLLAMA"}}, nil)
	if msg, code := follow(res); code != 200 || msg != "Provider created." {
		t.Errorf("after create: %d %q", code, msg)
	}
	provs, _ := a.st.Providers(context.Background())
	id := provs[0].ID
	res, _ = a.post(t, fmt.Sprintf("/providers/%d", id), url.Values{"name": {"P2"}, "base_url": {a.fake.URL}, "type": {"OLLAMA"}}, nil)
	if msg, _ := follow(res); msg != "Provider saved." {
		t.Errorf("after update: %d %q", res.StatusCode, msg)
	}
	res, _ = a.post(t, fmt.Sprintf("/providers/%d/delete", id), nil, hxHeader)
	if res.Header.Get("HX-Redirect") != "/providers" {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if msg, _ := follow(res); msg != "Provider deleted." {
		t.Errorf("after delete (HTMX): %q", msg)
	}
	// Without the cookie, no message.
	_, doc, _ := a.get(t, "/providers")
	if doc.Find("[data-testid=flash-success]").Length() != 0 {
		t.Errorf("flash without a cookie")
	}
}
