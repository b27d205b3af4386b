package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// startAppWithStore is startApp that also hands back the store, so a test
// can check what the pages saved.
func startAppWithStore(t *testing.T, script func(llmtest.ChatRequest) llmtest.Reply) (*app, *store.Store) {
	t.Helper()
	st := storetest.SQLite(t)
	fake := llmtest.New(t, script)
	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond}, st, engine.NewBroker(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	srv := httptest.NewServer(handlers.New(st, eng, slog.Default()))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		wg.Wait()
	})
	return &app{URL: srv.URL, fake: fake}, st
}

// apiCall sends a JSON API request and fails the test unless it answers want.
func apiCall(t *testing.T, a *app, method, path string, in, out any, want int) {
	t.Helper()
	code, body, err := crashDo(method, a.URL+path, in, out)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if code != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, body)
	}
}

// waitFinished polls the API until the run has finished.
func waitFinished(t *testing.T, a *app, id int64) {
	t.Helper()
	var run struct{ Status string }
	for deadline := time.Now().Add(30 * time.Second); run.Status != "FINISHED"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run %d did not finish: %s", id, run.Status)
		}
		apiCall(t, a, "GET", fmt.Sprintf("/api/runs/%d", id), nil, &run, 200)
	}
}

// gradingQuestions and the strict judge's score of each: the lenient judge
// gives 8, so the panel disagrees most on 2+2, then on 3+3, never on 1+1.
var gradingQuestions = []struct {
	key, question string
	strict        int
}{
	{"gr-1", "What is 1+1?", 8},
	{"gr-2", "What is 2+2?", 2},
	{"gr-3", "What is 3+3?", 5},
}

