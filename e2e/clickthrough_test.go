package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"tribunal/llm/llmtest"
)

// script answers slowly enough for live progress to be seen, and judges
// every answer 8/10.
func script(r llmtest.ChatRequest) llmtest.Reply {
	switch {
	case r.IsJudge():
		return llmtest.Reply{Delay: 100 * time.Millisecond, Content: `{"score": 8, "reasoning": "Correct and concise."}`}
	case r.IsWarmup():
		return llmtest.Reply{Content: "Hello!"}
	}
	return llmtest.Reply{Delay: 150 * time.Millisecond, Content: "The answer to «" + r.Last() + "» is easy."}
}

var e2eTasks = []struct{ id, question, excellent string }{
	{"e2e-1", "What is 2+2?", "4"},
	{"e2e-2", "What is 3+3?", "6"},
	{"e2e-3", "What is 10-7?", "3"},
}

const secretValue = "Bearer sk-secret-abcd1234"

// TestClickThrough is a user's whole journey through the UI in a real
// browser: provider, tasks, collection, a run watched live, results, CSV.
func TestClickThrough(t *testing.T) {
	start := time.Now()
	chromePath(t) // skip (or fail under CI) before standing anything up
	a := startApp(t, script)
	b := newBrowser(t, a.URL)

	// Each step needs the one before; a step that stopped (t.Fatal) ends
	// the journey, one that only reported errors lets it go on.
	var runPath string
	steps := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"provider", func(t *testing.T) { addProvider(t, b, a.fake.URL) }},
		{"tasks", func(t *testing.T) { addTasks(t, b) }},
		{"collection", func(t *testing.T) { makeCollection(t, b) }},
		{"new run", func(t *testing.T) { runPath = startRun(t, b) }},
		{"live run", func(t *testing.T) { watchRun(t, b) }},
		{"csv", func(t *testing.T) { checkCSV(t, b) }},
	}
	for _, s := range steps {
		finished := false
		t.Run(s.name, func(t *testing.T) { s.fn(t); finished = true })
		if !finished {
			t.Fatalf("step %q stopped; the rest of the journey depends on it", s.name)
		}
	}

	// The secret header reached the models in clear: it was sealed and opened right.
	for _, c := range a.fake.Calls() {
		if got := c.Header.Get("Authorization"); got != secretValue {
			t.Errorf("call to %s carried Authorization %q, want the secret header %q", c.Model, got, secretValue)
			break
		}
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors in the browser:\n  %s", strings.Join(errs, "\n  "))
	}
	t.Logf("run %s; whole journey took %s", runPath, time.Since(start).Round(time.Millisecond))
}

// withT points the browser's failures at a subtest.
func (b *browser) withT(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
}

func addProvider(t *testing.T, b0 *browser, fakeURL string) {
	b := b0.withT(t)
	b.open("/providers")
	b.waitFor("the empty providers hint", `document.querySelector("[data-testid=empty-providers]")`, 15*time.Second)

	form := "form[data-testid=provider-form] "
	b.typeInto(form+"input[name=name]", "Fake")
	b.choose(form+"select[name=type]", "OpenAI-compatible")
	b.typeInto(form+"input[name=base_url]", fakeURL)
	b.click("[data-testid=add-header]")
	b.waitFor("a header row", `document.querySelector("#headers .header-row")`, 15*time.Second)
	b.typeInto("#headers .header-row input[name=header_key]", "Authorization")
	b.typeInto("#headers .header-row input[name=header_value]", secretValue)
	b.choose("#headers .header-row select[name=header_secret]", "secret")
	b.click(form + "button[type=submit]")

	b.waitFor("the providers table", `document.querySelector("[data-testid=providers-table]")`, 10*time.Second)
	row := `document.querySelector("[data-testid=providers-table] tbody tr")`
	if got := mustEval[string](b, "provider row", row+".innerText"); !strings.Contains(got, "Fake") ||
		!strings.Contains(got, "OpenAI-compatible") || !strings.Contains(got, fakeURL) {
		t.Errorf("provider row = %q, want name, type and base URL", got)
	}
	masked := b.text("[data-testid=providers-table] .secret-mask")
	if !regexp.MustCompile(`^•+1234$`).MatchString(masked) {
		t.Errorf("secret header shows %q, want a mask ending in 1234", masked)
	}
	if got := b.text("[data-testid=providers-table] tbody tr td:nth-child(4) code"); got != "Authorization" {
		t.Errorf("header name shows %q, want Authorization", got)
	}
	html := mustEval[string](b, "page HTML", "document.documentElement.outerHTML")
	for _, leak := range []string{"sk-secret-abcd1234", "sk-secret", "abcd1234"} {
		if strings.Contains(html, leak) {
			t.Errorf("the providers page leaks the secret: its HTML contains %q", leak)
		}
	}

	b.click("[data-testid=providers-table] [data-testid=test-connection]")
	b.waitFor("the connection test result", `document.querySelector("[data-testid=test-result]")`, 10*time.Second)
	if got := b.text("[data-testid=test-result]"); !strings.Contains(got, "Connected: 3 models available") {
		t.Errorf("test connection says %q, want it connected with 3 models", got)
	}
	b.screenshot("/tmp/e2e-providers.png")
}

