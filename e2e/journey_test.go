package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
)

// gsm8kFile is the first five problems of GSM8K's test set, as published.
const gsm8kFile = "../importer/testdata/gsm8k_sample.jsonl"

// gsm8kAnswers are their final numbers, keyed by a phrase of each question.
var gsm8kAnswers = []struct{ phrase, answer string }{
	{"Janet", "18"}, {"robe takes", "3"}, {"flipping a house", "70000"}, {"sprints", "540"}, {"Wendi", "20"},
}

// journeyScript answers like a model that reasons then states its number:
// fake-small gets every problem right, fake-large the first three. The
// judge gives 9 to a right final number and 3 to a wrong one. Each call
// takes a while, so both phases can be watched moving, and answering (one
// call at a time, 4.5 s) lasts past the 3 s an ETA needs.
func journeyScript(r llmtest.ChatRequest) llmtest.Reply {
	if r.IsWarmup() {
		return llmtest.Reply{Content: "Hello!"}
	}
	text := r.Last()
	for i, a := range gsm8kAnswers {
		if !strings.Contains(text, a.phrase) {
			continue
		}
		if r.IsJudge() {
			score := 3
			if strings.Contains(text, "#### "+a.answer+"\n") || strings.HasSuffix(strings.TrimSpace(text), "#### "+a.answer) ||
				strings.Contains(text, "**"+a.answer+"**") {
				score = 9
			}
			return llmtest.Reply{Delay: 120 * time.Millisecond, Content: fmt.Sprintf(`{"score": %d, "reasoning": "The final number is %s."}`, score, map[bool]string{true: "right", false: "wrong"}[score == 9])}
		}
		answer := a.answer
		if r.Model == "fake-large" && i >= 3 {
			answer = "7"
		}
		return llmtest.Reply{Delay: 450 * time.Millisecond, Content: "Let me work it out step by step:\n\n1. read the numbers\n2. combine them\n\nThe answer is **" + answer + "**."}
	}
	return llmtest.Reply{Content: "I do not know."}
}

// TestJourney is a new user's whole way through Tribunal in Chromium, from
// an empty install to a decision: a provider, GSM8K imported, a collection,
// a run of two models watched live through both phases, an item opened in
// full, the results, a second run compared with the first, and every export
// downloaded and opened. A screenshot of each page goes to the test's
// artifact directory (go test -artifacts -outputdir DIR keeps them).
func TestJourney(t *testing.T) {
	chromePath(t)
	a := startApp(t, journeyScript)
	b := newBrowser(t, a.URL)
	b.do("a desktop viewport", 15*time.Second, chromedp.EmulateViewport(1400, 1000))
	shots := t.ArtifactDir()
	var firstRun, secondRun string
	steps := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"provider", func(t *testing.T) { addProvider(t, b, a.fake.URL); b.withT(t).shot(shots, "01-providers") }},
		{"import GSM8K", func(t *testing.T) { importGSM8K(t, b, shots) }},
		{"collection", func(t *testing.T) { collectGSM8K(t, b, shots) }},
		{"run", func(t *testing.T) { firstRun = startGSM8KRun(t, b, shots) }},
		{"live progress", func(t *testing.T) { watchBothPhases(t, b, shots) }},
		{"item detail", func(t *testing.T) { openItem(t, b, firstRun, shots) }},
		{"results", func(t *testing.T) { readResults(t, b, firstRun, shots) }},
		{"second run", func(t *testing.T) { secondRun = rerun(t, b, firstRun, shots) }},
		{"compare", func(t *testing.T) { compareRuns(t, b, firstRun, secondRun, shots) }},
		{"exports", func(t *testing.T) { openExports(t, b, firstRun, secondRun, shots) }},
	}
	for _, s := range steps {
		finished := false
		t.Run(s.name, func(t *testing.T) { s.fn(t); finished = true })
		if !finished {
			t.Fatalf("step %q stopped; the rest of the journey depends on it", s.name)
		}
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors in the browser:\n  %s", strings.Join(errs, "\n  "))
	}
	entries, _ := os.ReadDir(shots)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Logf("screenshots in %s: %s", shots, strings.Join(names, " "))
}

