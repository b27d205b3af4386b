package handlers_test

import (
	"net/url"
	"strings"
	"testing"

	"tribunal/rubric"
	"tribunal/store/storetest"
)

// TestStylePreview: the style form previews the judge's prompt for the first
// task (or the one chosen) with a sample answer, and shows a template's error
// in place.
func TestStylePreview(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	hx := map[string]string{"HX-Request": "true"}
	form := func(tmpl string, extra ...string) url.Values {
		v := url.Values{"name": {"Mine"}, "scale_min": {"0"}, "scale_max": {"5"}, "prompt_template": {tmpl},
			"metric_name": {"accuracy", "clarity"}, "metric_description": {"Is it right?", "Is it clear?"}, "metric_weight": {"2", "1"}}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		return v
	}

	// No task yet: a built-in sample stands in.
	res, doc := a.post(t, "/styles/preview", form(rubric.DefaultTemplate), hx)
	if res.StatusCode != 200 || !strings.Contains(doc.Find("[data-testid=preview-prompt]").Text(), "What is the capital of France?") {
		t.Fatalf("preview without tasks: %d %q", res.StatusCode, doc.Find("#style-preview").Text())
	}

	for _, body := range []string{
		`{"task_id":"add","category":"math","question":"What is 2+2?","reference":"4"}`,
		`{"task_id":"sub","category":"math","question":"What is 5-3?","reference":"2","judge_instructions":"Accept words."}`,
	} {
		a.do(t, call{method: "POST", path: "/api/tasks", body: body}, 201, nil)
	}
	res, doc = a.post(t, "/styles/preview", form(rubric.DefaultTemplate, "sample_answer", "It is <b>four</b>."), hx)
	prompt, system := doc.Find("[data-testid=preview-prompt]").Text(), doc.Find("[data-testid=preview-system]").Text()
	if res.StatusCode != 200 || !strings.Contains(prompt, "What is 2+2?") || !strings.Contains(prompt, "It is <b>four</b>.") || strings.Contains(prompt, "5-3") {
		t.Errorf("preview of the first task: %q", prompt)
	}
	if !strings.Contains(system, "from 0 (worst) to 5 (best)") || !strings.Contains(system, "accuracy: Is it right?") {
		t.Errorf("system prompt: %q", system)
	}
	if opts := doc.Find("[data-testid=preview-task] option"); opts.Length() != 2 || doc.Find("[data-testid=preview-task] option[selected]").Text() != "add" {
		t.Errorf("task choice: %d options, selected %q", opts.Length(), doc.Find("[data-testid=preview-task] option[selected]").Text())
	}

	_, doc = a.post(t, "/styles/preview", form("Q: {{.Question}} A: {{.Response}} Note: {{.JudgeInstructions}}", "preview_task", "sub"), hx)
	if got := doc.Find("[data-testid=preview-prompt]").Text(); got != "Q: What is 5-3? A: "+"Paris is the capital of France."+" Note: Accept words." {
		t.Errorf("preview of the chosen task: %q", got)
	}

	for tmpl, want := range map[string]string{
		"{{.Response":                            "prompt template",
		"{{.Response}} {{.Nope}}":                "Nope",
		"{{range 100000}}x{{end}} {{.Response}}": "prompt template",
	} {
		res, doc = a.post(t, "/styles/preview", form(tmpl), hx)
		if e := doc.Find("[data-testid=preview-error]").Text(); res.StatusCode != 200 || !strings.Contains(e, want) || doc.Find("[data-testid=preview-prompt]").Length() != 0 {
			t.Errorf("template %q: status %d, error %q", tmpl, res.StatusCode, e)
		}
	}

	_, doc, _ = a.get(t, "/styles")
	if doc.Find(`[data-testid=style-form] [data-testid=preview-style][hx-post="/styles/preview"]`).Length() != 1 {
		t.Error("the style form has no preview button")
	}
}