func addTasks(t *testing.T, b0 *browser) {
	b := b0.withT(t)
	b.open("/tasks")
	for i, task := range e2eTasks {
		// After the first task the "Add a task" section starts closed.
		if !mustEval[bool](b, "details state", `document.querySelector("details:has(form[data-testid=task-form])").open`) {
			b.click("details:has(form[data-testid=task-form]) > summary")
			b.waitFor("the task form", `document.querySelector("details:has(form[data-testid=task-form])").open`, 15*time.Second)
		}
		form := "form[data-testid=task-form] "
		b.typeInto(form+"input[name=task_id]", task.id)
		b.typeInto(form+"input[name=category]", "math")
		b.typeInto(form+"input[name=subcategory]", "arithmetic")
		b.typeInto(form+"textarea[name=question]", task.question)
		b.typeInto(form+"textarea[name=excellent]", task.excellent)
		b.click(form + "button[type=submit]")
		b.waitFor("task "+task.id+" in the table", fmt.Sprintf(
			`document.querySelectorAll("[data-testid=tasks-table] tbody tr").length === %d && [...document.querySelectorAll("[data-testid=tasks-table] tbody td:first-child")].some(td => td.innerText.trim() === %s)`,
			i+1, js(task.id)), 10*time.Second)
	}
	rows := mustEval[[]string](b, "task rows", `[...document.querySelectorAll("[data-testid=tasks-table] tbody tr")].map(r => r.innerText)`)
	for _, task := range e2eTasks {
		if !slices.ContainsFunc(rows, func(r string) bool {
			return strings.Contains(r, task.id) && strings.Contains(r, "math") && strings.Contains(r, task.question) && strings.Contains(strings.ToLower(r), "excellent")
		}) {
			t.Errorf("no row shows %s with its category, question and its Excellent answer's badge; rows: %q", task.id, rows)
		}
	}

	// Search filters the table in place.
	b.typeInto("[data-testid=task-search]", "e2e-2")
	rowsAre := func(ids ...string) string {
		return fmt.Sprintf(`JSON.stringify([...document.querySelectorAll("[data-testid=tasks-table] tbody td:first-child")].map(td => td.innerText.trim())) === %s`,
			js(mustJSON(ids)))
	}
	b.waitFor("the search to leave only e2e-2", rowsAre("e2e-2"), 15*time.Second)
	if u := mustEval[string](b, "location", "location.search"); !strings.Contains(u, "q=e2e-2") {
		t.Errorf("search did not push its URL: location.search = %q", u)
	}
	b.typeInto("[data-testid=task-search]", "zzz-nothing")
	b.waitFor("the empty search message", `document.querySelector("[data-testid=empty-tasks]")`, 15*time.Second)
	if got := b.text("[data-testid=empty-tasks]"); !strings.Contains(got, "No task matches") {
		t.Errorf("empty search says %q", got)
	}
	b.do("clear the search", 15*time.Second, chromedp.SendKeys(chromedp.CSS("[data-testid=task-search]"), strings.Repeat(kb.Backspace, 20)))
	b.waitFor("all tasks back", `document.querySelectorAll("[data-testid=tasks-table] tbody tr").length === 3`, 15*time.Second)
	b.screenshot("/tmp/e2e-tasks.png")
}

