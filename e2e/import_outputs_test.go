package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
	"tribunal/store"
)

// TestImportOutputsInBrowser: on the Import page a user switches to "Your
// own outputs", chooses a file of two models' answers, picks a judge and a
// check, and lands on the new run's page, which scores the answers without
// asking either model anything. A file with a bad row comes back with the
// row's line and the picks kept.
func TestImportOutputsInBrowser(t *testing.T) {
	a := startApp(t, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: `{"score": 8, "reasoning": "fine"}`}
		}
		t.Errorf("a target was asked: %q", r.Last())
		return llmtest.Reply{Content: "no"}
	})
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "base_url": a.fake.URL}, &prov, 201)
	file := filepath.Join(t.TempDir(), "answers.csv")
	if err := os.WriteFile(file, []byte("question,reference,model,response,latency_ms\n"+
		"Capital of France?,Paris,gpt-mine,Paris.,900\nCapital of France?,,llama-mine,Lyon.,300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, a.URL)

	b.open("/import")
	b.click("[data-testid=import-outputs-tab]")
	b.waitFor("the outputs form", `document.querySelector("[data-testid=import-outputs-form]")`, 15*time.Second)
	b.do("choose the file", 10*time.Second, chromedp.SetUploadFiles(chromedp.CSS("[data-testid=outputs-file]"), []string{file}))
	b.choose("[data-testid=outputs-judges] select[name=judge_provider_id]", "Fake")
	b.typeInto("[data-testid=outputs-judges] input[name=judge_model]", "fake-judge")
	b.click(`[data-testid=outputs-checks] input[value=contains]`)
	b.click("[data-testid=outputs-import-button]")
	b.waitFor("the run's page", `/^\/runs\/\d+$/.test(location.pathname)`, 10*time.Second)
	b.waitFor("the run scored", `document.body.innerText.includes("llama-mine") && document.body.innerText.includes("gpt-mine") &&
		/finished/i.test(document.body.innerText)`, 20*time.Second)

	var runs struct {
		Items []struct {
			Kind   store.RunKind   `json:"kind"`
			Status store.RunStatus `json:"status"`
		}
	}
	apiCall(t, a, "GET", "/api/runs", nil, &runs, 200)
	if len(runs.Items) != 1 || runs.Items[0].Kind != store.RunImported || runs.Items[0].Status != store.RunFinished {
		t.Errorf("runs: %+v", runs.Items)
	}

	b.open("/import?mode=outputs")
	b.click("[data-testid=outputs-checks] input[value=f1]")
	b.click("details:has([data-testid=outputs-text]) > summary")
	mustEval[bool](b, "paste a bad file", `(() => { document.querySelector("[data-testid=outputs-text]").value = "question,model,response,cost_usd\nq?,m,r,lots\n"; return true })()`)
	b.click("[data-testid=outputs-import-button]")
	b.waitFor("the bad row", `document.querySelector("[data-testid=outputs-problems]")`, 10*time.Second)
	if row := b.text("[data-testid=outputs-problems] [data-testid=import-problem]"); !strings.Contains(row, "2") || !strings.Contains(row, "cost_usd") || !strings.Contains(row, "not a number") {
		t.Errorf("problem row %q", row)
	}
	b.check("the check kept", `document.querySelector("[data-testid=outputs-checks] input[value=f1]").checked`, time.Second)
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
