package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
)

// slowScript answers every call but a warm-up after a delay, so the run
// page can be watched while two providers answer and the judge judges.
func slowScript(r llmtest.ChatRequest) llmtest.Reply {
	rep := llmtest.DefaultReply(r)
	if !r.IsWarmup() {
		rep.Delay = 200 * time.Millisecond
	}
	return rep
}

// TestPipelineRunInBrowser: a run with targets on two providers, started
// from the new-run form with Pipeline ticked, shows live (over SSE, no
// reload) "Running now" with both providers' groups answering at once and
// the judge judging beside them; it finishes with every item judged, and
// its re-run judges while it answers too.
func TestPipelineRunInBrowser(t *testing.T) {
	chromePath(t)
	a := startApp(t, slowScript)
	fakeB := llmtest.New(t, slowScript)
	for _, p := range []struct{ name, url string }{{"Alpha", a.fake.URL}, {"Beta", fakeB.URL}} {
		apiCall(t, a, "POST", "/api/providers", map[string]any{"name": p.name, "base_url": p.url, "concurrency": 1}, nil, 201)
	}
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("pl-%d", i))
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": keys[i], "category": "c", "question": "Say " + keys[i]}, nil, 201)
	}
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Pipe", "task_ids": keys}, nil, 201)

	b := newBrowser(t, a.URL)
	b.open("/runs/new")
	b.waitFor("the new-run form", `document.querySelector("form[data-testid=new-run-form]")`, 15*time.Second)
	pickProviderModel(b, "judge", 0, "Alpha", "fake-judge")
	pickProviderModel(b, "target", 0, "Alpha", "fake-small")
	b.click("[data-testid=add-target]")
	b.waitFor("a second target picker", `document.querySelector("[data-testid=target-picker-1]")`, 15*time.Second)
	pickProviderModel(b, "target", 1, "Beta", "fake-large")
	b.do("tick the collection Pipe", 15*time.Second, chromedp.Click(chromedp.Search(
		`//form[@data-testid="new-run-form"]//label[contains(., "Pipe")]/input[@name="collection_ids"]`)))
	b.click("[data-testid=pipeline]")
	if !mustEval[bool](b, "pipeline ticked", `document.querySelector("[data-testid=pipeline]").checked`) {
		t.Fatalf("clicking Pipeline did not tick it\n%s", b.diagnose())
	}
	b.click("[data-testid=start-run]")
	b.waitFor("the run page", `/^\/runs\/\d+$/.test(location.pathname) && document.readyState !== "loading" && document.querySelector("[data-testid=progress]")`, 10*time.Second)
	first := mustEval[string](b, "run path", "location.pathname")
	watchPipeline(t, b, "the run", 20)

	mustEval[bool](b, "accept the confirmation", `(window.confirm = () => true, true)`)
	b.click("[data-testid=rerun]")
	b.waitFor("the re-run's page", fmt.Sprintf(`/^\/runs\/\d+$/.test(location.pathname) && location.pathname !== %s && document.readyState !== "loading" && document.querySelector("[data-testid=progress]")`,
		js(first)), 10*time.Second)
	watchPipeline(t, b, "the re-run", 20)
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors: %q", errs)
	}
}

// pickProviderModel chooses a provider in the form's picker role i, waits
// for its models, and types the model.
func pickProviderModel(b *browser, role string, i int, provider, model string) {
	b.t.Helper()
	picker := fmt.Sprintf("[data-testid=%s-picker-%d]", role, i)
	b.choose(picker+" select", provider)
	box := fmt.Sprintf("#%s-models-%d-box", role, i)
	b.waitFor("models of "+provider, fmt.Sprintf(`document.querySelector(%s).innerText.includes("model(s) available")`, js(box)), 10*time.Second)
	b.typeInto(picker+" input[name="+role+"_model]", model)
}

// watchPipeline records every "Running now" line a run's page shows until
// the run has finished, and checks what the user saw: both providers'
// groups answering at once, with the judge judging beside them, then the
// run finished with all total items judged and both models scored, on the
// page first opened.
func watchPipeline(t *testing.T, b *browser, what string, total int) {
	t.Helper()
	mustEval[bool](b, "observe Running now", `(() => {
		const seen = window.__e2eRunning = [];
		window.__e2eNoReload = true;
		const rec = () => {
			const groups = [...document.querySelectorAll("[data-testid=running-now] [data-testid=running-group]")].map(g => g.innerText.replace(/\s+/g, " ").trim());
			const s = groups.join(" | ");
			if (s && seen[seen.length - 1] !== s) seen.push(s);
		};
		rec();
		new MutationObserver(rec).observe(document.body, {childList: true, subtree: true, characterData: true});
		return true;
	})()`)
	b.waitFor("the run to finish", `(document.querySelector("#progress [data-testid=status]") || {dataset: {}}).dataset.status === "FINISHED"`, 60*time.Second)
	seen := mustEval[[]string](b, "Running now lines seen", "window.__e2eRunning || []")
	if !mustEval[bool](b, "the same page", "window.__e2eNoReload === true") {
		t.Errorf("%s: the page reloaded; it should move live over SSE", what)
	}
	both, beside := false, false
	for _, s := range seen {
		alpha := strings.Contains(s, "Alpha · fake-small (answering")
		beta := strings.Contains(s, "Beta · fake-large (answering")
		judging := strings.Contains(s, "Alpha · fake-judge (judging")
		both = both || (alpha && beta)
		beside = beside || (alpha && beta && judging)
	}
	if !both || !beside {
		t.Errorf("%s: Running now never showed both providers answering at once (%v) with the judge judging beside them (%v); it showed %q",
			what, both, beside, seen)
	}
	want := fmt.Sprintf("%d/%d answered · %d/%d judged", total, total, total, total)
	if got := strings.Join(strings.Fields(b.text("[data-testid=progress-count]")), " "); got != want {
		t.Errorf("%s finished with its progress reading %q, want %q", what, got, want)
	}
	if n := mustEval[int](b, "Running now lines", `document.querySelectorAll("[data-testid=running-now]").length`); n != 0 {
		t.Errorf("%s finished but still shows Running now", what)
	}
	progress := strings.Join(strings.Fields(b.text("#progress")), " ")
	if !strings.Contains(progress, fmt.Sprintf("Completed %d · failed 0", total)) {
		t.Errorf("%s finished reading %q, want every item completed", what, progress)
	}
	b.check(what+"'s scores of both models", `document.querySelectorAll("[data-testid=per-model] tbody tr").length === 2`, 15*time.Second)
}
