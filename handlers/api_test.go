package handlers_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

type app struct {
	srv  *httptest.Server
	st   *store.Store
	fake *llmtest.Server
}

func newApp(t *testing.T, st *store.Store, script func(llmtest.ChatRequest) llmtest.Reply) *app {
	t.Helper()
	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, BackoffBase: 10 * time.Millisecond}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	srv := httptest.NewServer(handlers.New(st, eng, slog.New(slog.DiscardHandler)))
	t.Cleanup(func() { srv.Close(); cancel(); wg.Wait() })
	return &app{srv: srv, st: st, fake: llmtest.New(t, script)}
}

type call struct {
	method, path, body string
	header             map[string]string
}

// do sends a request and decodes a JSON reply into out (when not nil).
func (a *app) do(t *testing.T, c call, wantStatus int, out any) string {
	t.Helper()
	req, err := http.NewRequest(c.method, a.srv.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d, want %d; body %s", c.method, c.path, res.StatusCode, wantStatus, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", c.method, c.path, b, err)
		}
	}
	return string(b)
}

func TestProvidersAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		var p store.Provider
		body := fmt.Sprintf(`{"name":"Fake","type":"OPENROUTER","base_url":%q,"headers":[{"key":"Authorization","value":"Bearer sk-live-abcdefgh9876","is_secret":true},{"key":"X-Title","value":"tribunal","is_secret":false}]}`, a.fake.URL)
		raw := a.do(t, call{method: "POST", path: "/api/providers", body: body}, 201, &p)
		if strings.Contains(raw, "sk-live") {
			t.Fatalf("reply carries the whole secret: %s", raw)
		}
		if p.ModelsEndpoint != "/v1/models" || p.InferenceEndpoint != "/v1/chat/completions" || p.Concurrency != 1 || p.TimeoutSeconds != 120 {
			t.Errorf("defaults not applied: %+v", p)
		}
		if len(p.Headers) != 2 || !strings.HasSuffix(p.Headers[0].Value, "9876") || p.Headers[1].Value != "tribunal" {
			t.Errorf("headers: %+v", p.Headers)
		}
		list := a.do(t, call{method: "GET", path: "/api/providers"}, 200, nil)
		if strings.Contains(list, "sk-live") || !strings.Contains(list, "9876") {
			t.Errorf("list leaks or loses the masked secret: %s", list)
		}
		// The secret is stored encrypted: the raw column never holds it.
		var models []map[string]any
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/providers/%d/models", p.ID)}, 200, &models)
		if len(models) != 3 || models[0]["id"] != "fake-small" {
			t.Errorf("models: %v", models)
		}
		if auth := a.fake.Calls(); len(auth) != 0 {
			t.Errorf("listing models made chat calls")
		}
		var test map[string]any
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/providers/%d/test", p.ID)}, 200, &test)
		if test["ok"] != true {
			t.Errorf("test connection: %v", test)
		}
		// Updating with the masked value keeps the secret.
		upd := strings.Replace(body, "Bearer sk-live-abcdefgh9876", p.Headers[0].Value, 1)
		upd = strings.Replace(upd, `"Fake"`, `"Fake 2"`, 1)
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/providers/%d", p.ID), body: upd}, 200, &p)
		full, err := st.ProviderWithSecrets(context.Background(), p.ID)
		if err != nil || full.Headers[0].Value != "Bearer sk-live-abcdefgh9876" || full.Name != "Fake 2" {
			t.Errorf("after update: %+v %v", full, err)
		}

		bad := a.srv.URL // a server that is not OpenAI-compatible at /v1/models
		var broken store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Broken","base_url":%q}`, bad)}, 201, &broken)
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/providers/%d/test", broken.ID)}, 200, &test)
		if test["ok"] != false || !strings.Contains(fmt.Sprint(test["message"]), "404") {
			t.Errorf("broken provider test: %v", test)
		}

		for _, tc := range []struct {
			name, method, path, body string
			header                   map[string]string
			status                   int
			want                     string
		}{
			{"missing name", "POST", "/api/providers", `{"base_url":"http://x"}`, nil, 422, "name: is required"},
			{"bad url", "POST", "/api/providers", `{"name":"x","base_url":"ftp://x"}`, nil, 422, "base_url"},
			{"bad type", "POST", "/api/providers", `{"name":"x","type":"NOPE","base_url":"http://x"}`, nil, 422, "type"},
			{"duplicate", "POST", "/api/providers", `{"name":"Fake 2","base_url":"http://x"}`, nil, 409, "already exists"},
			{"malformed", "POST", "/api/providers", `{"name":`, nil, 400, "malformed JSON"},
			{"unknown field", "POST", "/api/providers", `{"name":"x","base_url":"http://x","colour":1}`, nil, 400, "colour"},
			{"wrong type", "POST", "/api/providers", `{"name":5}`, nil, 400, "name"},
			{"not json", "POST", "/api/providers", ``, map[string]string{"Content-Type": "text/plain"}, 415, "JSON"},
			{"foreign origin", "POST", "/api/providers", `{"name":"y","base_url":"http://x"}`, map[string]string{"Origin": "http://evil.example"}, 403, "cross-origin"},
			{"missing", "GET", "/api/providers/999", ``, nil, 404, "provider 999 not found"},
			{"bad id", "DELETE", "/api/providers/abc", ``, nil, 404, "no such provider"},
			{"no route", "GET", "/api/nothing", ``, nil, 404, "no API route"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := a.do(t, call{method: tc.method, path: tc.path, body: tc.body, header: tc.header}, tc.status, nil)
				var e struct{ Error string }
				if json.Unmarshal([]byte(got), &e) != nil || !strings.Contains(e.Error, tc.want) {
					t.Errorf("error body %s, want it to mention %q", got, tc.want)
				}
			})
		}
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/providers/%d", broken.ID)}, 204, nil)
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/providers/%d", broken.ID)}, 404, nil)
	})
}

func TestTasksAndCollectionsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		ids := map[string]int64{}
		for i, cat := range []string{"math", "math", "history", "math", "code"} {
			var tk store.Task
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(
				`{"task_id":"t-%d","category":%q,"subcategory":"s","question":"Question number %d <b>bold</b>?","excellent":"e","incorrect_answer_direction":"wrong"}`, i, cat, i)}, 201, &tk)
			ids[tk.TaskKey] = tk.ID
		}
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"t-0","category":"x","question":"q"}`}, 409, nil)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"t-9","category":"x","question":"  "}`}, 422, nil)

		var page store.Page[store.Task]
		a.do(t, call{method: "GET", path: "/api/tasks?category=math&per_page=2&page=2"}, 200, &page)
		if page.Total != 3 || len(page.Items) != 1 || page.Items[0].TaskKey != "t-3" {
			t.Errorf("filtered page: total %d items %+v", page.Total, page.Items)
		}
		a.do(t, call{method: "GET", path: "/api/tasks?q=NUMBER%202"}, 200, &page)
		if page.Total != 1 || page.Items[0].TaskKey != "t-2" {
			t.Errorf("search: %+v", page)
		}
		a.do(t, call{method: "GET", path: "/api/tasks?page=x"}, 400, nil)
		var tk store.Task
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/tasks/%d", ids["t-4"]), body: `{"task_id":"t-4","category":"code","question":"Changed?"}`}, 200, &tk)
		if tk.Question != "Changed?" || tk.Excellent != "" {
			t.Errorf("update: %+v", tk)
		}

		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: fmt.Sprintf(`{"name":"Mixed","task_ids":[%d,"t-1"]}`, ids["t-0"])}, 201, &col)
		if col.TaskCount != 2 || len(col.TaskIDs) != 2 {
			t.Errorf("created collection: %+v", col)
		}
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"Bad","task_ids":["nope",12345]}`}, 422, nil)
		if cs, _ := st.Collections(context.Background()); len(cs) != 1 {
			t.Errorf("a failed create left %d collections", len(cs))
		}
		a.do(t, call{method: "PATCH", path: fmt.Sprintf("/api/collections/%d/tasks", col.ID), body: fmt.Sprintf(`{"add":["t-2","t-3"],"remove":[%d]}`, ids["t-0"])}, 200, &col)
		if col.TaskCount != 3 {
			t.Errorf("after patch: %+v", col)
		}
		// All or nothing: one unknown id leaves the collection untouched.
		a.do(t, call{method: "PATCH", path: fmt.Sprintf("/api/collections/%d/tasks", col.ID), body: `{"add":["t-4","ghost"]}`}, 422, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/collections/%d", col.ID)}, 200, &col)
		if col.TaskCount != 3 {
			t.Errorf("failed patch changed the collection: %+v", col)
		}
		var cols []store.Collection
		a.do(t, call{method: "GET", path: "/api/collections"}, 200, &cols)
		if len(cols) != 1 || cols[0].TaskCount != 3 {
			t.Errorf("list: %+v", cols)
		}
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/collections/%d", col.ID), body: `{"name":"Renamed"}`}, 200, &col)
		if col.Name != "Renamed" || col.TaskCount != 3 {
			t.Errorf("rename kept tasks? %+v", col)
		}
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/tasks/%d", ids["t-2"])}, 204, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/collections/%d", col.ID)}, 200, &col)
		if col.TaskCount != 2 {
			t.Errorf("deleting a task left it in the collection: %+v", col)
		}
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/collections/%d", col.ID)}, 204, nil)
	})
}

type runReply struct {
	ID       int64           `json:"id"`
	Status   store.RunStatus `json:"status"`
	Phase    store.Phase     `json:"phase"`
	Progress struct {
		Total, Done, Completed, Failed int64
	} `json:"progress"`
	Summary *struct {
		Overall  store.Stats        `json:"overall"`
		PerModel []store.ModelStats `json:"per_model"`
	} `json:"summary"`
}

func TestRunsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			if r.IsJudge() {
				if strings.Contains(r.Last(), "Answer: =2+2") {
					return llmtest.Reply{Content: `{"score": 3, "reasoning": "=HYPERLINK(\"x\")"}`}
				}
				return llmtest.Reply{Content: "```json\n{\"score\": 9, \"reasoning\": \"Correct, \\\"quoted\\\", with a comma.\"}\n```"}
			}
			return llmtest.Reply{Content: "Answer: " + r.Last(), Delay: 5 * time.Millisecond}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		for i, q := range []string{"=2+2", "Say \"hi\", please\nin two lines"} {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":"r-%d","category":"c","question":%q}`, i, q)}, 201, nil)
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"R","task_ids":["r-0","r-1"]}`}, 201, &col)

		badRuns := []struct{ body, want string }{
			{`{"targets":[{"provider_id":1,"model":"m"}],"collection_ids":[1]}`, "judge.provider_id"},
			{fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[],"collection_ids":[%d]}`, p.ID, col.ID), "targets"},
			{fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":999,"model":"m"}],"collection_ids":[%d]}`, p.ID, col.ID), "no provider with id 999"},
			{fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[777]}`, p.ID, p.ID), "no collection with id 777"},
		}
		for _, b := range badRuns {
			got := a.do(t, call{method: "POST", path: "/api/runs", body: b.body}, 422, nil)
			if !strings.Contains(got, b.want) {
				t.Errorf("bad run %s: %s, want %q", b.body, got, b.want)
			}
		}
		if runs, _ := st.Runs(context.Background(), store.RunFilter{}); runs.Total != 0 {
			t.Fatalf("refused runs left %d rows", runs.Total)
		}

		body := fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"fake-judge"},"targets":[{"provider_id":%d,"model":"fake-small"},{"provider_id":%d,"model":"fake-large"}],"collection_ids":[%d]}`, p.ID, p.ID, p.ID, col.ID)
		var run runReply
		a.do(t, call{method: "POST", path: "/api/runs", body: body}, 201, &run)
		if run.Progress.Total != 4 {
			t.Fatalf("created run: %+v", run)
		}
		got := a.do(t, call{method: "POST", path: "/api/runs", body: body}, 409, nil)
		if !strings.Contains(got, fmt.Sprintf("run %d", run.ID)) {
			t.Errorf("409 does not name the active run: %s", got)
		}

		events := a.collectEvents(t, run.ID, "")
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
		if run.Status != store.RunFinished || run.Progress.Completed != 4 || run.Summary == nil || len(run.Summary.PerModel) != 2 {
			t.Fatalf("finished run: %+v", run)
		}
		if avg := run.Summary.Overall.AvgScore; avg == nil || *avg != 6 {
			t.Errorf("average score %v, want 6 ((3+9)/2 per model)", avg)
		}
		// SSE: every log entry arrives once, in order, and the stream ends.
		logs, _ := st.RunLogs(context.Background(), run.ID, 0, 1000)
		if len(events.logIDs) != len(logs) || events.last != "end" || !events.sawProgress {
			t.Errorf("SSE: %d log events for %d entries, last event %q, progress %v", len(events.logIDs), len(logs), events.last, events.sawProgress)
		}
		// A reconnect with Last-Event-ID replays only what came after.
		mid := events.logIDs[len(events.logIDs)/2]
		again := a.collectEvents(t, run.ID, fmt.Sprint(mid))
		if len(again.logIDs) != len(events.logIDs)-len(events.logIDs)/2-1 || (len(again.logIDs) > 0 && again.logIDs[0] <= mid) {
			t.Errorf("replay after %d: got %v of %v", mid, again.logIDs, events.logIDs)
		}

		var items store.Page[store.ItemView]
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?model=fake-large&per_page=1", run.ID)}, 200, &items)
		if items.Total != 2 || len(items.Items) != 1 || items.Items[0].Model != "fake-large" || items.Items[0].Score == nil {
			t.Errorf("items page: %+v", items)
		}
		// Calls per phase, not claims of both: answered and judged at the first call.
		raw := a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items", run.ID)}, 200, nil)
		if !strings.Contains(raw, `"answer_attempts":1,"judge_attempts":1`) || strings.Contains(raw, `"attempts"`) {
			t.Errorf("items JSON counts: %s", raw)
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?status=BOGUS", run.ID)}, 400, nil)
		a.do(t, call{method: "GET", path: "/api/runs/9999/items"}, 404, nil)

		res, err := http.Get(a.srv.URL + fmt.Sprintf("/api/runs/%d/export?format=csv", run.ID))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(res.Body).ReadAll()
		res.Body.Close()
		if err != nil {
			t.Fatalf("CSV does not parse: %v", err)
		}
		wantHeader := "task_id,category,subcategory,question,reference,provider,model,version,status,score,judge,reasoning,response,error," +
			"time_ms,tokens,tps,repeat,cost_usd,cost_source,grade,best_overall,best_value,answer_attempts,judge_attempts,tool_calls,tool_call_count,tool_errors,turns,violations"
		if strings.Join(rows[0], ",") != wantHeader || len(rows) != 5 {
			t.Fatalf("CSV header %v, %d rows", rows[0], len(rows))
		}
		for _, row := range rows[1:] {
			r := map[string]string{}
			for i, name := range rows[0] {
				r[name] = row[i]
			}
			// Both models average 6, a tie: no best overall; without prices no best value.
			if r["best_overall"] != "false" || r["best_value"] != "false" || r["cost_usd"] != "" || r["repeat"] != "1" {
				t.Errorf("CSV best/cost columns %v", r)
			}
			if r["status"] != "COMPLETED" || (r["score"] != "9.00" && r["score"] != "3.00") || r["time_ms"] == "" || r["tokens"] == "" ||
				r["answer_attempts"] != "1" || r["judge_attempts"] != "1" {
				t.Errorf("CSV row %v", r)
			}
			if r["judge"] != "Fake / fake-judge" {
				t.Errorf("CSV judge %q, want the run judge's name", r["judge"])
			}
			if r["task_id"] == "r-1" && (r["response"] != "Answer: Say \"hi\", please\nin two lines" || r["question"] != "Say \"hi\", please\nin two lines") {
				t.Errorf("CSV question or response lost quotes or newlines: %q %q", r["question"], r["response"])
			}
			if r["task_id"] == "r-0" && (!strings.HasPrefix(r["reasoning"], "'=") || !strings.HasPrefix(r["response"], "Answer: =2+2") || r["question"] != "'=2+2") {
				t.Errorf("CSV formula not defused: %q %q %q", r["reasoning"], r["response"], r["question"])
			}
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/export?format=xlsx", run.ID)}, 400, nil)

		var list store.Page[runReply]
		a.do(t, call{method: "GET", path: "/api/runs?status=FINISHED"}, 200, &list)
		if list.Total != 1 || list.Items[0].Progress.Done != 4 {
			t.Errorf("runs list: %+v", list)
		}
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/runs/%d/pause", run.ID)}, 409, nil)
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 204, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 404, nil)
	})
}

