package handlers_test

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestUseCasesPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a := newApp(t, st, nil)
		var taskID int64
		for _, tk := range []store.TaskInput{
			{TaskKey: "a", Category: "chunking", Question: "q", UseCase: "lectures"},
			{TaskKey: "b", Category: "summary", Question: "q", UseCase: "grading"},
		} {
			task, err := st.CreateTask(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			taskID = cmp.Or(taskID, task.ID)
		}

		// A bad constraint line re-shows the form with what was typed.
		form := url.Values{"name": {"lectures"}, "goal": {"<b>Chunk</b> transcripts"}, "cost_priority": {"low"},
			"context_needed_tokens": {"32000"}, "constraints": {"chunk_min = 500\nnot a pair"}, "default_candidate_models": {"a/b\nc/d"}}
		res, doc := a.post(t, "/usecases", form, nil)
		if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=usecase-form]").Text(), "line 2: write key = value") ||
			doc.Find("[data-testid=usecase-constraints]").Text() != "chunk_min = 500\nnot a pair" {
			t.Fatalf("bad constraints: %d %q", res.StatusCode, doc.Find("[data-testid=usecase-form]").Text())
		}
		form.Set("constraints", "chunk_min = 500\nchunk_max = 2000\ncoverage_required = true\nlanguage = en")
		if res, _ := a.post(t, "/usecases", form, nil); res.StatusCode != 303 {
			t.Fatalf("create: %d", res.StatusCode)
		}
		uc, err := st.UseCaseNamed(ctx, "lectures")
		if err != nil || uc.Constraints["chunk_max"] != 2000.0 || uc.Constraints["coverage_required"] != true ||
			uc.Constraints["language"] != "en" || len(uc.DefaultCandidateModels) != 2 || uc.ContextNeededTokens != 32000 {
			t.Fatalf("saved %+v, %v", uc, err)
		}

		_, doc, body := a.get(t, "/usecases")
		rows := doc.Find("[data-testid=usecase-row]")
		if rows.Length() != 2 || strings.Contains(body, "<b>Chunk</b>") {
			t.Fatalf("rows %d; goal escaped? %v", rows.Length(), !strings.Contains(body, "<b>Chunk</b>"))
		}
		saved := rows.Eq(1).Text()
		for _, want := range []string{"<b>Chunk</b> transcripts", "chunk_max = 2000 · chunk_min = 500 · coverage_required = true", "Low cost first", "32000 tokens", "a/b, c/d", "chunking"} {
			if !strings.Contains(saved, want) {
				t.Errorf("row lacks %q: %s", want, saved)
			}
		}
		if href, _ := rows.Eq(1).Find("a[href^='/tasks?category=chunking']").Attr("href"); href != "/tasks?category=chunking&usecase=lectures" {
			t.Errorf("category link %q", href)
		}
		if !strings.Contains(rows.Eq(0).Text(), "Only named by tasks") {
			t.Errorf("task-only row: %s", rows.Eq(0).Text())
		}

		// The task's edit page and the style preview show what the use case adds.
		_, _, page := a.get(t, fmt.Sprintf("/tasks/%d/edit", taskID))
		if !strings.Contains(page, "## Goal\n&lt;b&gt;Chunk&lt;/b&gt; transcripts") || !strings.Contains(page, "- Chunk: at least 500.") {
			t.Errorf("the task page's prompt lacks the use case")
		}
		_, doc = a.post(t, "/styles/preview", url.Values{"name": {"S"}, "scale_min": {"1"}, "scale_max": {"10"}, "preview_task": {"a"},
			"metric_name": {"accuracy"}, "metric_weight": {"1"}}, map[string]string{"HX-Request": "true"})
		if got := doc.Find("[data-testid=preview-prompt]").Text(); !strings.Contains(got, "## Goal of the use case\n<b>Chunk</b> transcripts") ||
			!strings.Contains(got, "- Coverage: required.") {
			t.Errorf("style preview lacks the use case: %q", got)
		}

		// The edit form shows the constraints as lines, and saves changes.
		_, doc, _ = a.get(t, fmt.Sprintf("/usecases/%d/edit", uc.ID))
		if got := doc.Find("[data-testid=usecase-constraints]").Text(); got != "chunk_max = 2000\nchunk_min = 500\ncoverage_required = true\nlanguage = en" {
			t.Errorf("edit constraints %q", got)
		}
		form.Set("constraints", "chunk_min = 100")
		if res, _ := a.post(t, fmt.Sprintf("/usecases/%d", uc.ID), form, nil); res.StatusCode != 303 {
			t.Fatalf("update: %d", res.StatusCode)
		}
		if uc, _ = st.UseCaseNamed(ctx, "lectures"); len(uc.Constraints) != 1 {
			t.Errorf("after update %+v", uc.Constraints)
		}

		// Uploads: a good file saves the task-only use case, a bad one lists its problems.
		if status, b := a.upload(t, "/usecases/import", "grading.yaml", "name: grading\ngoal: Grade essays\n", nil); status != 200 || !strings.Contains(string(b), "Grade essays") {
			t.Errorf("upload: %d", status)
		}
		status, b := a.upload(t, "/usecases/import", "bad.yaml", "name: x\ngoal: g\ncost_priority: cheap\n", nil)
		if status != 422 || !strings.Contains(string(b), "line 3") || !strings.Contains(string(b), "cost_priority") {
			t.Errorf("bad upload: %d %s", status, b)
		}

		if res, _ := a.post(t, fmt.Sprintf("/usecases/%d/delete", uc.ID), nil, nil); res.StatusCode != 303 {
			t.Fatalf("delete: %d", res.StatusCode)
		}
		if _, err := st.UseCase(ctx, uc.ID); err == nil {
			t.Error("deleted use case still saved")
		}
	})
}
