package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

func TestUseCasesAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"u1","category":"chunking","question":"q","usecase":"lectures"}`}, 201, nil)

		var uc store.UseCase
		a.do(t, call{method: "POST", path: "/api/usecases", body: `{"name":"lectures","goal":"Split transcripts","constraints":{"chunk_min":500,"chunk_max":2000},"cost_priority":"low"}`}, 201, &uc)
		if uc.ID == 0 || uc.Goal != "Split transcripts" || uc.Tasks != 1 || uc.Constraints["chunk_max"] != 2000.0 || uc.CostPriority != store.CostLow {
			t.Fatalf("created %+v", uc)
		}
		a.do(t, call{method: "POST", path: "/api/usecases", body: `{"name":"lectures"}`}, 409, nil)
		if got := a.do(t, call{method: "POST", path: "/api/usecases", body: `{"name":"x","constraints":{"chunk_min":5,"chunk_max":1}}`}, 422, nil); !strings.Contains(got, "chunk_min") {
			t.Errorf("min > max: %s", got)
		}
		a.do(t, call{method: "POST", path: "/api/usecases", body: `{"name":"x","goals":"typo"}`}, 400, nil)
		a.do(t, call{method: "GET", path: "/api/usecases/999"}, 404, nil)

		// A rename carries to the tasks.
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/usecases/%d", uc.ID), body: `{"name":"lecture notes","goal":"Split"}`}, 200, &uc)
		id := uc.ID
		uc = store.UseCase{} // a fresh value: decoding into a map merges
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/usecases/%d", id)}, 200, &uc)
		if uc.Name != "lecture notes" || uc.Tasks != 1 || len(uc.Constraints) != 0 {
			t.Errorf("after rename %+v", uc)
		}

		// A use-case file: created, then updated by name.
		file := "name: lecture notes\ngoal: ${UC_GOAL:-Chunk lectures}\nchunk_min: 300\ncoverage_required: true\nconstraints:\n  language: en\n"
		var imp struct {
			Created bool          `json:"created"`
			UseCase store.UseCase `json:"usecase"`
		}
		a.do(t, call{method: "POST", path: "/api/usecases/import?filename=lectures.yaml", body: file, header: map[string]string{"Content-Type": "application/yaml"}}, 200, &imp)
		if imp.Created || imp.UseCase.ID != uc.ID || imp.UseCase.Goal != "Chunk lectures" || imp.UseCase.Constraints["chunk_min"] != 300.0 ||
			imp.UseCase.Constraints["coverage_required"] != true || imp.UseCase.Constraints["language"] != "en" {
			t.Errorf("imported %+v", imp)
		}
		a.do(t, call{method: "POST", path: "/api/usecases/import?filename=new.yaml", body: "name: grading\ncost_priority: high\n", header: map[string]string{"Content-Type": "application/yaml"}}, 201, &imp)
		if !imp.Created || imp.UseCase.CostPriority != store.CostHigh {
			t.Errorf("imported new %+v", imp)
		}
		got := a.do(t, call{method: "POST", path: "/api/usecases/import?filename=bad.yaml", body: "name: z\ngoal: g\nchunk_min: 9\nchunk_max: 1\nlist: [1]\n", header: map[string]string{"Content-Type": "application/yaml"}}, 422, nil)
		if !strings.Contains(got, `"line":5`) || !strings.Contains(got, "list") {
			t.Errorf("bad file: %s", got)
		}

		// Deleting forgets the saved fields; the tasks keep naming it.
		a.do(t, call{method: "DELETE", path: fmt.Sprintf("/api/usecases/%d", uc.ID)}, 204, nil)
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/usecases/%d", uc.ID)}, 404, nil)
		var list []store.UseCase
		a.do(t, call{method: "GET", path: "/api/usecases"}, 200, &list)
		if len(list) != 2 || list[1].Name != "lecture notes" || list[1].ID != 0 || list[1].Tasks != 1 {
			t.Errorf("list after delete %+v", list)
		}
	})
}

// TestRunFreezesUseCase: the model and the judge see the use case's goal and
// constraints, and a re-run sends what the run froze even after an edit.
func TestRunFreezesUseCase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var mu sync.Mutex
		var asked, judged []string
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if r.IsJudge() {
				judged = append(judged, r.Last())
				return llmtest.Reply{Content: `{"score": 8, "reasoning": "ok"}`}
			}
			if strings.Contains(r.Last(), "Chunk this.") { // not a warm-up
				asked = append(asked, r.Last())
			}
			return llmtest.Reply{Content: "chunks"}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"u1","category":"c","question":"Chunk this.","usecase":"lectures"}`}, 201, nil)
		var uc store.UseCase
		a.do(t, call{method: "POST", path: "/api/usecases", body: `{"name":"lectures","goal":"Chunk lecture transcripts","notes":"Prefer whole topics","constraints":{"chunk_min":500,"coverage_required":true}}`}, 201, &uc)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"U","task_ids":["u1"]}`}, 201, &col)
		var run runReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[%d]}`, p.ID, p.ID, col.ID)}, 201, &run)
		a.collectEvents(t, run.ID, "")

		// Edited after the run: neither the run nor its re-run may see it.
		a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/usecases/%d", uc.ID), body: `{"name":"lectures","goal":"EDITED"}`}, 200, nil)
		var again runReply
		a.do(t, call{method: "POST", path: fmt.Sprintf("/api/runs/%d/rerun", run.ID)}, 201, &again)
		a.collectEvents(t, again.ID, "")

		mu.Lock()
		defer mu.Unlock()
		if len(asked) != 2 || len(judged) != 2 {
			t.Fatalf("asked %d, judged %d; want 2 each", len(asked), len(judged))
		}
		for i := range asked {
			for _, want := range []string{"## Goal\nChunk lecture transcripts", "- Chunk: at least 500.", "- Coverage: required."} {
				if !strings.Contains(asked[i], want) {
					t.Errorf("model prompt %d lacks %q:\n%s", i, want, asked[i])
				}
			}
			for _, want := range []string{"Chunk lecture transcripts", "- Chunk: at least 500.", "Prefer whole topics"} {
				if !strings.Contains(judged[i], want) {
					t.Errorf("judge prompt %d lacks %q:\n%s", i, want, judged[i])
				}
			}
			if strings.Contains(asked[i]+judged[i], "EDITED") {
				t.Errorf("run %d saw the edit made after it was created", i)
			}
		}
		// The item shows the use case as its run froze it.
		var page struct {
			Items []struct {
				ID int64 `json:"id"`
			} `json:"items"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items", again.ID)}, 200, &page)
		if len(page.Items) != 1 {
			t.Fatalf("re-run items %+v", page)
		}
		var detail struct {
			Task struct {
				UseCaseFields *struct {
					Goal string `json:"goal"`
				} `json:"usecase_fields"`
			} `json:"task"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d", page.Items[0].ID)}, 200, &detail)
		if f := detail.Task.UseCaseFields; f == nil || f.Goal != "Chunk lecture transcripts" {
			t.Errorf("item's usecase_fields %+v", f)
		}
		_, doc, _ := a.get(t, fmt.Sprintf("/items/%d", page.Items[0].ID))
		if got := doc.Find("[data-testid=item-usecase]").Text(); !strings.Contains(got, "Chunk lecture transcripts") || !strings.Contains(got, "Coverage: required.") {
			t.Errorf("item page's use case: %q", got)
		}
		items, err := st.RunTaskList(context.Background(), again.ID)
		if err != nil || len(items) != 1 || items[0].UseCaseFields.Goal != "Chunk lecture transcripts" {
			t.Errorf("re-run's frozen tasks %+v, %v", items, err)
		}
	})
}

// A use-case file sent to the server never reads the server's environment
// (its secrets): ${VAR} takes its default, and a reference without one is
// a problem of the file.
func TestUseCaseImportIgnoresServerEnv(t *testing.T) {
	t.Setenv("UC_SERVER_SECRET", "s3cret-value")
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		yaml := map[string]string{"Content-Type": "application/yaml"}
		var imp struct {
			UseCase store.UseCase `json:"usecase"`
		}
		a.do(t, call{method: "POST", path: "/api/usecases/import?filename=a.yaml", body: "name: a\ngoal: ${UC_SERVER_SECRET:-the default}\n", header: yaml}, 201, &imp)
		if imp.UseCase.Goal != "the default" {
			t.Errorf("goal %q, want the default", imp.UseCase.Goal)
		}
		got := a.do(t, call{method: "POST", path: "/api/usecases/import?filename=b.yaml", body: "name: b\nnotes: ${UC_SERVER_SECRET}\n", header: yaml}, 422, nil)
		if strings.Contains(got, "s3cret") || !strings.Contains(got, "UC_SERVER_SECRET") {
			t.Errorf("no default: %s", got)
		}
	})
}