type sseResult struct {
	logIDs      []int64
	sawProgress bool
	last        string
}

// collectEvents reads a run's SSE stream until it ends.
func (a *app) collectEvents(t *testing.T, runID int64, lastID string) sseResult {
	return a.readEvents(t, runID, lastID, 30*time.Second)
}

// collectEventsWithin reads a run's SSE stream, failing if it does not end in time.
func (a *app) collectEventsWithin(t *testing.T, runID int64, within time.Duration) sseResult {
	return a.readEvents(t, runID, "", within)
}

func (a *app) readEvents(t *testing.T, runID int64, lastID string, within time.Duration) sseResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/runs/%d/events", a.srv.URL, runID), nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return sseResult{}
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
		return sseResult{}
	}
	var out sseResult
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			switch event {
			case "log":
				var l store.RunLog
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &l); err != nil {
					t.Errorf("log event: %v", err)
				}
				out.logIDs = append(out.logIDs, l.ID)
			case "progress":
				out.sawProgress = true
			}
			out.last = event
		}
	}
	if ctx.Err() != nil {
		t.Errorf("SSE stream did not end within %s: %+v", within, out)
	}
	return out
}

// TestLiveProgressFromAnotherProcess: the web process's engine does nothing;
// a "worker" engine with its own broker does the run. The web page's stream
// still follows it, woken by PostgreSQL NOTIFY rather than its 15 s heartbeat.
func TestLiveProgressFromAnotherProcess(t *testing.T) {
	st := storetest.Postgres(t)
	webBroker := engine.NewBroker()
	web := engine.New(engine.Config{}, st, webBroker, slog.New(slog.DiscardHandler)) // never Run: serves pages only
	srv := httptest.NewServer(handlers.New(st, web, slog.New(slog.DiscardHandler)))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { srv.Close(); cancel(); wg.Wait() })
	wg.Go(func() { st.ListenRuns(ctx, webBroker.Publish, func(err error) { t.Log(err) }) })

	fake := llmtest.New(t, func(r llmtest.ChatRequest) llmtest.Reply {
		rep := llmtest.DefaultReply(r)
		rep.Delay = 20 * time.Millisecond
		return rep
	})
	a := &app{srv: srv, st: st, fake: fake}
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, fake.URL)}, 201, &p)
	a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"x-1","category":"c","question":"q1"}`}, 201, nil)
	a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"x-2","category":"c","question":"q2"}`}, 201, nil)
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"X","task_ids":["x-1","x-2"]}`}, 201, &col)
	var run runReply
	a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[%d]}`, p.ID, p.ID, col.ID)}, 201, &run)

	// Subscribe before the worker starts, so every change must come through NOTIFY.
	done := make(chan sseResult, 1)
	go func() { done <- a.collectEventsWithin(t, run.ID, 10*time.Second) }()
	worker := engine.New(engine.Config{PollInterval: 20 * time.Millisecond}, st, engine.NewBroker(), slog.New(slog.DiscardHandler))
	wg.Go(func() { worker.Run(ctx) })
	res := <-done
	if res.last != "end" || len(res.logIDs) < 6 {
		t.Fatalf("stream from another process: %+v", res)
	}
}

