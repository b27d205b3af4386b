package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// GET /api/tasks/export downloads a collection's tasks in each format; the
// file imports back (POST /api/import) as the same tasks; the Tasks and
// collection pages link to it; a bad format or collection is refused before
// anything is written.
func TestTaskExportAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		ctx := context.Background()
		in := []store.TaskInput{
			{TaskKey: "a", Category: "math", Question: "What is 1+1?\nExplain.", Reference: "2", Tags: []string{"x"},
				Checks: []store.Check{{Type: "numeric"}}, Input: "data", Metadata: map[string]string{"input_type": "text"}},
			{TaskKey: "b", Category: "chat", Question: "Hi", Turns: []string{"Hi", "Bye"}, UseCase: "support", SystemPrompt: "Be kind."},
		}
		res, err := st.UpsertTasks(ctx, store.ImportInput{Tasks: in, Collection: "mine"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "z", Category: "math", Question: "not in mine"}); err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct{ format, ctype, ext string }{
			{"yaml", "application/yaml", ".yaml"}, {"jsonl", "application/x-ndjson", ".jsonl"}, {"csv", "text/csv", ".csv"},
		} {
			path := fmt.Sprintf("/api/tasks/export?format=%s&collection_id=%d", f.format, res.Collection.ID)
			r, err := http.Get(a.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			body := string(b)
			if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), f.ctype) ||
				r.Header.Get("Content-Disposition") != fmt.Sprintf(`attachment; filename="tribunal-tasks-collection-%d%s"`, res.Collection.ID, f.ext) {
				t.Fatalf("%s: %d %v", path, r.StatusCode, r.Header)
			}
			if strings.Contains(body, "not in mine") {
				t.Errorf("%s: a task outside the collection", f.format)
			}
			status, reply := a.upload(t, "/api/import?dry_run=true", "tasks"+f.ext, body, nil)
			var imported struct {
				Created, Updated int
				Warnings         []json.RawMessage
			}
			if err := json.Unmarshal(reply, &imported); status != 200 || err != nil || imported.Updated != 2 || imported.Created != 0 || imported.Warnings == nil {
				t.Errorf("%s: importing the export: %d %s", f.format, status, reply)
			}
		}

		a.do(t, call{method: "GET", path: "/api/tasks/export?format=xml"}, 400, nil)
		a.do(t, call{method: "GET", path: "/api/tasks/export?collection_id=999"}, 404, nil)
		all := a.do(t, call{method: "GET", path: "/api/tasks/export?format=jsonl&category=math"}, 200, nil)
		if n := strings.Count(all, "\n"); n != 2 || !strings.Contains(all, `"task_id":"z"`) {
			t.Errorf("category export: %s", all)
		}

		_, doc, _ := a.get(t, "/tasks")
		if href, _ := doc.Find("[data-testid=task-export-csv]").Attr("href"); href != "/api/tasks/export?format=csv" {
			t.Errorf("Tasks page export link %q", href)
		}
		_, doc, _ = a.get(t, "/tasks?category=math")
		if href, _ := doc.Find("[data-testid=task-export-yaml]").Attr("href"); href != "/api/tasks/export?category=math&format=yaml" {
			t.Errorf("Tasks page export link with a category %q", href)
		}
		_, doc, _ = a.get(t, fmt.Sprintf("/collections/%d", res.Collection.ID))
		if href, _ := doc.Find("[data-testid=task-export-jsonl]").Attr("href"); href != fmt.Sprintf("/api/tasks/export?collection_id=%d&format=jsonl", res.Collection.ID) {
			t.Errorf("collection page export link %q", href)
		}
	})
}

// The API refuses a task whose constraints contradict each other.
func TestTaskAPIRefusesContradictoryBounds(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	body := a.do(t, call{method: "POST", path: "/api/tasks",
		body: `{"task_id": "t", "category": "c", "question": "q", "constraints": "min_words: 100\nmax_words: 10"}`}, 422, nil)
	if !strings.Contains(body, "min_words (100) is more than max_words (10)") {
		t.Errorf("reply %s", body)
	}
	a.do(t, call{method: "POST", path: "/api/tasks",
		body: `{"task_id": "t", "category": "c", "question": "q", "constraints": "min_words: 10\nmax_words: 100"}`}, 201, nil)
}

// The Use cases page links to the Tasks page by use case: the page keeps
// that filter (select, pagination, search) and its export links pick the
// same tasks.
func TestTasksPageFiltersByUseCase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		for i, uc := range []string{"support replies", "support replies", "lecture notes"} {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id": "t%d", "category": "c", "question": "q%d", "usecase": %q}`, i, i, uc)}, 201, nil)
		}
		_, doc, _ := a.get(t, "/tasks?usecase=support+replies")
		if n := doc.Find("[data-testid=tasks-table] tbody tr").Length(); n != 2 {
			t.Errorf("%d rows for the use case, want 2", n)
		}
		if v, _ := doc.Find("[data-testid=usecase-filter] option[selected]").Attr("value"); v != "support replies" {
			t.Errorf("use-case filter selects %q", v)
		}
		if n := doc.Find("[data-testid=usecase-filter] option").Length(); n != 3 {
			t.Errorf("use-case filter has %d options, want all, and the two names", n)
		}
		if href, _ := doc.Find("[data-testid=task-export-csv]").Attr("href"); href != "/api/tasks/export?format=csv&usecase=support+replies" {
			t.Errorf("export link %q", href)
		}
		if got := doc.Find("[data-testid=task-export]").Text(); !strings.Contains(got, "of the use case support replies") {
			t.Errorf("export words %q", got)
		}
		_, doc, _ = a.get(t, "/tasks?usecase=support+replies&category=c")
		if href, _ := doc.Find("[data-testid=task-export-yaml]").Attr("href"); href != "/api/tasks/export?category=c&format=yaml&usecase=support+replies" {
			t.Errorf("export link with a category %q", href)
		}
	})
}