func importGSM8K(t *testing.T, b0 *browser, shots string) {
	b := b0.withT(t)
	path, err := filepath.Abs(gsm8kFile)
	if err != nil {
		t.Fatal(err)
	}
	b.open("/import")
	b.do("choose the GSM8K file", 10*time.Second, chromedp.SetUploadFiles(`[data-testid=import-file]`, []string{path}))
	b.click("[data-testid=import-preview-button]")
	b.waitFor("the preview", `document.querySelector("[data-testid=import-ready]")`, 10*time.Second)
	for id, want := range map[string]string{"import-count-create": "5", "import-count-errors": "0", "import-count-checks": "5"} {
		if got := b.text("[data-testid=" + id + "]"); got != want {
			t.Errorf("%s shows %q, want %s", id, got, want)
		}
	}
	if got := b.text("[data-testid=import-category-note]"); !strings.Contains(got, "gsm8k_sample") {
		t.Errorf("the preview does not say the category comes from the file name: %q", got)
	}
	if got := b.text("[data-testid=import-gsm8k-note]"); !strings.Contains(got, "5") {
		t.Errorf("the preview does not say 5 GSM8K answers were read: %q", got)
	}
	rows := mustEval[[]string](b, "preview rows", `[...document.querySelectorAll("[data-testid=import-row]")].map(r => r.innerText)`)
	if len(rows) != 5 || !strings.Contains(rows[0], "Janet") || !strings.Contains(rows[0], "18") {
		t.Errorf("preview rows = %q, want 5, the first Janet's with reference 18", rows)
	}
	if !mustEval[bool](b, "both Import buttons", `!!document.querySelector("[data-testid=import-confirm-top]") && !!document.querySelector("[data-testid=import-confirm-bottom]")`) {
		t.Errorf("the preview lacks an Import button at the top or the bottom")
	}
	b.shot(shots, "02-import-preview")
	b.click("[data-testid=import-confirm-top]")
	b.waitFor("the import to land", `document.querySelector("[data-testid=import-done]")`, 10*time.Second)
	if got := b.text("[data-testid=import-done]"); !strings.Contains(got, "5 created") {
		t.Errorf("import result: %q", got)
	}
	b.shot(shots, "03-import-done")

	// The tasks hold the final number as reference and a numeric check.
	b.open("/tasks")
	row := mustEval[string](b, "Janet's task", `(() => { const r = [...document.querySelectorAll("[data-testid=tasks-table] tbody tr")].find(r => r.innerText.includes("Janet")); return r ? r.innerText : "" })()`)
	if !strings.Contains(row, "gsm8k_sample") || !strings.Contains(strings.ToLower(row), "numeric") {
		t.Errorf("Janet's task row = %q, want category gsm8k_sample and a numeric check", row)
	}
	b.shot(shots, "04-tasks")
}

func collectGSM8K(t *testing.T, b0 *browser, shots string) {
	b := b0.withT(t)
	b.open("/collections")
	b.typeInto("form[data-testid=collection-form] input[name=name]", "GSM8K")
	b.typeInto("form[data-testid=collection-form] input[name=description]", "grade-school maths")
	b.click("form[data-testid=collection-form] button[type=submit]")
	b.waitFor("the collection page", `/^\/collections\/\d+$/.test(location.pathname) && document.querySelector("[data-testid=collection-count]")`, 10*time.Second)
	b.choose("[data-testid=picker-category]", "gsm8k_sample")
	b.waitFor("the picker filtered to the category", `document.querySelector("[data-testid=add-matching] button")?.innerText.includes("5 matching")`, 10*time.Second)
	b.click("[data-testid=add-matching] button")
	b.waitFor("five tasks in the collection", `document.querySelector("[data-testid=collection-count]")?.innerText.trim() === "5 tasks"`, 10*time.Second)
	if got := b.text("#flash"); !strings.Contains(got, "5") {
		t.Errorf("adding all matching flashes %q, want how many were added", got)
	}
	b.shot(shots, "05-collection")
}

