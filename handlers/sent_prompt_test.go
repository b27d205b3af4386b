package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// The item page and API show the prompt the model really got where package
// prompt wrapped the question, and nothing extra where it did not.
func TestItemShowsPromptAsSent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: "42"} })
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"wrapped","category":"c","question":"Sum the <numbers>.",
			"input":"40 and 2","constraints":"answer with one number","examples":"7","judge_instructions":"JUDGE-ONLY",
			"checks":[{"type":"contains","value":"42"}]}`}, 201, nil)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"plain","category":"c","question":"Say 42.","checks":[{"type":"contains","value":"42"}]}`}, 201, nil)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"C","task_ids":["wrapped","plain"]}`}, 201, &col)
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[%d],"metrics":["check_contains"]}`, p.ID, col.ID)}, 201, &run)
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("run: %+v", r)
		}
		var items struct {
			Items []struct {
				ID     int64  `json:"id"`
				TaskID string `json:"task_id"`
			} `json:"items"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items", run.ID)}, 200, &items)
		if len(items.Items) != 2 {
			t.Fatalf("items: %+v", items)
		}
		for _, it := range items.Items {
			var d runs.ItemDetail
			a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d", it.ID)}, 200, &d)
			_, doc, _ := a.get(t, fmt.Sprintf("/items/%d", it.ID))
			shown := doc.Find("[data-testid=item-sent]").Text()
			switch it.TaskID {
			case "wrapped":
				sent := d.Turns[0].Sent
				for _, want := range []string{"Sum the <numbers>.", "40 and 2", "CRITICAL CONSTRAINTS", "answer with one number", "7"} {
					if !strings.Contains(sent, want) || !strings.Contains(shown, want) {
						t.Errorf("sent prompt lacks %q: API %q, page %q", want, sent, shown)
					}
				}
				if strings.Contains(sent, "JUDGE-ONLY") {
					t.Errorf("judge-only text sent to the model: %q", sent)
				}
				// What the item shows is what the fake received.
				got := false
				for _, c := range a.fake.Calls() {
					if strings.Contains(c.Question(), "40 and 2") {
						got = c.Question() == sent
					}
				}
				if !got {
					t.Error("the shown prompt is not the one the model was sent")
				}
			case "plain":
				if d.Turns[0].Sent != "" || shown != "" {
					t.Errorf("a plain question shows a sent prompt: %q / %q", d.Turns[0].Sent, shown)
				}
			}
		}
	})
}
