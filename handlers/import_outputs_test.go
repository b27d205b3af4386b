package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

type outputsReply struct {
	RunID        int64 `json:"run_id"`
	CollectionID int64 `json:"collection_id"`
	TasksCreated int   `json:"tasks_created"`
	TasksUpdated int   `json:"tasks_updated"`
	Items        int   `json:"items"`
	Models       int   `json:"models"`
}

const outputsJSONL = `{"task_id": "cap", "question": "Capital of France?", "reference": "Paris", "model": "big", "response": "Paris.", "latency_ms": 800, "cost_usd": 0.001}
{"task_id": "cap", "model": "small", "response": "Lyon."}
{"question": "2+2?", "reference": "4", "model": "big", "response": "4"}
`

func judgeOnly(r llmtest.ChatRequest) llmtest.Reply {
	if r.IsJudge() {
		return llmtest.Reply{Content: `{"score": 7, "reasoning": "ok"}`}
	}
	return llmtest.Reply{Content: "a target was asked"}
}

// POST /api/import?kind=outputs: the raw body or a multipart file becomes an
// IMPORTED run (201 with its counts); a bad row is a 422 naming its line,
// with nothing written; neither judge nor checks is a 422; an unknown kind
// is a 400; kind=tasks still imports tasks.
func TestImportOutputsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, judgeOnly)
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)

		q := url.Values{"kind": {"outputs"}, "judge_provider_id": {fmt.Sprint(p.ID)}, "judge_model": {"fake-judge"},
			"checks": {"contains,exact_match"}, "collection": {"Mine"}, "name": {"Last week's answers"}, "filename": {"out.jsonl"}}
		status, body := a.rawPost(t, "/api/import?"+q.Encode(), "application/x-ndjson", outputsJSONL)
		var res outputsReply
		if status != http.StatusCreated || json.Unmarshal(body, &res) != nil {
			t.Fatalf("status %d: %s", status, body)
		}
		if res.RunID == 0 || res.CollectionID == 0 || res.TasksCreated != 2 || res.TasksUpdated != 0 || res.Items != 3 || res.Models != 2 {
			t.Fatalf("reply %+v", res)
		}
		run, err := st.Run(t.Context(), res.RunID)
		if err != nil || run.Kind != store.RunImported || run.Name != "Last week's answers" || len(run.Targets) != 2 {
			t.Fatalf("run %+v, %v", run, err)
		}
		if done := a.waitRunDone(t, res.RunID); done.Status != store.RunFinished {
			t.Fatalf("run ended %s", done.Status)
		}

		// The same file as a multipart upload, checks only: the tasks are updated.
		status, body = a.upload(t, "/api/import?kind=outputs&checks=contains&collection=Mine", "out.jsonl", outputsJSONL, nil)
		var again outputsReply
		if status != http.StatusCreated || json.Unmarshal(body, &again) != nil || again.TasksUpdated != 2 || again.TasksCreated != 0 || again.RunID == res.RunID {
			t.Fatalf("second import %d: %s", status, body)
		}
		a.waitRunDone(t, again.RunID)

		before, _ := st.Tasks(t.Context(), store.TaskFilter{})
		for _, tc := range []struct {
			name, query, data string
			status            int
			want              string
		}{
			{"bad row", "kind=outputs&checks=contains", "task_id,model,response,latency_ms\nx,m,r,1\ny,m,r,slow\n", 422, `"line":3,"column":7,"field":"latency_ms","message":"not a number"`},
			{"unknown task", "kind=outputs&checks=contains", "task_id,model,response\nnobody,m,r\n", 422, `no task \"nobody\" exists`},
			{"neither", "kind=outputs", "question,model,response\nq,m,r\n", 422, "pick a judge or checks"},
			{"half a judge", "kind=outputs&judge_model=x", "question,model,response\nq,m,r\n", 422, "judge_provider_id: is required with judge_model"},
			{"bad panel", "kind=outputs&judge_ids=1,x", "question,model,response\nq,m,r\n", 422, `judge_ids: \"x\" is not a judge's id`},
			{"unknown kind", "kind=traces", "question\nq\n", 400, `kind \"traces\" is not an import`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, body := a.rawPost(t, "/api/import?"+tc.query, "text/csv", tc.data)
				if status != tc.status || !strings.Contains(string(body), tc.want) {
					t.Errorf("status %d, body %s; want %d with %s", status, body, tc.status, tc.want)
				}
			})
		}
		after, _ := st.Tasks(t.Context(), store.TaskFilter{})
		runs, _ := st.Runs(t.Context(), store.RunFilter{})
		if after.Total != before.Total || runs.Total != 2 {
			t.Errorf("refused imports wrote: %d tasks (was %d), %d runs", after.Total, before.Total, runs.Total)
		}

		// kind=tasks (and no kind) is the task import as before.
		var tasks importReply
		status, body = a.rawPost(t, "/api/import?kind=tasks&format=csv", "text/csv", "task_id,category,question\nnew,c,q\n")
		if status != http.StatusOK || json.Unmarshal(body, &tasks) != nil || tasks.Created != 1 {
			t.Errorf("task import %d: %s", status, body)
		}
	})
}

// The Import page's outputs mode: its form lists the judges and the text
// checks; a good file takes the browser to the new run, a bad one comes
// back with its rows.
func TestImportOutputsPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, judgeOnly)
		res, err := http.Get(a.srv.URL + "/import?mode=outputs")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("page %d: %v", res.StatusCode, err)
		}
		if doc.Find(`[data-testid="import-outputs-tab"][aria-current="page"]`).Length() != 1 ||
			doc.Find(`[data-testid="outputs-checks"] input[value="contains"]`).Length() != 1 ||
			doc.Find(`[data-testid="outputs-checks"] input[value="tool_called"]`).Length() != 0 {
			t.Errorf("outputs form: %s", doc.Find("main").Text())
		}

		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		http.DefaultClient, client = client, http.DefaultClient
		status, body := a.upload(t, "/import/outputs", "out.jsonl", outputsJSONL, map[string]string{"checks": "contains"})
		http.DefaultClient = client
		if status != http.StatusSeeOther {
			t.Fatalf("status %d: %s", status, body)
		}
		runs, _ := st.Runs(t.Context(), store.RunFilter{})
		if runs.Total != 1 || runs.Items[0].Kind != store.RunImported {
			t.Fatalf("runs %+v", runs)
		}

		status, body = a.upload(t, "/import/outputs", "out.csv", "question,model,response\nq,,r\n", map[string]string{"checks": "contains"})
		doc, _ = goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		row := doc.Find(`[data-testid="outputs-problems"] [data-testid="import-problem"]`)
		if status != 422 || row.Length() != 1 || !strings.Contains(row.Text(), "model") || !strings.Contains(row.Text(), "is required") ||
			doc.Find(`[data-testid="outputs-checks"] input[value="contains"][checked]`).Length() != 1 {
			t.Errorf("bad file: %d, problems %q", status, row.Text())
		}
	})
}