func startGSM8KRun(t *testing.T, b0 *browser, shots string) string {
	b := b0.withT(t)
	b.open("/runs/new")
	b.waitFor("the new-run form", `document.querySelector("form[data-testid=new-run-form]")`, 15*time.Second)
	b.typeInto("form[data-testid=new-run-form] input[name=name]", "GSM8K run")
	pickModel(b, "[data-testid=judge-picker-0]", "judge", 0, "fake-judge")
	pickModel(b, "[data-testid=target-picker-0]", "target", 0, "fake-small")
	b.click("[data-testid=add-target]")
	b.waitFor("a second target picker", `document.querySelector("[data-testid=target-picker-1]")`, 15*time.Second)
	pickModel(b, "[data-testid=target-picker-1]", "target", 1, "fake-large")
	b.do("tick the collection GSM8K", 15*time.Second, chromedp.Click(chromedp.Search(
		`//form[@data-testid="new-run-form"]//label[contains(., "GSM8K")]/input[@name="collection_ids"]`)))
	b.shot(shots, "06-new-run")
	b.click("[data-testid=start-run]")
	b.waitFor("the run page", `/^\/runs\/\d+$/.test(location.pathname) && document.readyState !== "loading" && document.querySelector("[data-testid=progress]")`, 10*time.Second)
	// Record every progress state the page shows, with the ETA and phase.
	mustEval[bool](b, "observe progress", `(() => {
		const seen = window.__journey = [];
		const rec = () => {
			const q = s => { const e = document.querySelector(s); return e ? e.textContent.replace(/\s+/g, " ").trim() : "" };
			const s = q("[data-testid=progress-count]") + "|" + q("[data-testid=phase]") + "|" + q("[data-testid=eta]");
			if (seen[seen.length - 1] !== s) seen.push(s);
		};
		rec();
		new MutationObserver(rec).observe(document.body, {childList: true, subtree: true, characterData: true});
		return true;
	})()`)
	return mustEval[string](b, "run path", "location.pathname")
}

func watchBothPhases(t *testing.T, b0 *browser, shots string) {
	b := b0.withT(t)
	b.waitFor("the run to be judging", `(document.querySelector("[data-testid=phase]") || {}).textContent === "Judging" || document.querySelector("#progress [data-status=FINISHED]")`, 30*time.Second)
	b.shot(shots, "07-run-live")
	b.waitFor("the run to finish", `(document.querySelector("#progress [data-testid=status]") || {dataset: {}}).dataset.status === "FINISHED"`, 60*time.Second)
	seen := mustEval[[]string](b, "progress states", `window.__journey`)
	t.Logf("progress states: %q", seen)
	var answering, judging, eta bool
	for _, s := range seen {
		parts := strings.Split(s, "|")
		var answered, n, judged, m int
		if _, err := fmt.Sscanf(parts[0], "%d/%d answered · %d/%d judged", &answered, &n, &judged, &m); err != nil || n != 10 {
			continue
		}
		answering = answering || (answered > 0 && answered < 10 && judged < answered)
		judging = judging || (answered == 10 && judged > 0 && judged < 10)
		eta = eta || (parts[1] == "Answering" && strings.Contains(parts[2], "left"))
	}
	if !answering || !judging {
		t.Errorf("the progress did not move through both phases (saw answering part-way: %v, judging part-way: %v): %q", answering, judging, seen)
	}
	if !eta {
		t.Errorf("no ETA was shown while the models answered: %q", seen)
	}
	if got := b.text("[data-testid=progress-count]"); got != "10/10 answered · 10/10 judged" {
		t.Errorf("final progress = %q", got)
	}
	// The items table agrees with the progress once the run has ended.
	b.waitFor("ten completed item rows", `(() => {
		const rows = document.querySelectorAll("[data-testid=items-table] [data-testid=item-row]");
		return rows.length === 10 && [...rows].every(r => r.querySelector("[data-testid=status]").dataset.status === "COMPLETED");
	})()`, 10*time.Second)
}

