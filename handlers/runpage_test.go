package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// startRunOf makes a provider on the app's fake, the tasks named (each
// task's question is its id), a collection of them and a run of models on
// it, judged by "j"; it returns the run's id without waiting for it.
func startRunOf(t *testing.T, a *app, tasks []string, models ...string) int64 {
	t.Helper()
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"concurrency":4,
		"prices":[{"model":"m","input_per_mtok":100,"output_per_mtok":200}]}`, a.fake.URL)}, 201, &p)
	var keys []string
	for _, k := range tasks {
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":%q,"category":"c","question":%q}`, k, k)}, 201, nil)
		keys = append(keys, strconv.Quote(k))
	}
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: fmt.Sprintf(`{"name":"C","task_ids":[%s]}`, strings.Join(keys, ","))}, 201, &col)
	var targets []string
	for _, m := range models {
		targets = append(targets, fmt.Sprintf(`{"provider_id":%d,"model":%q}`, p.ID, m))
	}
	var run struct{ ID int64 }
	a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[%s],"collection_ids":[%d]}`,
		p.ID, strings.Join(targets, ","), col.ID)}, 201, &run)
	return run.ID
}

// TestRunPagePerModelColumns: the per-model table puts the model, then
// overall, pass rate, failed, cost and score per dollar first; the other
// columns carry data-col, hidden unless on by default, and the columns
// picker offers exactly those, ticked as they show.
func TestRunPagePerModelColumns(t *testing.T) {
	a, _, ids := runsListFixture(t, storetest.SQLite(t))
	_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", ids[0]))
	table := doc.Find("#results table[data-testid=per-model]")
	if table.AttrOr("data-columns", "") != "per-model" {
		t.Fatalf("per-model table does not opt in to the columns picker: %q", table.AttrOr("data-columns", ""))
	}
	var head, optional []string
	table.Find("thead th").Each(func(_ int, th *goquery.Selection) {
		head = append(head, strings.TrimSpace(th.Text()))
		if col, ok := th.Attr("data-col"); ok {
			_, hidden := th.Attr("hidden")
			optional = append(optional, fmt.Sprintf("%s:%v", col, !hidden))
		}
	})
	key := []string{"Model", "Overall [95% CI]", "Pass rate", "Failed", "Cost", "Score per $"}
	if len(head) < len(key) || !slices.Equal(head[:len(key)], key) {
		t.Fatalf("per-model columns %q, want first %q", head, key)
	}
	for _, h := range head[:len(key)] {
		if th := table.Find("thead th").FilterFunction(func(_ int, s *goquery.Selection) bool { return strings.TrimSpace(s.Text()) == h }); th.AttrOr("data-col", "") != "" {
			t.Errorf("key column %q can be hidden", h)
		}
	}
	if len(optional) != len(head)-len(key) || len(optional) == 0 {
		t.Errorf("optional columns %q of %q", optional, head)
	}
	var picker []string
	doc.Find("[data-columns-picker=per-model] input[type=checkbox]").Each(func(_ int, in *goquery.Selection) {
		_, on := in.Attr("checked")
		picker = append(picker, fmt.Sprintf("%s:%v", in.AttrOr("data-col", ""), on))
	})
	if !slices.Equal(picker, optional) {
		t.Errorf("columns picker %q, want the table's optional columns %q", picker, optional)
	}
	if _, hidden := doc.Find("[data-columns-picker=per-model]").Attr("hidden"); !hidden {
		t.Error("the picker shows before its script runs (it needs JS)")
	}

	// Each row: the model first, its failed count in the key columns, as
	// many optional cells as headers, hidden alike.
	rows := table.Find("tbody tr")
	if rows.Length() != 2 {
		t.Fatalf("%d per-model rows", rows.Length())
	}
	rows.Each(func(_ int, tr *goquery.Selection) {
		cells := tr.Find("td")
		model := cells.Eq(0).Find("strong").Text()
		wantFailed := map[string]string{"strong": "0", "weak": "1"}[model]
		if wantFailed == "" || cells.Eq(3).Text() != wantFailed {
			t.Errorf("row %q: failed %q, want %q", model, cells.Eq(3).Text(), wantFailed)
		}
		var got []string
		tr.Find("td[data-col]").Each(func(_ int, td *goquery.Selection) {
			_, hidden := td.Attr("hidden")
			got = append(got, fmt.Sprintf("%s:%v", td.AttrOr("data-col", ""), !hidden))
		})
		if !slices.Equal(got, optional) {
			t.Errorf("row %q optional cells %q, want %q", model, got, optional)
		}
	})
	if doc.Find(`script[src^="/assets/columns.js"]`).Length() != 1 {
		t.Error("the page does not load the columns script")
	}
	if res, _, body := a.get(t, doc.Find(`script[src^="/assets/columns.js"]`).AttrOr("src", "")); res.StatusCode != 200 || !strings.Contains(body, "data-columns-picker") {
		t.Errorf("columns script: %d", res.StatusCode)
	}
}

// TestRunPageExports: the run page links CSV, JSON and the HTML report,
// each a download with its own file name; before the first answer they
// are off.
func TestRunPageExports(t *testing.T) {
	release := make(chan struct{})
	released := false
	free := func() {
		if !released {
			released = true
			close(release)
		}
	}
	a := newApp(t, storetest.SQLite(t), func(r llmtest.ChatRequest) llmtest.Reply {
		if !r.IsWarmup() && !r.IsJudge() {
			<-release // no answer until the test has seen the run without one
		}
		return llmtest.DefaultReply(r)
	})
	defer free()
	id := startRunOf(t, a, []string{"e-0", "e-1"}, "m")
	_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", id))
	for _, f := range []string{"csv", "json", "html"} {
		link := doc.Find("#progress [data-testid=export-" + f + "]")
		if link.Length() != 1 || link.AttrOr("aria-disabled", "") != "true" || link.AttrOr("href", "") != "" {
			t.Errorf("export %s before any answer: %d links, aria-disabled %q, href %q", f, link.Length(), link.AttrOr("aria-disabled", ""), link.AttrOr("href", ""))
		}
	}
	free()
	a.collectEvents(t, id, "")

	_, doc, _ = a.get(t, fmt.Sprintf("/runs/%d", id))
	for f, ctype := range map[string]string{"csv": "text/csv", "json": "application/json", "html": "text/html"} {
		link := doc.Find("#progress [data-testid=export-" + f + "]")
		href, ok := link.Attr("href")
		if _, dl := link.Attr("download"); !ok || !dl || link.AttrOr("aria-disabled", "") != "" {
			t.Errorf("export %s: href %q, download attribute %v", f, href, dl)
			continue
		}
		res, _, body := a.get(t, href)
		want := fmt.Sprintf(`attachment; filename="tribunal-run-%d.%s"`, id, f)
		if res.StatusCode != 200 || res.Header.Get("Content-Disposition") != want || !strings.HasPrefix(res.Header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %d, Content-Disposition %q (want %q), Content-Type %q", href, res.StatusCode, res.Header.Get("Content-Disposition"), want, res.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, "e-1") {
			t.Errorf("%s export lacks the run's tasks", f)
		}
	}
}

// TestRunPageFailureGroups: each failure group links to the items table
// filtered to exactly its items, and offers the retry of its phase; the
// retry answers with the run page and a message saying how many went back.
func TestRunPageFailureGroups(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			switch {
			case r.IsJudge() && strings.Contains(r.Last(), "m says g-1"):
				return llmtest.Reply{Content: "no JSON here"}
			case !r.IsJudge() && r.Last() == "g-0":
				return llmtest.Reply{Status: 400, Content: "bad request"}
			case r.IsJudge() || r.IsWarmup():
				return llmtest.DefaultReply(r)
			}
			return llmtest.Reply{Content: r.Model + " says " + r.Last()}
		})
		id := startRunOf(t, a, []string{"g-0", "g-1", "g-2"}, "m")
		a.collectEvents(t, id, "")

		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", id))
		rows := doc.Find("[data-testid=failures-table] [data-testid=failure-row]")
		if rows.Length() != 2 {
			t.Fatalf("%d failure groups, want 2: %q", rows.Length(), rows.Text())
		}
		want := map[store.Phase]struct{ task, retry string }{
			store.PhaseBenchmarking: {"g-0", "group-retry-failed"},
			store.PhaseJudging:      {"g-1", "group-retry-judging"},
		}
		rows.Each(func(_ int, row *goquery.Selection) {
			phase := store.Phase(row.Find("[data-phase]").AttrOr("data-phase", ""))
			w, ok := want[phase]
			if !ok {
				t.Errorf("unexpected group phase %q", phase)
				return
			}
			link := row.Find("a[data-testid=failure-items]")
			for _, attr := range []string{"href", "hx-get"} {
				u, err := url.Parse(link.AttrOr(attr, ""))
				if err != nil || u.Query().Get("status") != "FAILED" || u.Query().Get("phase") != string(phase) || u.Query().Get("reason") == "" {
					t.Errorf("%s group's %s %q", phase, attr, link.AttrOr(attr, ""))
					continue
				}
				_, page, _ := a.get(t, u.RequestURI())
				items := page.Find("#items [data-testid=item-row]")
				if items.Length() != 1 || !strings.Contains(items.Text(), w.task) {
					t.Errorf("%s group's items (%s): %d rows %q, want %s", phase, u.RequestURI(), items.Length(), items.Text(), w.task)
				}
			}
			for _, b := range []string{"group-retry-failed", "group-retry-judging"} {
				btn := row.Find("button[data-testid=" + b + "]")
				if _, off := btn.Attr("disabled"); (btn.Length() == 1 && !off) != (b == w.retry) {
					t.Errorf("%s group: button %s present %d (disabled %v)", phase, b, btn.Length(), off)
				}
			}
		})
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?phase=LATER", id)}, 400, nil)

		// Retry judging from its group: the page comes back saying so.
		res, _ := a.post(t, fmt.Sprintf("/runs/%d/retry-judging", id), nil, map[string]string{"HX-Request": "true"})
		if res.StatusCode != 200 || res.Header.Get("HX-Redirect") != fmt.Sprintf("/runs/%d", id) {
			t.Fatalf("retry judging: %d %q", res.StatusCode, res.Header.Get("HX-Redirect"))
		}
		if msg := flashAfter(t, a, res); msg != "1 item sent back for another try." {
			t.Errorf("after retry judging: flash %q", msg)
		}
		a.collectEvents(t, id, "")
	})
}

// firstEvent reads a run's event stream up to its first event named name
// and returns its data.
func firstEvent(t *testing.T, a *app, path, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.srv.URL+path, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event, data = strings.TrimPrefix(line, "event: "), ""
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ") + "\n"
		case line == "" && event == name:
			return data
		}
	}
	t.Fatalf("no %s event on %s", name, path)
	return ""
}

// runRow is the runs list row partial of a run, parsed inside its table
// (a <tr> alone is dropped by an HTML parser).
func (a *app) runRow(t *testing.T, id int64, query string) *goquery.Selection {
	t.Helper()
	res, _, body := a.get(t, fmt.Sprintf("/runs/%d/row%s", id, query))
	if res.StatusCode != 200 {
		t.Fatalf("row of run %d: %d", id, res.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader("<table><tbody>" + body + "</tbody></table>"))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Find("[data-testid=run-row]")
}

// TestRunsListRowLive: an active run's row in the runs list polls its own
// partial and shows the same progress as the run page's panel and the
// progress event; once the run ends, the row it gets stops polling.
func TestRunsListRowLive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		release := make(chan struct{})
		released := false
		free := func() {
			if !released {
				released = true
				close(release)
			}
		}
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() && !r.IsWarmup() {
				<-release // every answer is in, no verdict yet: the run holds still at half way
			}
			return llmtest.DefaultReply(r)
		})
		defer free()
		id := startRunOf(t, a, []string{"l-0", "l-1", "l-2", "l-3"}, "m")
		var run handlers.RunJSON
		for deadline := time.Now().Add(20 * time.Second); ; {
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", id)}, 200, &run)
			if run.Progress.Total > 0 && run.Progress.Answered == run.Progress.Total {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the answers never all came: %+v", run.Progress)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if run.Progress.Judged != 0 || run.Progress.Percent != 50 {
			t.Fatalf("held run's progress %+v, want every item answered, none judged", run.Progress)
		}
		percent := strconv.Itoa(run.Progress.Percent)

		row := a.runRow(t, id, "")
		if row.AttrOr("hx-include", "") != "find input[name=run_ids]" {
			t.Errorf("the row's poll does not send its compare tick: hx-include %q", row.AttrOr("hx-include", ""))
		}
		if _, on := a.runRow(t, id, fmt.Sprintf("?run_ids=%d", id)).Find("input[name=run_ids]").Attr("checked"); !on {
			t.Error("a ticked row loses its tick when it reloads")
		}
		if _, on := row.Find("input[name=run_ids]").Attr("checked"); on {
			t.Error("an unticked row comes back ticked")
		}
		if row.AttrOr("hx-get", "") != fmt.Sprintf("/runs/%d/row", id) || !strings.HasPrefix(row.AttrOr("hx-trigger", ""), "every ") {
			t.Errorf("an active run's row does not poll: hx-get %q hx-trigger %q", row.AttrOr("hx-get", ""), row.AttrOr("hx-trigger", ""))
		}
		cell := row.Find("[data-testid=run-progress]")
		if cell.AttrOr("data-percent", "") != percent || cell.Find("progress").AttrOr("value", "") != percent || !strings.Contains(cell.Text(), percent+"%") {
			t.Errorf("row progress %q (%q, bar %q), want %s%%", cell.Text(), cell.AttrOr("data-percent", ""), cell.Find("progress").AttrOr("value", ""), percent)
		}
		if s := row.Find("[data-testid=status]").AttrOr("data-status", ""); s != string(run.Status) {
			t.Errorf("row status %q, run %q", s, run.Status)
		}
		_, listDoc, _ := a.get(t, "/runs")
		if got := listDoc.Find(fmt.Sprintf("[data-testid=run-row][data-run-id='%d'] [data-testid=run-progress]", id)).AttrOr("data-percent", ""); got != percent {
			t.Errorf("runs list row %s%%, its partial %s%%", got, percent)
		}

		var ev handlers.ProgressEventJSON
		if err := json.Unmarshal([]byte(firstEvent(t, a, fmt.Sprintf("/api/runs/%d/events", id), "progress")), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Progress.Percent != run.Progress.Percent || ev.Progress.Answered != run.Progress.Answered || ev.Progress.Judged != 0 || ev.Status != run.Status {
			t.Errorf("progress event %+v, run %+v", ev, run.Progress)
		}
		panel, err := goquery.NewDocumentFromReader(strings.NewReader(firstEvent(t, a, fmt.Sprintf("/runs/%d/events", id), "progress")))
		if err != nil {
			t.Fatal(err)
		}
		if got := panel.Find("[data-testid=progress-percent]").Text(); got != percent+"%" {
			t.Errorf("progress panel %q, row %s%%", got, percent)
		}
		if got := panel.Find("[data-testid=progress-bar]").AttrOr("value", ""); got != percent {
			t.Errorf("progress panel's bar %q, row %s", got, percent)
		}

		free()
		a.collectEvents(t, id, "")
		row = a.runRow(t, id, "")
		if _, polls := row.Attr("hx-trigger"); polls {
			t.Error("an ended run's row still polls")
		}
		if got := row.Find("[data-testid=run-progress]").AttrOr("data-percent", ""); got != "100" {
			t.Errorf("ended run's row at %s%%", got)
		}
		if s := row.Find("[data-testid=status]").AttrOr("data-status", ""); s != string(store.RunFinished) {
			t.Errorf("ended run's row status %q", s)
		}

		// A run deleted under a polling row: HTMX is told to stop (286)
		// and the row goes, rather than flashing "not found" for ever.
		if err := a.st.DeleteRun(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/runs/%d/row", a.srv.URL, id), nil)
		req.Header.Set("HX-Request", "true")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 286 || res.Header.Get("HX-Retarget") != "" {
			t.Errorf("a deleted run's row answers %d (retarget %q), want 286 to stop the polling", res.StatusCode, res.Header.Get("HX-Retarget"))
		}
	})
}
