package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"tribunal/langfuse/langfusetest"
	"tribunal/store"
)

// TestImportFromSourcesPage: from the Sources page a user opens a source's
// import form, names a dataset, keeps "the newest run", adds a check and
// imports; the run page says where the answers came from, follows the run
// to its end and offers no Re-run.
func TestImportFromSourcesPage(t *testing.T) {
	a := startApp(t, nil)
	fake := langfusetest.New(t)
	var items []langfusetest.Item
	var runItems []langfusetest.RunItem
	for i := range 4 {
		items = append(items, langfusetest.Item{ID: fmt.Sprintf("item-%d", i), Input: fmt.Sprintf("What is %d + %d?", i, i),
			ExpectedOutput: fmt.Sprint(2 * i)})
		trace := fmt.Sprintf("trace-%d", i)
		runItems = append(runItems, langfusetest.RunItem{DatasetItemID: items[i].ID, TraceID: trace})
		fake.AddTrace(langfusetest.Trace{ID: trace, Output: fmt.Sprint(2 * i), LatencySeconds: 0.4, TotalCost: 0.002})
	}
	fake.AddDataset("arithmetic", items...)
	fake.AddRun("arithmetic", "prompt-v2", runItems...)
	var src store.Source
	apiCall(t, a, "POST", "/api/sources", map[string]any{"name": "Team Langfuse", "base_url": fake.URL,
		"public_key": fake.PublicKey, "secret_key": fake.SecretKey}, &src, 201)
	b := newBrowser(t, a.URL)

	b.open("/sources")
	b.click(fmt.Sprintf("#source-%d [data-testid=import-source]", src.ID))
	b.waitFor("the import form", `document.querySelector("[data-testid=source-import-form]")`, 15*time.Second)
	if !mustEval[bool](b, "the newest run ticked", `document.querySelector("[data-testid=import-latest]").checked`) {
		t.Error("the form does not start from the newest run")
	}
	b.typeInto("[data-testid=import-dataset]", "arithmetic")
	b.click("[data-testid=import-checks] input[value=f1]")
	b.click("[data-testid=start-import]")

	b.waitFor("the run page", `document.querySelector("[data-testid=imported-from]")`, 10*time.Second)
	if got := strings.Join(strings.Fields(b.text("[data-testid=imported-from]")), " "); got != "Imported from Team Langfuse · dataset arithmetic · run prompt-v2" {
		t.Errorf("origin = %q", got)
	}
	b.waitFor("the run to end", `document.querySelector("#progress [data-testid=status]").dataset.status === "FINISHED"`, 30*time.Second)
	if mustEval[bool](b, "a Re-run button", `!!document.querySelector("[data-testid=rerun]")`) {
		t.Error("an imported run offers Re-run")
	}
	if flash := b.text("[data-testid=flash-success]"); !strings.Contains(flash, "Imported 4 items") {
		t.Errorf("flash = %q", flash)
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		t.Errorf("javascript errors: %v", errs)
	}
}