func openItem(t *testing.T, b0 *browser, runPath string, shots string) {
	b := b0.withT(t)
	b.open(runPath)
	b.waitFor("the items table", `document.querySelector("[data-testid=item-link]")`, 10*time.Second)
	b.click("[data-testid=item-row] [data-testid=item-link]")
	b.waitFor("the item page", `/^\/items\/\d+/.test(location.pathname) && document.querySelector("[data-testid=item-page]")`, 10*time.Second)
	page := b.text("[data-testid=item-page]")
	for _, want := range []string{"GSM8K run", "fake-judge", "The final number is", "check_numeric"} {
		if !strings.Contains(page, want) {
			t.Errorf("the item page does not show %q", want)
		}
	}
	// The answer's Markdown is rendered: a list and bold text, not asterisks.
	if !mustEval[bool](b, "rendered answer", `!!document.querySelector(".markdown ol li") && !!document.querySelector(".markdown strong")`) {
		t.Errorf("the answer's Markdown is not rendered as a list with bold text")
	}
	if got := b.text("[data-testid=item-position]"); !strings.HasPrefix(got, "the run's items") || mustEval[bool](b, "previous link", `!!document.querySelector("[data-testid=item-prev]")`) {
		t.Errorf("position = %q, want the run's items and no previous item", got)
	}
	b.shot(shots, "08-item")
	first := mustEval[string](b, "path", "location.pathname")
	b.click("[data-testid=item-next]")
	b.waitFor("the next item", fmt.Sprintf(`location.pathname !== %s && new URL(document.querySelector("[data-testid=item-prev]")?.href ?? location.href).pathname === %s`, js(first), js(first)), 10*time.Second)
}

func readResults(t *testing.T, b0 *browser, runPath string, shots string) {
	b := b0.withT(t)
	b.open(runPath)
	b.waitFor("the per-model table", `document.querySelectorAll("[data-testid=per-model] tbody tr").length === 2`, 10*time.Second)
	head := mustEval[[]string](b, "per-model head", `[...document.querySelectorAll("[data-testid=per-model] thead th")].filter(th => !th.hidden).map(th => th.innerText.trim())`)
	if len(head) < 6 || !strings.HasPrefix(head[1], "Overall") || head[2] != "Pass rate" || head[3] != "Failed" || head[4] != "Cost" || head[5] != "Score per $" {
		t.Errorf("per-model columns = %q, want Model, Overall, Pass rate, Failed, Cost, Score per $ first", head)
	}
	rows := mustEval[[]string](b, "per-model rows", `[...document.querySelectorAll("[data-testid=per-model] tbody tr")].map(r => r.innerText.replace(/\s+/g, " "))`)
	ci := regexp.MustCompile(`\[\d+(\.\d+)?, \d+(\.\d+)?\]`)
	for _, r := range rows {
		if !ci.MatchString(r) {
			t.Errorf("per-model row %q shows no confidence interval", r)
		}
	}
	if got := b.text("[data-testid=best-overall]"); !strings.Contains(got, "fake-small") {
		t.Errorf("best overall = %q, want fake-small (5 of 5 right against 3 of 5)", got)
	}
	b.shot(shots, "09-results")
}

func rerun(t *testing.T, b0 *browser, runPath string, shots string) string {
	b := b0.withT(t)
	b.open(runPath)
	mustEval[bool](b, "accept the confirmation", `(window.confirm = () => true, true)`)
	b.click("[data-testid=rerun]")
	b.waitFor("the second run's page", fmt.Sprintf(`/^\/runs\/\d+$/.test(location.pathname) && location.pathname !== %s`, js(runPath)), 10*time.Second)
	second := mustEval[string](b, "path", "location.pathname")
	b.waitFor("the second run to finish", `(document.querySelector("#progress [data-testid=status]") || {dataset: {}}).dataset.status === "FINISHED"`, 60*time.Second)
	b.open("/runs")
	b.waitFor("both runs listed", `document.querySelectorAll("[data-testid=run-row]").length === 2`, 10*time.Second)
	b.shot(shots, "10-runs")
	return second
}