// The entries of a run's last calls are logged as their results are
// stored, so they can land just after the run has ended: a stream that sees
// the run end reads once more before it ends, and so sends them too.
func TestStreamSendsEntriesLoggedAsTheRunEnds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateTasks(ctx, []store.TaskInput{{TaskKey: "t1", Category: "c", Question: "q"}}); err != nil {
			t.Fatal(err)
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"m"}, []string{"t1"}, []storetest.ItemResult{{Model: "m", Task: "t1", Overall: 1}})
		storetest.Exec(t, st, `UPDATE runs SET finished_at = ? WHERE id = ?`, time.Now().UTC(), run.ID) // it has just ended
		a := newApp(t, st, llmtest.DefaultReply)
		lateID := make(chan int64, 1)
		go func() {
			time.Sleep(100 * time.Millisecond) // a log flush after the end
			late := &store.RunLog{RunID: run.ID, Level: store.LogInfo, Kind: "verdict", Message: "the last verdict's entry"}
			if err := st.AppendLog(ctx, late); err != nil {
				t.Error(err)
			}
			lateID <- late.ID
		}()
		events := a.collectEvents(t, run.ID, "")
		id := <-lateID
		if events.last != "end" || id == 0 || !slices.Contains(events.logIDs, id) {
			t.Errorf("stream of a run that has just ended: log ids %v (the late entry's %d), last event %q", events.logIDs, id, events.last)
		}
	})
}