func gradingScript(r llmtest.ChatRequest) llmtest.Reply {
	switch {
	case r.IsWarmup():
		return llmtest.Reply{Content: "Hello!"}
	case !r.IsJudge():
		return llmtest.Reply{Content: "The answer to «" + r.Last() + "» is easy."}
	}
	score := 8
	if r.Model == "fake-judge" {
		for _, q := range gradingQuestions {
			if strings.Contains(r.Last(), q.question) {
				score = q.strict
			}
		}
	}
	return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "%s gives %d."}`, score, r.Model, score)}
}

// TestGradingByKeyboard grades three items of a finished run with the keys
// alone, in a real browser, and checks exactly those grades were stored.
func TestGradingByKeyboard(t *testing.T) {
	chromePath(t)
	a, st := startAppWithStore(t, gradingScript)
	ctx := t.Context()

	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": a.fake.URL}, &prov, 201)
	var keys []string
	for _, q := range gradingQuestions {
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": q.key, "category": "math", "question": q.question,
			"excellent": "the exact sum", "incorrect_answer_direction": "any other number"}, nil, 201)
		keys = append(keys, q.key)
	}
	var col struct{ ID int64 }
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Grading", "task_ids": keys}, &col, 201)
	var strict, lenient store.Judge
	apiCall(t, a, "POST", "/api/judges", map[string]any{"name": "Strict", "provider_id": prov.ID, "model": "fake-judge", "personality_name": "Strict examiner"}, &strict, 201)
	apiCall(t, a, "POST", "/api/judges", map[string]any{"name": "Lenient", "provider_id": prov.ID, "model": "fake-large", "personality_name": "Lenient teacher"}, &lenient, 201)
	var run struct {
		ID     int64
		Status string
	}
	apiCall(t, a, "POST", "/api/runs", map[string]any{"name": "Grading run", "judge_ids": []int64{strict.ID, lenient.ID},
		"targets": []map[string]any{{"provider_id": prov.ID, "model": "fake-small"}}, "collection_ids": []int64{col.ID}}, &run, 201)
	waitFinished(t, a, run.ID)

	b := newBrowser(t, a.URL)
	b.open(fmt.Sprintf("/runs/%d/grade", run.ID))
	b.waitFor("the grading panel", `document.querySelector("#grading[data-item-id]")`, 10*time.Second)
	itemID := func() int64 {
		id, _ := strconv.ParseInt(mustEval[string](b, "item id", `document.querySelector("#grading").dataset.itemId`), 10, 64)
		return id
	}
	progress := func() string { return b.text("[data-testid=grade-progress]") }
	if task, p := b.text("[data-testid=grading-task-id]"), progress(); task != "gr-2" || p != "graded 0 of 3" {
		t.Errorf("first item is %s (%s), want gr-2, where the judges disagree most, and graded 0 of 3", task, p)
	}
	for _, want := range []string{"What is 2+2?", "The answer to «What is 2+2?» is easy.", "the exact sum", "any other number",
		"Strict", "2/10", "fake-judge gives 2.", "Lenient", "8/10", "fake-large gives 8."} {
		if !strings.Contains(b.text("#grading"), want) {
			t.Errorf("the grading panel does not show %q", want)
		}
	}
	b.screenshot("/tmp/e2e-grading.png")

	// press sends a key to whatever has the focus, as a user's keyboard does.
	press := func(key string) {
		t.Helper()
		b.do("press "+key, 15*time.Second, chromedp.KeyEvent(key))
	}
	waitGraded := func(n int, from int64) {
		t.Helper()
		b.waitFor(fmt.Sprintf("graded %d of 3", n), fmt.Sprintf(
			`document.querySelector("[data-testid=grade-progress]").innerText.trim() === "graded %d of 3" && !document.querySelector("#grade-form.htmx-request")`, n), 10*time.Second)
		if n < 3 && itemID() == from {
			t.Fatalf("after grading item %d the panel still shows it", from)
		}
	}

	// 1: c grades correct and brings the next item.
	first := itemID()
	press("c")
	waitGraded(1, first)
	if !strings.Contains(b.text("[data-testid=grade-saved]"), "gr-2 · fake-small graded correct") {
		t.Errorf("saved message: %q", b.text("[data-testid=grade-saved]"))
	}
	if task := b.text("[data-testid=grading-task-id]"); task != "gr-3" {
		t.Errorf("second item is %s, want gr-3", task)
	}

	// 2: typing a note (with c, p and w in it) grades nothing; Esc leaves
	// the notes, then p grades partial with the note.
	second := itemID()
	note := "close, but wrong precision: c p w 1 2 3"
	b.typeInto("#grade-notes", note)
	time.Sleep(300 * time.Millisecond) // a grade sent by a stray key would be on its way by now
	if got := itemID(); got != second {
		t.Fatalf("typing in the notes moved the panel from item %d to %d", second, got)
	}
	if g, err := st.ItemGrade(ctx, second); err != nil || g != nil {
		t.Fatalf("typing in the notes stored a grade: %+v %v", g, err)
	}
	if got := mustEval[string](b, "notes", `document.querySelector("#grade-notes").value`); got != note {
		t.Errorf("notes hold %q, want %q", got, note)
	}
	press(kb.Escape)
	press("p")
	waitGraded(2, second)

	// 3: w grades wrong; with every item graded the panel stays on it.
	third := itemID()
	if task := b.text("[data-testid=grading-task-id]"); task != "gr-1" {
		t.Errorf("third item is %s, want gr-1", task)
	}
	press("w")
	waitGraded(3, third)

	want := map[int64]store.Grade{first: {Grade: "correct"}, second: {Grade: "partial", Notes: note}, third: {Grade: "wrong"}}
	for id, w := range want {
		g, err := st.ItemGrade(ctx, id)
		if err != nil || g == nil || g.Grade != w.Grade || g.Notes != w.Notes {
			t.Errorf("item %d: stored grade %+v (%v), want %s with notes %q", id, g, err, w.Grade, w.Notes)
		}
	}
	// Exactly those: the API lists three graded items, each with its grade.
	var items store.Page[store.ItemView]
	apiCall(t, a, "GET", fmt.Sprintf("/api/runs/%d/items", run.ID), nil, &items, 200)
	graded := 0
	for _, it := range items.Items {
		if it.Grade != nil {
			graded++
			if w, ok := want[it.ID]; !ok || *it.Grade != w.Grade {
				t.Errorf("API: item %d graded %q", it.ID, *it.Grade)
			}
		}
	}
	if graded != 3 || items.Total != 3 {
		t.Errorf("API: %d of %d items graded, want 3 of 3", graded, items.Total)
	}

	// k goes back through this session's items with their grades and notes.
	press("k")
	b.waitFor("the second item again", fmt.Sprintf(`document.querySelector("#grading").dataset.itemId === "%d"`, second), 15*time.Second)
	if !mustEval[bool](b, "partial pressed", `document.querySelector("button[data-grade=partial]").getAttribute("aria-pressed") === "true"`) ||
		mustEval[string](b, "notes", `document.querySelector("#grade-notes").value`) != note {
		t.Errorf("going back does not show the partial grade and its note")
	}
	if u := mustEval[string](b, "location", "location.search"); !strings.Contains(u, fmt.Sprintf("item=%d", second)) {
		t.Errorf("going back did not push the item's URL: %q", u)
	}
	press("j")
	b.waitFor("the third item again", fmt.Sprintf(`document.querySelector("#grading").dataset.itemId === "%d"`, third), 15*time.Second)
	b.screenshot("/tmp/e2e-grading-done.png")

	// Only ungraded: nothing left.
	b.click("[data-testid=grading-ungraded]")
	b.waitFor("the empty queue", `document.querySelector("[data-testid=grading-empty]")`, 15*time.Second)
	if got := b.text("[data-testid=grading-empty]"); !strings.Contains(got, "Every item matching these filters is graded (3 of 3)") {
		t.Errorf("empty queue says %q", got)
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors in the browser:\n  %s", strings.Join(errs, "\n  "))
	}
}

// TestJudgePagesInBrowser creates a judge on /judges by clicking and
// typing, builds a style with built-in metrics, and sees a built-in style
// refuse deletion.
func TestJudgePagesInBrowser(t *testing.T) {
	chromePath(t)
	a := startApp(t, script)
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": a.fake.URL}, &prov, 201)
	b := newBrowser(t, a.URL)

	b.open("/judges")
	b.waitFor("the judge form", `document.querySelector("form[data-testid=judge-form]")`, 15*time.Second)
	form := "form[data-testid=judge-form] "
	b.typeInto(form+"input[name=name]", "Strict Qwen")
	b.choose(form+"select[name=provider_id]", "Fake")
	b.waitFor("the judge's models", `document.querySelector("#judge-models-box").innerText.includes("3 model(s) available")`, 10*time.Second)
	b.typeInto(form+"input[name=model]", "fake-judge")
	b.typeInto(form+"input[name=personality_name]", "Strict examiner")
	desc := mustEval[string](b, "description", `document.querySelector("textarea[name=personality_description]").value`)
	if !strings.Contains(desc, "strict examiner") {
		t.Errorf("the preset did not fill the description: %q", desc)
	}
	b.choose(form+"select[name=style_id]", "Five metrics (0–5) · v1 · scale 0–5")
	b.typeInto(form+"input[name=temperature]", "0.3")
	b.choose(form+"select[name=reasoning_effort]", "low")
	b.screenshot("/tmp/e2e-judges-form.png")
	b.click(form + "button[type=submit]")
	b.waitFor("the judges table", `document.querySelector("[data-testid=judges-table]")`, 10*time.Second)
	row := b.text("[data-testid=judge-row]")
	for _, want := range []string{"Strict Qwen", "Fake / fake-judge", "Strict examiner", "Five metrics (0–5) v1", "temperature 0.3", "reasoning low"} {
		if !strings.Contains(row, want) {
			t.Errorf("judge row %q lacks %q", row, want)
		}
	}
	var judges []store.Judge
	apiCall(t, a, "GET", "/api/judges", nil, &judges, 200)
	if len(judges) != 1 || judges[0].Name != "Strict Qwen" || judges[0].Model != "fake-judge" || judges[0].ProviderID == nil ||
		*judges[0].ProviderID != prov.ID || judges[0].PersonalityDescription != desc || judges[0].Settings.Temperature == nil ||
		*judges[0].Settings.Temperature != 0.3 || judges[0].Settings.ReasoningEffort != "low" {
		t.Errorf("saved judges: %+v", judges)
	}
	b.screenshot("/tmp/e2e-judges.png")

	// A style from built-in metrics, added as rows with HTMX.
	b.click("[data-testid=styles-link]")
	b.waitFor("the styles page", `location.pathname === "/styles" && document.querySelector("[data-testid=styles-table]")`, 15*time.Second)
	b.click("[data-testid=new-style]")
	sform := "form[data-testid=style-form] "
	b.typeInto(sform+"input[name=name]", "Exam (0–100)")
	b.do("clear the scale", 15*time.Second,
		chromedp.SetValue(chromedp.CSS(sform+"input[name=scale_min]"), "0"),
		chromedp.SetValue(chromedp.CSS(sform+"input[name=scale_max]"), "100"))
	// One click at a time: under load a second click sent before the first
	// one's swap has landed was lost (CI, once).
	b.click("[data-testid=add-builtin-accuracy]")
	b.waitFor("a metric row added", `document.querySelectorAll("#metrics .metric-row").length === 2`, 15*time.Second)
	b.click("[data-testid=add-builtin-coherence]")
	b.waitFor("two metric rows added", `document.querySelectorAll("#metrics .metric-row").length === 3`, 15*time.Second)
	b.click("#metrics .metric-row:first-child button[aria-label='Remove metric']")
	b.waitFor("the blank row gone", `document.querySelectorAll("#metrics .metric-row").length === 2`, 15*time.Second)
	b.screenshot("/tmp/e2e-styles.png")

	// A scale upside down comes back with the problem under the scale and
	// everything typed still there.
	b.do("turn the scale", 15*time.Second, chromedp.SetValue(chromedp.CSS(sform+"input[name=scale_min]"), "100"),
		chromedp.SetValue(chromedp.CSS(sform+"input[name=scale_max]"), "0"))
	b.click(sform + "[data-testid=save-style]")
	b.waitFor("the scale's error", `document.querySelector("[data-testid=error-scale]")`, 10*time.Second)
	if got := b.text("[data-testid=error-scale]"); !strings.Contains(got, "scale_max must exceed scale_min") {
		t.Errorf("scale error says %q", got)
	}
	kept := mustEval[[]string](b, "kept input", `[...document.querySelectorAll("form[data-testid=style-form] input[name=metric_name]")].map(i => i.value).concat([document.querySelector("form[data-testid=style-form] input[name=name]").value])`)
	if strings.Join(kept, ",") != "accuracy,coherence,Exam (0–100)" {
		t.Errorf("after the refusal the form holds %q", kept)
	}
	b.screenshot("/tmp/e2e-styles-error.png")
	b.do("fix the scale", 15*time.Second, chromedp.SetValue(chromedp.CSS(sform+"input[name=scale_min]"), "0"),
		chromedp.SetValue(chromedp.CSS(sform+"input[name=scale_max]"), "100"))
	b.click(sform + "[data-testid=save-style]")
	b.waitFor("the style history", `/^\/styles\/\d+$/.test(location.pathname) && document.querySelector("[data-testid=style-version]")`, 10*time.Second)
	if got := b.text("[data-testid=style-version]"); !strings.Contains(got, "Version 1") || !strings.Contains(got, "0–100") ||
		!strings.Contains(got, "accuracy") || !strings.Contains(got, "coherence") {
		t.Errorf("new style's history: %q", got)
	}
	b.screenshot("/tmp/e2e-style-history.png")

	// A built-in style offers no Delete, and the API refuses one with 409.
	b.open("/styles")
	b.waitFor("the styles table", `document.querySelector("[data-testid=styles-table]")`, 10*time.Second)
	if !mustEval[bool](b, "built-in Delete disabled", `[...document.querySelectorAll("[data-testid=style-row]")].filter(r => r.innerText.includes("Default")).every(r => r.querySelector("[data-testid=delete-style]").disabled)`) {
		t.Errorf("a built-in style's Delete is enabled")
	}
	var def []store.JudgementStyle
	apiCall(t, a, "GET", "/api/judgement-styles", nil, &def, 200)
	for _, s := range def {
		if s.Builtin {
			apiCall(t, a, "DELETE", fmt.Sprintf("/api/judgement-styles/%d", s.ID), nil, nil, 409)
		}
	}
	var styles []store.JudgementStyle
	apiCall(t, a, "GET", "/api/judgement-styles", nil, &styles, 200)
	if len(styles) != 4 {
		t.Errorf("%d styles, want the three built-ins and the new one", len(styles))
	}
	b.screenshot("/tmp/e2e-styles-refused.png")
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors in the browser:\n  %s", strings.Join(errs, "\n  "))
	}
}