func compareRuns(t *testing.T, b0 *browser, first, second string, shots string) {
	b := b0.withT(t)
	// Compare with nothing ticked says why.
	b.click("[data-testid=compare-runs]")
	b.waitFor("the reason", `document.querySelector("[data-testid=compare-error]")`, 10*time.Second)
	if got := b.text("[data-testid=compare-error]"); !strings.Contains(got, "none is ticked") {
		t.Errorf("Compare with nothing ticked says %q", got)
	}
	for _, p := range []string{first, second} {
		id := strings.TrimPrefix(p, "/runs/")
		b.click(fmt.Sprintf(`[data-testid=run-row] input[type=checkbox][value="%s"]`, id))
	}
	b.click("[data-testid=compare-runs]")
	b.waitFor("the compare page", `location.pathname === "/compare" && document.querySelector("[data-testid=verdicts]")`, 10*time.Second)
	verdicts := b.text("[data-testid=verdicts]")
	if !strings.Contains(verdicts, "fake-small") || !strings.Contains(verdicts, "fake-large") {
		t.Errorf("verdicts do not name the models: %q", verdicts)
	}
	b.shot(shots, "11-compare")
	b.click("[data-testid=compare-task] a[href*='/compare/diff']")
	b.waitFor("the diff page", `location.pathname === "/compare/diff" && document.querySelector("[data-testid=diff]")`, 10*time.Second)
	b.shot(shots, "12-diff")
}

// openExports downloads every export of the run and of the comparison,
// checks each parses, and opens the HTML reports in the browser.
func openExports(t *testing.T, b0 *browser, first, second string, shots string) {
	b := b0.withT(t)
	b.open(first)
	get := func(href string) []byte {
		t.Helper()
		res, err := http.Get(href)
		if err != nil {
			t.Fatalf("GET %s: %v", href, err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", href, res.Status, body)
		}
		if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "filename=") {
			t.Errorf("GET %s: Content-Disposition %q, want an attachment with a file name", href, cd)
		}
		return body
	}
	href := func(sel string) string {
		t.Helper()
		h := mustEval[string](b, "link "+sel, fmt.Sprintf(`(document.querySelector(%s) || {}).href || ""`, js(sel)))
		if h == "" {
			t.Fatalf("no export link %s\n%s", sel, b.diagnose())
		}
		return h
	}
	openHTML := func(name string, body []byte) {
		t.Helper()
		if m := regexp.MustCompile(`(?i)<(script|link|img)[^>]+(src|href)="https?://`).Find(body); m != nil {
			t.Errorf("%s is not self-contained: %s", name, m)
		}
		file := filepath.Join(shots, name+".html")
		if err := os.WriteFile(file, body, 0o644); err != nil {
			t.Fatal(err)
		}
		b.do("open "+name, 10*time.Second, chromedp.Navigate("file://"+file))
		b.waitFor(name+" rendered", `document.readyState === "complete" && document.querySelectorAll("table").length > 0`, 10*time.Second)
		if got := mustEval[string](b, "report text", "document.body.innerText"); !strings.Contains(got, "fake-small") || !strings.Contains(got, "fake-large") {
			t.Errorf("%s does not name both models", name)
		}
		b.shot(shots, name)
	}

	runCSV, runJSON, runHTML := href("[data-testid=export-csv]"), href("[data-testid=export-json]"), href("[data-testid=export-html]")
	recs, err := csv.NewReader(strings.NewReader(string(get(runCSV)))).ReadAll()
	if err != nil || len(recs) != 11 {
		t.Errorf("run CSV: %d records (want a header and 10 items), err %v", len(recs), err)
	}
	var doc map[string]any
	if err := json.Unmarshal(get(runJSON), &doc); err != nil || len(doc) == 0 {
		t.Errorf("run JSON does not parse to an object: %v", err)
	}
	report := get(runHTML)

	b.open(fmt.Sprintf("/compare?run_ids=%s,%s", strings.TrimPrefix(first, "/runs/"), strings.TrimPrefix(second, "/runs/")))
	cmpCSV, cmpJSON, cmpHTML := href("[data-testid=compare-report-csv]"), href("[data-testid=compare-report-json]"), href("[data-testid=compare-report-html]")
	if recs, err := csv.NewReader(strings.NewReader(string(get(cmpCSV)))).ReadAll(); err != nil || len(recs) < 2 {
		t.Errorf("comparison CSV: %d records, err %v", len(recs), err)
	}
	if err := json.Unmarshal(get(cmpJSON), &doc); err != nil || len(doc) == 0 {
		t.Errorf("comparison JSON does not parse to an object: %v", err)
	}
	cmpReport := get(cmpHTML)
	openHTML("13-run-report", report)
	openHTML("14-compare-report", cmpReport)
}
