package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tribunal/handlers"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestNULRefused: a NUL byte, which PostgreSQL text cannot hold, is a 422
// naming the field on both databases, wherever text comes in.
func TestNULRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		for _, tc := range []struct{ method, path, body, field string }{
			{"POST", "/api/tasks", `{"task_id":"t","category":"c","question":"a\u0000b"}`, "question"},
			{"POST", "/api/tasks", `{"task_id":"t","category":"c","turns":["q","a\u0000"]}`, "turns[1]"},
			{"POST", "/api/tasks", `{"task_id":"t","category":"c","question":"q","metadata":{"k":"\u0000"}}`, "metadata.k"},
			{"POST", "/api/providers", `{"name":"p","base_url":"http://x","headers":[{"key":"k","value":"v\u0000"}]}`, "headers[0].value"},
			{"POST", "/api/collections", `{"name":"\u0000"}`, "name"},
			{"POST", "/api/judgement-styles", `{"name":"s","prompt_template":"{{.Response}}\u0000"}`, "prompt_template"},
			{"POST", "/api/judges", `{"name":"j\u0000","provider_id":1,"model":"m"}`, "name"},
			{"POST", "/api/kpis", `{"name":"k\u0000"}`, "name"},
			{"POST", "/api/alerts", `{"name":"a\u0000"}`, "name"},
			{"GET", "/api/tasks?q=%00", "", "q"},
			{"GET", "/api/runs?x%00=1", "", "x\x00"},
		} {
			got := a.do(t, call{method: tc.method, path: tc.path, body: tc.body}, http.StatusUnprocessableEntity, nil)
			var e struct{ Error string }
			if err := json.Unmarshal([]byte(got), &e); err != nil || !strings.HasPrefix(e.Error, tc.field+": contains a NUL byte") {
				t.Errorf("%s %s: %s; want the error to name %q", tc.method, tc.path, got, tc.field)
			}
		}

		res, doc := a.post(t, "/tasks", url.Values{"task_id": {"t"}, "category": {"c"}, "question": {"a\x00b"}}, nil)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(doc.Text(), "question: contains a NUL byte") {
			t.Errorf("form post: %d %s", res.StatusCode, doc.Text())
		}

		for name, file := range map[string]string{
			"t.csv":   "task_id,category,question\nok,c,fine\nbad,c,a\x00b\n",
			"t.jsonl": `{"task_id":"ok","question":"fine"}` + "\n" + `{"task_id":"bad","question":"a\u0000b"}` + "\n",
		} {
			status, body := a.upload(t, "/api/import", name, file, map[string]string{"collection": "c"})
			var ie handlers.ImportErrorJSON
			if err := json.Unmarshal(body, &ie); status != http.StatusUnprocessableEntity || err != nil || len(ie.Errors) != 1 {
				t.Fatalf("import %s: %d %s", name, status, body)
			}
			if e := ie.Errors[0]; e.Row != 2 || e.Line == 0 || e.Field != "question" || !strings.Contains(e.Message, "NUL") {
				t.Errorf("import %s: %+v; want row 2's question named", name, e)
			}
		}
		status, body := a.upload(t, "/api/import", "t.csv", "question\nq\n", map[string]string{"collection": "c\x00"})
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "collection: contains a NUL byte") {
			t.Errorf("import collection name: %d %s", status, body)
		}
		if page, err := st.Tasks(t.Context(), store.TaskFilter{}); err != nil || page.Total != 0 {
			t.Errorf("%d tasks stored, %v; want none", page.Total, err)
		}
	})
}
