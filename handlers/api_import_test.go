package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store"
	"tribunal/store/storetest"
)

type importReply struct {
	Created    int      `json:"created"`
	Updated    int      `json:"updated"`
	CreatedIDs []string `json:"created_ids"`
	UpdatedIDs []string `json:"updated_ids"`
	TaskIDs    []string `json:"task_ids"`
	Collection *struct {
		ID        int64    `json:"id"`
		Name      string   `json:"name"`
		TaskCount int64    `json:"task_count"`
		Tags      []string `json:"tags"`
	} `json:"collection"`
}

type importErrorReply struct {
	Error  string `json:"error"`
	Errors []struct {
		Row     int    `json:"row"`
		Line    int    `json:"line"`
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// upload posts a file as multipart field "file" with extra form fields.
func (a *app) upload(t *testing.T, path, name, content string, fields map[string]string) (int, []byte) {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(content))
	w.Close()
	req, _ := http.NewRequest("POST", a.srv.URL+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (a *app) rawPost(t *testing.T, path, contentType, body string) (int, []byte) {
	t.Helper()
	res, err := http.Post(a.srv.URL+path, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func TestImportAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		ctx := context.Background()

		// A raw CSV body with ?format=&collection=: created, into a new collection.
		status, body := a.rawPost(t, "/api/import?format=csv&collection=imported&tags=team-a", "text/csv",
			"task_id,category,question,reference\na,math,What is 1+1?,2\nb,math,What is 2+2?,4\n")
		var r importReply
		if status != 200 || json.Unmarshal(body, &r) != nil {
			t.Fatalf("CSV import: %d %s", status, body)
		}
		if r.Created != 2 || r.Updated != 0 || !reflect.DeepEqual(r.TaskIDs, []string{"a", "b"}) || r.Collection == nil ||
			r.Collection.Name != "imported" || r.Collection.TaskCount != 2 || !reflect.DeepEqual(r.Collection.Tags, []string{"team-a"}) {
			t.Fatalf("CSV import: %s", body)
		}

		// A multipart JSONL file re-importing a: updated, not duplicated, and said so.
		status, body = a.upload(t, "/api/import", "more.jsonl",
			"{\"task_id\": \"a\", \"question\": \"What is 1+1 exactly?\", \"answer\": \"2\"}\n{\"task_id\": \"c\", \"prompt\": \"Name a colour\"}\n",
			map[string]string{"collection": "imported"})
		r = importReply{}
		if status != 200 || json.Unmarshal(body, &r) != nil {
			t.Fatalf("JSONL import: %d %s", status, body)
		}
		if r.Created != 1 || r.Updated != 1 || !reflect.DeepEqual(r.UpdatedIDs, []string{"a"}) || !reflect.DeepEqual(r.CreatedIDs, []string{"c"}) ||
			r.Collection.TaskCount != 3 {
			t.Fatalf("JSONL re-import: %s", body)
		}
		page, _ := st.Tasks(ctx, store.TaskFilter{})
		if page.Total != 3 {
			t.Fatalf("%d tasks after the re-import, want 3", page.Total)
		}

		// Bad rows: 422 naming every one, and nothing imported.
		status, body = a.rawPost(t, "/api/import?format=csv&collection=other", "text/csv",
			"task_id,category,question\nd,x,fine\ne,x,\nf,x,\n")
		var e importErrorReply
		if status != 422 || json.Unmarshal(body, &e) != nil || len(e.Errors) != 2 {
			t.Fatalf("bad rows: %d %s", status, body)
		}
		if e.Errors[0].Row != 2 || e.Errors[0].Line != 3 || e.Errors[0].Field != "question" || e.Errors[1].Row != 3 || e.Errors[1].Line != 4 {
			t.Errorf("row errors: %+v", e.Errors)
		}
		if page, _ := st.Tasks(ctx, store.TaskFilter{}); page.Total != 3 {
			t.Errorf("a file with bad rows imported %d tasks", page.Total-3)
		}
		if cols, _ := st.Collections(ctx); len(cols) != 1 {
			t.Errorf("a file with bad rows created a collection")
		}

		// The format is detected from ?name= (a YAML task file here).
		status, body = a.rawPost(t, "/api/import?name=suite.yaml", "application/octet-stream",
			"tasks:\n  - name: y1\n    description: Say hello\n")
		r = importReply{}
		if status != 200 || json.Unmarshal(body, &r) != nil || r.Created != 1 || r.Collection != nil {
			t.Fatalf("YAML by name: %d %s", status, body)
		}

		for _, tc := range []struct{ path, body string }{
			{"/api/import?format=xml", "a,b\n"},
			{"/api/import?format=csv", ""},
		} {
			if status, body := a.rawPost(t, tc.path, "text/plain", tc.body); status != 400 {
				t.Errorf("POST %s with %q: %d %s, want 400", tc.path, tc.body, status, body)
			}
		}
	})
}

// waitEnded waits until the run is no longer active.
func waitEnded(t *testing.T, st *store.Store, id int64) *store.Run {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := st.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Active() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s", id, r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExportFormatsAPI(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	ctx := context.Background()
	p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", BaseURL: a.fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.UpsertTasks(ctx, store.ImportInput{Collection: "c", Tasks: []store.TaskInput{
		{TaskKey: "t1", Category: "x", Question: "q1"}, {TaskKey: "t2", Category: "x", Question: "q2"}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 2 {
		var run struct {
			ID int64 `json:"id"`
		}
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(
			`{"judge": {"provider_id": %d, "model": "fake-judge"}, "targets": [{"provider_id": %d, "model": "fake-small", "tags": ["local"]}],
			  "collection_ids": [%d], "tags": ["ci"], "task_selection": {"mode": "top", "n": 1}}`, p.ID, p.ID, res.Collection.ID)}, 201, &run)
		waitEnded(t, st, run.ID)
		ids = append(ids, run.ID)
	}

	get := func(path string) (*http.Response, string) {
		t.Helper()
		r, err := http.Get(a.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r, string(b)
	}
	r, body := get(fmt.Sprintf("/api/runs/%d/export?format=json", ids[0]))
	var doc struct {
		Format string `json:"format"`
		Run    struct {
			Tags []string `json:"tags"`
		} `json:"run"`
		Items []json.RawMessage `json:"items"`
	}
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(body), &doc) != nil ||
		doc.Format != "tribunal.run/v1" || len(doc.Items) != 1 || !reflect.DeepEqual(doc.Run.Tags, []string{"ci"}) {
		t.Fatalf("JSON export: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
	r, body = get(fmt.Sprintf("/api/runs/%d/export?format=html", ids[0]))
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "<svg") ||
		!strings.Contains(r.Header.Get("Content-Disposition"), fmt.Sprintf("tribunal-run-%d.html", ids[0])) {
		t.Fatalf("HTML export: %d %v", r.StatusCode, r.Header)
	}
	r, body = get(fmt.Sprintf("/api/runs/%d/export", ids[0]))
	if r.StatusCode != 200 || !strings.HasPrefix(body, "task_id,category,subcategory,question,reference,provider,model,version,status,score,judge") {
		t.Fatalf("CSV export changed: %d %.200s", r.StatusCode, body)
	}
	if r, body = get(fmt.Sprintf("/api/runs/%d/export?format=xml", ids[0])); r.StatusCode != 400 {
		t.Errorf("format=xml: %d %s", r.StatusCode, body)
	}
	if r, _ = get("/api/runs/999/export?format=html"); r.StatusCode != 404 {
		t.Errorf("missing run: %d", r.StatusCode)
	}
	r, body = get(fmt.Sprintf("/api/export?run_ids=%d,%d&format=html", ids[0], ids[1]))
	if r.StatusCode != 200 || !strings.Contains(body, `data-testid="comparison"`) {
		t.Fatalf("comparison export: %d", r.StatusCode)
	}

	// Runs filter by tag in the API and on the runs page.
	var list struct {
		Total int64 `json:"total"`
	}
	a.do(t, call{method: "GET", path: "/api/runs?tag=CI"}, 200, &list)
	if list.Total != 2 {
		t.Errorf("runs tagged ci: %d", list.Total)
	}
	a.do(t, call{method: "GET", path: "/api/runs?tag=nope"}, 200, &list)
	if list.Total != 0 {
		t.Errorf("runs tagged nope: %d", list.Total)
	}
	_, page, _ := a.get(t, "/runs?tag=nope")
	if page.Find("[data-testid=runs-table]").Length() != 0 || page.Find("select[name=tag] option[selected]").AttrOr("value", "") != "nope" {
		t.Error("the runs page does not filter by tag")
	}
	_, page, _ = a.get(t, "/runs?tag=ci")
	if n := page.Find("[data-testid=runs-table] tbody tr").Length(); n != 2 {
		t.Errorf("runs page tagged ci: %d rows", n)
	}
}

func TestImportPage(t *testing.T) {
	st := storetest.SQLite(t)
	a := newApp(t, st, nil)
	ctx := context.Background()
	if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "q1", Category: "old", Question: "Old question"}); err != nil {
		t.Fatal(err)
	}
	res, doc, _ := a.get(t, "/import")
	if res.StatusCode != 200 || doc.Find("[data-testid=import-form]").Length() != 1 || doc.Find("header nav a[aria-current=page]").Text() != "Import" {
		t.Fatalf("GET /import: %d", res.StatusCode)
	}
	csv := "id,prompt,expected\nq1,What is 2+2?,4\nq2,What is 3+3?,6\n"
	status, body := a.upload(t, "/import/preview", "quiz.csv", csv, map[string]string{"collection": "Quiz"})
	doc, _ = goquery.NewDocumentFromReader(bytes.NewReader(body))
	if status != 200 || doc.Find("[data-testid=import-rows] tbody tr").Length() != 2 ||
		doc.Find("[data-testid=import-count-create]").Text() != "1" || doc.Find("[data-testid=import-count-update]").Text() != "1" {
		t.Fatalf("preview: %d %s", status, body)
	}
	if page, _ := st.Tasks(ctx, store.TaskFilter{}); page.Total != 1 {
		t.Fatal("the preview wrote tasks")
	}
	res, doc = a.post(t, "/import", confirmForm(t, doc, "import-confirm-bottom"), map[string]string{"HX-Request": "true"})
	if res.StatusCode != 200 || doc.Find("[data-testid=import-done]").Length() != 1 || doc.Find("html > head > title").Length() != 0 {
		t.Fatalf("confirm: %d %s", res.StatusCode, doc.Text())
	}
	if got := doc.Find("[data-testid=import-done] header").Text(); !strings.Contains(got, "1 created, 1 updated") {
		t.Errorf("done: %q", got)
	}
	all, err := st.CollectionsTagged(ctx, "")
	if err != nil || len(all) != 1 || all[0].Name != "Quiz" || all[0].TaskCount != 2 {
		t.Fatalf("collections: %+v %v", all, err)
	}
	col := all[0]

	// A file with bad rows lists every one and imports nothing.
	status, body = a.upload(t, "/import/preview", "bad.jsonl", "{\"task_id\": \"z1\"}\n{\"task_id\": \"z2\", \"question\": \"ok\"}\nnot json\n", nil)
	doc, _ = goquery.NewDocumentFromReader(bytes.NewReader(body))
	if status != 422 || doc.Find("[data-testid=import-problem]").Length() != 2 || doc.Find("[data-testid^=import-confirm]").Length() != 0 {
		t.Fatalf("bad file preview: %d %s", status, body)
	}

	// Collections and tasks filter by tag.
	tags := []string{"team-x"}
	if _, err := st.UpdateCollection(ctx, col.ID, store.CollectionInput{Name: col.Name, Tags: &tags}); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = a.get(t, "/collections?tag=team-x")
	if doc.Find("[data-testid=collections-table] tbody tr").Length() != 1 || doc.Find("[data-testid=tag]").Text() != "team-x" {
		t.Error("collections tagged team-x missing")
	}
	_, doc, _ = a.get(t, "/collections?tag=other")
	if doc.Find("[data-testid=collections-table]").Length() != 0 {
		t.Error("collections page does not filter by tag")
	}
	var cols []store.Collection
	a.do(t, call{method: "GET", path: "/api/collections?tag=TEAM-X"}, 200, &cols)
	if len(cols) != 1 || !cols[0].Tags.Has("team-x") {
		t.Errorf("API collections tagged team-x: %+v", cols)
	}
	if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: "tagged", Category: "c", Question: "q", Tags: []string{"math"}}); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = a.get(t, "/tasks?tag=math")
	if n := doc.Find("[data-testid=tasks-table] tbody tr").Length(); n != 1 {
		t.Errorf("tasks tagged math: %d rows", n)
	}
	if doc.Find("select[name=tag] option[selected]").AttrOr("value", "") != "math" {
		t.Error("the tasks page does not show the tag filter")
	}

	// The new-run picker lists the collection's tasks and starts a run on some.
	_, doc, _ = a.get(t, fmt.Sprintf("/runs/new/tasks?collection_ids=%d", col.ID))
	if n := doc.Find("input[name=task_ids]").Length(); n != 2 {
		t.Errorf("picker lists %d tasks, want 2", n)
	}
	ps, _ := st.Providers(ctx)
	if len(ps) == 0 {
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "fake", BaseURL: a.fake.URL})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, *p)
	}
	base := url.Values{"judge_provider_id": {fmt.Sprint(ps[0].ID)}, "judge_model": {"fake-judge"},
		"target_provider_id": {fmt.Sprint(ps[0].ID)}, "target_model": {"fake-small"}, "collection_ids": {fmt.Sprint(col.ID)}}
	pick := func(extra url.Values) (*http.Response, *goquery.Document) {
		f := url.Values{}
		for k, v := range base {
			f[k] = v
		}
		for k, v := range extra {
			f[k] = v
		}
		return a.post(t, "/runs", f, nil)
	}
	res, doc = pick(url.Values{"task_mode": {"random"}})
	if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "how many") {
		t.Errorf("random without N: %d %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
	}
	res, _ = pick(url.Values{"task_mode": {"pick"}, "task_ids": {"q2"}, "tags": {"hand, picked"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("hand-picked run: %d", res.StatusCode)
	}
	var id int64
	fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &id)
	run := waitEnded(t, st, id)
	tasks, _ := st.RunTaskList(ctx, id)
	if len(tasks) != 1 || tasks[0].TaskKey != "q2" || !reflect.DeepEqual([]string(run.Tags), []string{"hand", "picked"}) {
		t.Errorf("hand-picked run: tasks %+v tags %v", tasks, run.Tags)
	}
	res, _ = pick(url.Values{"task_mode": {"bottom"}, "task_n": {"1"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bottom-1 run: %d", res.StatusCode)
	}
	fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &id)
	waitEnded(t, st, id)
	if tasks, _ := st.RunTaskList(ctx, id); len(tasks) != 1 || tasks[0].TaskKey != "q2" {
		t.Errorf("bottom-1 run: %+v", tasks)
	}
}