func makeCollection(t *testing.T, b0 *browser) {
	b := b0.withT(t)
	b.open("/collections")
	b.typeInto("form[data-testid=collection-form] input[name=name]", "E2E")
	b.typeInto("form[data-testid=collection-form] input[name=description]", "browser test tasks")
	b.click("form[data-testid=collection-form] button[type=submit]")
	b.waitFor("the collection page", `/^\/collections\/\d+$/.test(location.pathname) && document.querySelector("[data-testid=collection-count]")`, 10*time.Second)
	if got := b.text("h1"); got != "E2E" {
		t.Errorf("collection page title = %q, want E2E", got)
	}
	if got := b.text("[data-testid=collection-count]"); got != "0 tasks" {
		t.Errorf("new collection count = %q, want 0 tasks", got)
	}
	for i, task := range e2eTasks {
		b.click("[data-testid=pick-" + task.id + "]")
		want := fmt.Sprintf("%d tasks", i+1)
		if i == 0 {
			want = "1 task"
		}
		b.waitFor("count "+want, fmt.Sprintf(`document.querySelector("[data-testid=collection-count]").innerText.trim() === %s`, js(want)), 15*time.Second)
	}
	// The membership is saved: a reload shows the boxes ticked.
	b.open(mustEval[string](b, "path", "location.pathname"))
	for _, task := range e2eTasks {
		if !mustEval[bool](b, "checkbox", fmt.Sprintf(`document.querySelector("[data-testid=pick-%s]").checked`, task.id)) {
			t.Errorf("after a reload %s is not ticked", task.id)
		}
	}
	if got := b.text("[data-testid=collection-count]"); got != "3 tasks" {
		t.Errorf("after a reload the count is %q, want 3 tasks", got)
	}
	b.screenshot("/tmp/e2e-collection.png")
}

// pickModel chooses a provider in a model picker, waits for its models to
// load, and types the model.
func pickModel(b *browser, picker, role string, i int, model string) {
	b.t.Helper()
	b.choose(picker+" select", "Fake")
	box := fmt.Sprintf("#%s-models-%d-box", role, i)
	b.waitFor("models of "+picker, fmt.Sprintf(`document.querySelector(%s).innerText.includes("3 model(s) available")`, js(box)), 10*time.Second)
	opts := mustEval[[]string](b, "datalist", fmt.Sprintf(`[...document.querySelectorAll("#%s-models-%d option")].map(o => o.value)`, role, i))
	if !slices.Equal(opts, []string{"fake-small", "fake-large", "fake-judge"}) {
		b.t.Errorf("%s suggests models %q", picker, opts)
	}
	b.typeInto(picker+" input[name="+role+"_model]", model)
}

func startRun(t *testing.T, b0 *browser) string {
	b := b0.withT(t)
	b.open("/runs/new")
	b.waitFor("the new-run form", `document.querySelector("form[data-testid=new-run-form]")`, 15*time.Second)
	b.typeInto("form[data-testid=new-run-form] input[name=name]", "E2E run")

	pickModel(b, "[data-testid=judge-picker-0]", "judge", 0, "fake-judge")
	pickModel(b, "[data-testid=target-picker-0]", "target", 0, "fake-small")
	b.click("[data-testid=add-target]")
	b.waitFor("a second target picker", `document.querySelector("[data-testid=target-picker-1]")`, 15*time.Second)
	pickModel(b, "[data-testid=target-picker-1]", "target", 1, "fake-large")

	// A third picker gets its own index, and removing it leaves two.
	b.click("[data-testid=add-target]")
	b.waitFor("a third target picker", `document.querySelectorAll("#targets .model-picker").length === 3`, 15*time.Second)
	testids := mustEval[[]string](b, "pickers", `[...document.querySelectorAll("#targets .model-picker")].map(p => p.dataset.testid)`)
	if !slices.Equal(testids, []string{"target-picker-0", "target-picker-1", "target-picker-2"}) {
		t.Errorf("after adding two models the pickers are %q, want target-picker-0..2 (each picker needs its own index, "+
			"or their datalists and model boxes share ids)", testids)
	}
	b.click("#targets .model-picker:nth-child(3) button[aria-label='Remove model']")
	b.waitFor("the third picker gone", `document.querySelectorAll("#targets .model-picker").length === 2`, 15*time.Second)

	label := mustEval[string](b, "collection box", `(() => {
		const l = [...document.querySelectorAll("form[data-testid=new-run-form] label")].find(l => l.querySelector("input[name=collection_ids]") && l.innerText.includes("E2E"));
		return l ? l.innerText.trim() : "";
	})()`)
	if !strings.Contains(label, "(3 tasks)") {
		t.Errorf("collection choice reads %q, want E2E (3 tasks)", label)
	}
	b.do("tick the collection E2E", 15*time.Second, chromedp.Click(chromedp.Search(
		`//form[@data-testid="new-run-form"]//label[contains(., "E2E")]/input[@name="collection_ids"]`)))
	if !mustEval[bool](b, "collection ticked", `[...document.querySelectorAll("input[name=collection_ids]:checked")].some(c => c.closest("label").innerText.includes("E2E"))`) {
		t.Fatalf("clicking the collection did not tick it")
	}
	b.screenshot("/tmp/e2e-newrun.png")

	b.click("[data-testid=start-run]")
	b.waitFor("the run page", `/^\/runs\/\d+$/.test(location.pathname) && document.readyState !== "loading" && document.querySelector("[data-testid=progress]")`, 10*time.Second)
	// Record every state of the progress counter the page shows, and mark
	// this document so a reload would be noticed.
	mustEval[bool](b, "observe progress", `(() => {
		const seen = window.__e2eSeen = [];
		window.__e2eNoReload = true;
		const rec = () => {
			const e = document.querySelector("[data-testid=progress-count]");
			const s = e ? e.textContent.replace(/\s+/g, " ").trim() : "";
			if (s && seen[seen.length - 1] !== s) seen.push(s);
		};
		rec();
		new MutationObserver(rec).observe(document.body, {childList: true, subtree: true, characterData: true});
		return true;
	})()`)
	path := mustEval[string](b, "run path", "location.pathname")
	if got := b.text("[data-testid=run-name]"); got != "E2E run" {
		t.Errorf("run page title = %q, want E2E run", got)
	}
	sub := b.text("hgroup p")
	for _, want := range []string{"Fake / fake-judge", "Fake / fake-small", "Fake / fake-large", "E2E"} {
		if !strings.Contains(sub, want) {
			t.Errorf("run header %q does not mention %q", sub, want)
		}
	}
	return path
}

