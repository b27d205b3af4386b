package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// TestRunPageLive watches a run of a slow model and judge on the run page:
// the panel moves through answering, then judging, with its counts rising
// and an ETA, as does its row in the runs list; at 1400 px the actions stay on one row and log times on one
// line; the per-model table's columns picker keeps its choice across a
// reload; a failure group's retry says what it did.
func TestRunPageLive(t *testing.T) {
	a := startApp(t, func(r llmtest.ChatRequest) llmtest.Reply {
		rep := llmtest.DefaultReply(r)
		switch {
		case r.IsWarmup():
			return rep
		case strings.Contains(r.Last(), "lv-broken"):
			return llmtest.Reply{Status: 400, Content: "bad request"}
		}
		rep.Delay = 500 * time.Millisecond // slow enough to watch each phase and get an ETA
		return rep
	})
	var p store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Slow", "base_url": a.fake.URL, "concurrency": 1}, &p, 201)
	keys := []string{"lv-broken"}
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("lv-%d", i))
	}
	for _, k := range keys {
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": k, "category": "c", "question": k}, nil, 201)
	}
	var col store.CollectionDetail
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Live", "task_ids": keys}, &col, 201)
	var run struct{ ID int64 }
	apiCall(t, a, "POST", "/api/runs", map[string]any{
		"judge":          map[string]any{"provider_id": p.ID, "model": "judge"},
		"targets":        []map[string]any{{"provider_id": p.ID, "model": "slow"}},
		"collection_ids": []int64{col.ID},
	}, &run, 201)

	b := newBrowser(t, a.URL)
	b.do("1400 px wide", 15*time.Second, chromedp.EmulateViewport(1400, 900))
	b.open(fmt.Sprintf("/runs/%d", run.ID))

	// The panel's counts, read from its own text: "3/9 answered · 0/9 judged".
	count := `(() => { const m = (document.querySelector("[data-testid=progress-count]")||{}).innerText.match(/(\d+)\/(\d+) answered · (\d+)\/\d+ judged/);
		return m ? {answered: +m[1], total: +m[2], judged: +m[3]} : {answered: -1, total: -1, judged: -1} })()`
	phase := `(document.querySelector("[data-testid=phase]")||{}).dataset?.phase`
	b.waitFor("answering under way", fmt.Sprintf(`%s === "BENCHMARKING" && %s.answered > 0 && %s.answered < %s.total`, phase, count, count, count), 30*time.Second)
	b.waitFor("an ETA", `document.querySelector("[data-testid=eta]") && /left/.test(document.querySelector("[data-testid=eta]").innerText)`, 30*time.Second)
	b.waitFor("judging under way", fmt.Sprintf(`%s === "JUDGING" && %s.answered === %s.total && %s.judged > 0 && %s.judged < %s.total`,
		phase, count, count, count, count, count), 30*time.Second)

	// Meanwhile the runs list's row moves by itself, keeps its tick, and
	// stops polling once the run has ended.
	b.open("/runs")
	row := fmt.Sprintf(`document.querySelector("[data-testid=run-row][data-run-id='%d']")`, run.ID)
	percent := mustEval[string](b, "row progress", row+`.querySelector("[data-testid=run-progress]").dataset.percent`)
	b.click(fmt.Sprintf(`[data-testid=run-row][data-run-id='%d'] input[name=run_ids]`, run.ID))
	b.screenshot("/tmp/e2e-runs-live.png")
	b.waitFor("the row's progress to move", row+`.querySelector("[data-testid=run-progress]").dataset.percent !== `+js(percent), 15*time.Second)
	b.waitFor("the row to end and stop polling", row+`.querySelector("[data-testid=status]").dataset.status === "FINISHED" && !`+row+`.hasAttribute("hx-trigger")`, 60*time.Second)
	if !mustEval[bool](b, "tick kept", row+`.querySelector("input[name=run_ids]").checked`) {
		t.Errorf("the row lost its compare tick when it reloaded\n%s", b.diagnose())
	}
	b.open(fmt.Sprintf("/runs/%d", run.ID))
	b.waitFor("the run to end", `document.querySelector("#progress [data-testid=status]").dataset.status === "FINISHED"`, 60*time.Second)
	b.waitFor("the results of the ended run", `document.querySelector("[data-testid=per-model] tbody tr")`, 15*time.Second)

	oneRow := mustEval[bool](b, "actions on one row", `(() => {
		const els = [...document.querySelectorAll(".run-actions > *")].filter(e => e.offsetParent);
		return els.length >= 9 && els.every(e => e.getBoundingClientRect().top === els[0].getBoundingClientRect().top);
	})()`)
	if !oneRow {
		t.Errorf("the run's actions wrap at 1400 px\n%s", b.diagnose())
	}
	oneLine := mustEval[bool](b, "log times on one line", `(() => {
		const ts = [...document.querySelectorAll(".live-log .log-time")].filter(e => e.offsetParent);
		return ts.length > 0 && ts.every(e => e.getBoundingClientRect().height <= parseFloat(getComputedStyle(e).lineHeight) * 1.2);
	})()`)
	if !oneLine {
		t.Errorf("a log entry's time wraps\n%s", b.diagnose())
	}

	// The columns picker: show tokens/s, hide Completed; a reload keeps both.
	visible := func(col string) string {
		return fmt.Sprintf(`(() => { const c = document.querySelector('[data-testid=per-model] th[data-col=%q]'); return c && !c.hidden && c.offsetParent !== null })()`, col)
	}
	b.waitFor("the columns picker", `!document.querySelector("[data-testid=per-model-columns]").hidden`, 10*time.Second)
	if mustEval[bool](b, "tokens/s hidden by default", visible("tps")) || !mustEval[bool](b, "completed shown by default", visible("completed")) {
		t.Fatalf("default columns wrong\n%s", b.diagnose())
	}
	b.click("[data-testid=per-model-columns] summary")
	b.click(`[data-testid=per-model-columns] input[data-col="tps"]`)
	b.click(`[data-testid=per-model-columns] input[data-col="completed"]`)
	b.waitFor("tokens/s shown, completed hidden", visible("tps")+" && !"+visible("completed"), 15*time.Second)
	b.open(fmt.Sprintf("/runs/%d", run.ID))
	b.waitFor("the choice kept after a reload", visible("tps")+" && !"+visible("completed"), 10*time.Second)
	if !mustEval[bool](b, "picker ticks kept", `document.querySelector('[data-testid=per-model-columns] input[data-col="tps"]').checked && !document.querySelector('[data-testid=per-model-columns] input[data-col="completed"]').checked`) {
		t.Errorf("the picker's ticks were not kept\n%s", b.diagnose())
	}

	// The answering failure's group retries it and says so.
	b.click("[data-testid=failure-row] [data-testid=group-retry-failed]")
	b.waitFor("the retry's confirmation", `/1 item sent back for another try/.test((document.querySelector("#flash")||{}).innerText)`, 15*time.Second)
	// The retried run ends again; the results swapped in keep the choice.
	b.waitFor("the retried run to end", `document.querySelector("#progress [data-testid=status]").dataset.status === "FINISHED"`, 30*time.Second)
	b.waitFor("the choice kept across live swaps", `!document.querySelector("[data-testid=per-model-columns]").hidden && `+visible("tps")+" && !"+visible("completed"), 10*time.Second)
	b.screenshot("/tmp/e2e-runpage.png")
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