func watchRun(t *testing.T, b0 *browser) {
	b := b0.withT(t)
	conn := mustEval[string](b, "sse-connect", `(() => { const e = document.querySelector("[sse-connect]"); return e ? e.getAttribute("sse-connect") : "" })()`)
	if conn == "" {
		t.Fatalf("the run page has no live connection (sse-connect): the run ended before the page loaded, or the page is not live\n%s", b.diagnose())
	}
	m := regexp.MustCompile(`after=(\d+)`).FindStringSubmatch(conn)
	if m == nil {
		t.Fatalf("sse-connect %q has no after= cursor", conn)
	}
	after, _ := strconv.Atoi(m[1])

	// Entries pushed over SSE, after the ones rendered with the page.
	b.waitFor(fmt.Sprintf("a live log entry pushed after entry %d", after), fmt.Sprintf(
		`[...document.querySelectorAll("[data-testid=live-log] .log-entry")].some(e => +e.id.replace("log-", "") > %d)`, after), 15*time.Second)

	b.waitFor("the run to finish", `(document.querySelector("#progress [data-testid=status]") || {dataset: {}}).dataset.status === "FINISHED"`, 60*time.Second)
	// The items table and the results panel both refresh on the SSE "end" event.
	b.waitFor("six scored item rows", `(() => {
		const rows = document.querySelectorAll("[data-testid=items-table] [data-testid=item-row]");
		return rows.length === 6 && [...rows].every(r => r.querySelector("[data-testid=item-score]").innerText.trim() === "8.00");
	})()`, 10*time.Second)

	if b.check("the results panel refreshed to an average of 8.00", `document.querySelector("[data-testid=avg-score]").innerText.trim() === "8.00"`, 15*time.Second) {
		// Each model with its mean judge score (a column the picker hides by default).
		models := mustEval[[]string](b, "per-model rows", `[...document.querySelectorAll("[data-testid=per-model] tbody tr")].map(r =>
			r.querySelector("td strong").innerText + " " + r.querySelector("[data-col=judge-score]").textContent.trim() + " ")`)
		if len(models) != 2 || !strings.Contains(models[0], "fake-small") || !strings.Contains(models[0], " 8.00 ") ||
			!strings.Contains(models[1], "fake-large") || !strings.Contains(models[1], " 8.00 ") {
			t.Errorf("per-model table = %q, want fake-small then fake-large, each at 8.00", models)
		}
	}
	if !mustEval[bool](b, "no reload", `window.__e2eNoReload === true`) {
		t.Errorf("the run page reloaded; results should arrive through HTMX swaps")
	}
	seen := mustEval[[]string](b, "progress states", `window.__e2eSeen`)
	t.Logf("progress counter states seen: %q", seen)
	partial := false
	for _, s := range seen {
		var answered, n, judged, m int
		if _, err := fmt.Sscanf(s, "%d/%d answered · %d/%d judged", &answered, &n, &judged, &m); err == nil && n == 6 &&
			answered+judged > 0 && answered+judged < 12 {
			partial = true
		}
	}
	if !partial {
		t.Errorf("never saw the progress counter between none and all answered and judged; states: %q", seen)
	}
	if got := b.text("[data-testid=progress-count]"); got != "6/6 answered · 6/6 judged" {
		t.Errorf("final progress = %q, want 6/6 answered · 6/6 judged", got)
	}
	statuses := mustEval[[]string](b, "item statuses", `[...document.querySelectorAll("[data-testid=item-row] [data-testid=status]")].map(e => e.dataset.status)`)
	for _, s := range statuses {
		if s != "COMPLETED" {
			t.Errorf("item statuses %q, want all COMPLETED", statuses)
			break
		}
	}
	logText := b.text("[data-testid=live-log]")
	for _, want := range []string{"Run started", "Run finished: 6 completed, 0 failed"} {
		if !strings.Contains(logText, want) {
			t.Errorf("live log lacks %q:\n%s", want, logText)
		}
	}
	for _, btn := range []string{"pause", "resume", "cancel"} {
		if !mustEval[bool](b, btn, fmt.Sprintf(`document.querySelector("[data-testid=%s]").disabled`, btn)) {
			t.Errorf("the %s button is enabled on a finished run", btn)
		}
	}
	// The actions stay one row inside the content box (the window, 1280 px,
	// is narrower than the 1400 px a reviewer saw Delete overflow at), and
	// no log time wraps.
	layout := mustEval[string](b, "run actions layout", `(() => {
		const g = document.querySelector(".run-actions"), box = document.querySelector("main").getBoundingClientRect();
		const bs = [...g.children].filter(e => e.offsetParent);
		const tops = new Set(bs.map(e => Math.round(e.getBoundingClientRect().top)));
		const right = Math.max(...bs.map(e => e.getBoundingClientRect().right));
		const wrapped = [...document.querySelectorAll(".log-time")].filter(e => e.getClientRects().length > 1 || e.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(e).lineHeight || 16)).length;
		return "rows=" + tops.size + " overflow=" + (right > box.right + 0.5) + " wrapped=" + wrapped;
	})()`)
	if layout != "rows=1 overflow=false wrapped=0" {
		t.Errorf("run page layout: %s", layout)
	}
	if mustEval[bool](b, "delete-run", `document.querySelector("[data-testid=delete-run]").disabled`) {
		t.Errorf("Delete is disabled on a finished run")
	}
	b.screenshot("/tmp/e2e-run.png")
}

func checkCSV(t *testing.T, b0 *browser) {
	b := b0.withT(t)
	href := mustEval[string](b, "export link", `document.querySelector("[data-testid=export-csv]").href`)
	res, err := http.Get(href)
	if err != nil {
		t.Fatalf("GET %s: %v", href, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", href, res.Status)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
		t.Errorf("Content-Disposition = %q, want an attachment", cd)
	}
	recs, err := csv.NewReader(res.Body).ReadAll()
	if err != nil {
		t.Fatalf("parse CSV: %v", err)
	}
	if len(recs) == 0 {
		t.Fatal("empty CSV")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"task_id", "category", "subcategory", "provider", "model", "status", "score", "reasoning", "response", "error", "time_ms", "tokens", "tps"} {
		if _, ok := col[h]; !ok {
			t.Errorf("CSV header %q lacks column %q", recs[0], h)
		}
	}
	if t.Failed() {
		return
	}
	rows := recs[1:]
	if len(rows) != 6 {
		t.Fatalf("CSV has %d rows, want 6", len(rows))
	}
	var pairs []string
	for _, r := range rows {
		pairs = append(pairs, r[col["task_id"]]+"/"+r[col["model"]])
		if r[col["score"]] != "8.00" || r[col["status"]] != "COMPLETED" || r[col["provider"]] != "Fake" ||
			r[col["category"]] != "math" || r[col["subcategory"]] != "arithmetic" || r[col["reasoning"]] != "Correct and concise." ||
			!strings.Contains(r[col["response"]], "is easy") || r[col["error"]] != "" {
			t.Errorf("CSV row %q is not a completed, 8.00-scored answer", r)
		}
	}
	slices.Sort(pairs)
	want := []string{"e2e-1/fake-large", "e2e-1/fake-small", "e2e-2/fake-large", "e2e-2/fake-small", "e2e-3/fake-large", "e2e-3/fake-small"}
	if !slices.Equal(pairs, want) {
		t.Errorf("CSV rows cover %q, want %q", pairs, want)
	}
}

func mustJSON(v any) string {
	s, _ := json.Marshal(v)
	return string(s)
}
