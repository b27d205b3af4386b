package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/rubric"
	"tribunal/store"
	"tribunal/store/storetest"
)

var hxHeader = map[string]string{"HX-Request": "true"}

// texts is the trimmed text of every match.
func evalTexts(s *goquery.Selection) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, strings.TrimSpace(e.Text())) })
	return out
}

func TestJudgePages(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	ctx := t.Context()
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
	def, err := a.st.DefaultStyle(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The page: nav, empty list, and a form with every field.
	res, doc, _ := a.get(t, "/judges")
	if res.StatusCode != 200 || doc.Find("header nav a[aria-current=page]").Text() != "Judges" {
		t.Fatalf("GET /judges: %d, current nav %q", res.StatusCode, doc.Find("header nav a[aria-current=page]").Text())
	}
	if doc.Find("[data-testid=empty-judges]").Length() != 1 || doc.Find("a[href='/styles']").Length() == 0 {
		t.Errorf("judges page lacks the empty hint or the link to the styles")
	}
	form := doc.Find("form[data-testid=judge-form]")
	for _, sel := range []string{"input[name=name]", "select[name=provider_id][hx-get='/providers/models']", "input[name=model][list=judge-models]",
		"input[name=personality_name][list=personality-presets]", "textarea[name=personality_description]", "select[name=style_id]",
		"input[name=temperature]", "input[name=max_tokens]", "select[name=reasoning_effort]"} {
		if form.Find(sel).Length() != 1 {
			t.Errorf("judge form lacks %s", sel)
		}
	}
	presets := []string{}
	doc.Find("datalist#personality-presets option").Each(func(_ int, o *goquery.Selection) {
		presets = append(presets, o.AttrOr("value", ""))
		if o.AttrOr("data-description", "") == "" {
			t.Errorf("preset %q has no description", o.AttrOr("value", ""))
		}
	})
	if !slices.Equal(presets, []string{"Strict examiner", "Lenient teacher", "Domain expert", "Pedantic fact-checker"}) {
		t.Errorf("personality presets = %q", presets)
	}
	if got := form.Find("select[name=provider_id] option").Length(); got != 2 {
		t.Errorf("provider choices: %d, want a placeholder and Fake", got)
	}
	styles := evalTexts(form.Find("select[name=style_id] option"))
	if len(styles) != 3 || form.Find("select[name=style_id] option[selected]").AttrOr("value", "") != fmt.Sprint(def.ID) {
		t.Errorf("style choices %q, selected %q; want the three built-ins with the default picked", styles, form.Find("select[name=style_id] option[selected]").AttrOr("value", ""))
	}

	// Refused forms show the problem next to its field and keep the input.
	valid := url.Values{"name": {"Strict Qwen"}, "provider_id": {fmt.Sprint(p.ID)}, "model": {"fake-judge"},
		"personality_name": {"Strict examiner"}, "personality_description": {"Harsh <but> fair"},
		"style_id": {fmt.Sprint(def.ID)}, "temperature": {"0.2"}, "max_tokens": {"300"}, "reasoning_effort": {"low"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range valid {
			f[kk] = vv
		}
		f.Set(k, v)
		return f
	}
	bad := []struct {
		name, key, value, errID string
		status                  int
	}{
		{"no provider", "provider_id", "", "error-provider-id", 422},
		{"no model", "model", " ", "error-model", 422},
		{"hot temperature", "temperature", "3", "error-settings-temperature", 422},
		{"temperature not a number", "temperature", "warm", "error-settings-temperature", 422},
		{"max tokens not a number", "max_tokens", "lots", "error-settings-max-tokens", 422},
		{"unknown effort", "reasoning_effort", "extreme", "error-settings-reasoning-effort", 422},
		{"unknown style", "style_id", "9999", "error-style-id", 422},
	}
	for _, b := range bad {
		res, doc := a.post(t, "/judges", with(b.key, b.value), nil)
		f := doc.Find("form[data-testid=judge-form]")
		errEl := f.Find("[data-testid=" + b.errID + "]")
		if res.StatusCode != b.status || errEl.Length() != 1 {
			t.Errorf("%s: status %d, field error %q; want %d and a message at %s (all errors: %q)", b.name, res.StatusCode,
				errEl.Text(), b.status, b.errID, evalTexts(f.Find(".field-error, [data-testid=form-error]")))
			continue
		}
		// The message sits with its field, which is marked invalid.
		if errEl.Closest("label, fieldset").Find("[aria-invalid=true]").Length() != 1 {
			t.Errorf("%s: the field next to %s is not marked invalid", b.name, b.errID)
		}
		if f.Find("[aria-invalid]").Length() != 1 {
			t.Errorf("%s: %d fields marked invalid, want 1", b.name, f.Find("[aria-invalid]").Length())
		}
		if got := f.Find("input[name=name]").AttrOr("value", ""); got != "Strict Qwen" {
			t.Errorf("%s: name not kept: %q", b.name, got)
		}
		if got := f.Find("textarea[name=personality_description]").Text(); got != "Harsh <but> fair" {
			t.Errorf("%s: description not kept: %q", b.name, got)
		}
		if b.key == "temperature" || b.key == "max_tokens" {
			if got := f.Find("input[name="+b.key+"]").AttrOr("value", ""); got != b.value {
				t.Errorf("%s: %s shows %q, want what was typed, %q", b.name, b.key, got, b.value)
			}
		}
	}
	if js, _ := a.st.Judges(ctx); len(js) != 0 {
		t.Fatalf("refused forms saved %d judges", len(js))
	}

	res, _ = a.post(t, "/judges", valid, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/judges" {
		t.Fatalf("create judge: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	js, _ := a.st.Judges(ctx)
	if len(js) != 1 || js[0].Model != "fake-judge" || js[0].PersonalityName != "Strict examiner" || js[0].StyleID != def.ID ||
		js[0].Settings.Temperature == nil || *js[0].Settings.Temperature != 0.2 || js[0].Settings.MaxTokens == nil ||
		*js[0].Settings.MaxTokens != 300 || js[0].Settings.ReasoningEffort != "low" {
		t.Fatalf("saved judge: %+v", js)
	}
	judge := js[0]
	_, doc, html := a.get(t, "/judges")
	row := strings.Join(strings.Fields(doc.Find("[data-testid=judge-row]").Text()), " ")
	for _, want := range []string{"Strict Qwen", "Fake / fake-judge", "Strict examiner", "Harsh <but> fair", store.DefaultStyleName + " v1", "temperature 0.2", "300 max tokens", "reasoning low"} {
		if !strings.Contains(row, want) {
			t.Errorf("judge row %q lacks %q", row, want)
		}
	}
	if strings.Contains(html, "Harsh <but> fair") {
		t.Errorf("the judge's description is not escaped")
	}

	// A name already taken is the form's problem, shown at its top.
	res, doc = a.post(t, "/judges", valid, nil)
	if res.StatusCode != 409 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "already exists") {
		t.Errorf("duplicate judge: %d %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
	}

	// Editing shows the judge, keeps a system prompt the form has no field
	// for, and bumps the version.
	a.do(t, call{method: "PUT", path: fmt.Sprintf("/api/judges/%d", judge.ID), body: fmt.Sprintf(
		`{"name":"Strict Qwen","provider_id":%d,"model":"fake-judge","style_id":%d,"settings":{"system_prompt":"Be terse."}}`, p.ID, def.ID)}, 200, nil)
	res, doc, _ = a.get(t, fmt.Sprintf("/judges/%d/edit", judge.ID))
	f := doc.Find("form[data-testid=judge-form]")
	if res.StatusCode != 200 || f.AttrOr("action", "") != fmt.Sprintf("/judges/%d", judge.ID) ||
		f.Find("input[name=model]").AttrOr("value", "") != "fake-judge" ||
		f.Find("select[name=provider_id] option[selected]").AttrOr("value", "") != fmt.Sprint(p.ID) {
		t.Errorf("edit judge page: %d, action %q", res.StatusCode, f.AttrOr("action", ""))
	}
	edit := with("personality_name", "Lenient teacher")
	res, doc = a.post(t, fmt.Sprintf("/judges/%d", judge.ID), with("temperature", "9"), nil)
	if res.StatusCode != 422 || doc.Find("[data-testid=error-settings-temperature]").Length() != 1 ||
		doc.Find("form[data-testid=judge-form]").AttrOr("action", "") != fmt.Sprintf("/judges/%d", judge.ID) {
		t.Errorf("bad edit: %d, action %q", res.StatusCode, doc.Find("form[data-testid=judge-form]").AttrOr("action", ""))
	}
	res, _ = a.post(t, fmt.Sprintf("/judges/%d", judge.ID), edit, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("update judge: %d", res.StatusCode)
	}
	got, _ := a.st.Judge(ctx, judge.ID)
	if got.PersonalityName != "Lenient teacher" || got.Version != 3 || got.Settings.SystemPrompt != "Be terse." {
		t.Errorf("updated judge: personality %q, version %d, system prompt %q; want Lenient teacher, 3, Be terse.",
			got.PersonalityName, got.Version, got.Settings.SystemPrompt)
	}
	if res, _, _ := a.get(t, "/judges/999/edit"); res.StatusCode != 404 {
		t.Errorf("edit a missing judge: %d", res.StatusCode)
	}

	// The model picker is the providers' one.
	_, doc, _ = a.get(t, fmt.Sprintf("/providers/models?provider_id=%d&list=judge-models", p.ID))
	if doc.Find("datalist#judge-models option").Length() != 3 {
		t.Errorf("judge model options: %d", doc.Find("datalist#judge-models option").Length())
	}

	res, _ = a.post(t, fmt.Sprintf("/judges/%d/delete", judge.ID), nil, hxHeader)
	if res.StatusCode != 200 || res.Header.Get("HX-Redirect") != "/judges" {
		t.Errorf("delete judge: %d %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
	if js, _ := a.st.Judges(ctx); len(js) != 0 {
		t.Errorf("deleted judge still there")
	}
}

func TestStylePages(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	ctx := t.Context()

	res, doc, _ := a.get(t, "/styles")
	if res.StatusCode != 200 || doc.Find("header nav a[aria-current=page]").Text() != "Judges" {
		t.Fatalf("GET /styles: %d", res.StatusCode)
	}
	rows := evalTexts(doc.Find("[data-testid=style-row]"))
	if len(rows) != 3 || !strings.Contains(rows[0], store.DefaultStyleName) || !strings.Contains(rows[0], "1–10") ||
		!strings.Contains(rows[1], "0–5") || !strings.Contains(rows[1], "hallucination") || !strings.Contains(rows[1], "built in") ||
		!strings.Contains(rows[2], store.TaskBenchStyleName) || !strings.Contains(rows[2], "accuracy ×0.4, format ×0.3, compliance ×0.3") ||
		!strings.Contains(rows[2], "+ violations") || strings.Contains(rows[0], "violations") {
		t.Errorf("style rows: %q", rows)
	}
	form := doc.Find("form[data-testid=style-form]")
	if got := form.Find("textarea[name=prompt_template]").Text(); got != rubric.DefaultTemplate {
		t.Errorf("the template is not prefilled with the default one:\n%s", got)
	}
	help := form.Find(".template-help").Text()
	for _, field := range []string{".Question", ".Turns", ".Answers", ".Response", ".Reference", ".Excellent", ".Good", ".Pass",
		".IncorrectAnswerDirection", ".Constraints", ".JudgeInstructions", ".ToolCalls", ".AgentTurns", ".Metrics", ".ScaleMin", ".ScaleMax"} {
		if !strings.Contains(help, "{{"+field+"}}") {
			t.Errorf("template help lacks %s", field)
		}
	}
	var builtins []string
	form.Find("[data-testid^=add-builtin-]").Each(func(_ int, b *goquery.Selection) { builtins = append(builtins, b.AttrOr("hx-get", "")) })
	if len(builtins) != 5 || builtins[0] != "/styles/metric-row?builtin=accuracy" || form.Find("[data-testid=add-metric]").AttrOr("hx-target", "") != "#metrics" {
		t.Errorf("metric buttons: %q", builtins)
	}

	// Metric rows come from the server, blank or as a built-in metric.
	_, doc, _ = a.get(t, "/styles/metric-row?builtin=truthfulness")
	if doc.Find("input[name=metric_name]").AttrOr("value", "") != "truthfulness" ||
		!strings.Contains(doc.Find("input[name=metric_description]").AttrOr("value", ""), "misconceptions") ||
		doc.Find("input[name=metric_weight]").AttrOr("value", "") != "1" {
		t.Errorf("built-in metric row: %s", doc.Find("body").Text())
	}
	_, doc, _ = a.get(t, "/styles/metric-row")
	if doc.Find("[data-testid=metric-row] input[name=metric_name]").AttrOr("value", "x") != "" {
		t.Errorf("blank metric row is not blank")
	}
	if res, _, _ := a.get(t, "/styles/metric-row?builtin=nope"); res.StatusCode != 400 {
		t.Errorf("unknown built-in metric: %d", res.StatusCode)
	}

	valid := url.Values{"name": {"Code review"}, "scale_min": {"0"}, "scale_max": {"5"},
		"metric_name": {"accuracy", "", "style_points"}, "metric_description": {"", "", "Idiomatic <code>"}, "metric_weight": {"2", "", ""},
		"prompt_template": {"Grade {{.Response}} against {{.Reference}} from {{.ScaleMin}} to {{.ScaleMax}}."}}
	with := func(k string, v ...string) url.Values {
		f := url.Values{}
		for kk, vv := range valid {
			f[kk] = vv
		}
		f[k] = v
		return f
	}
	bad := []struct {
		name   string
		form   url.Values
		errID  string
		badRow int // the metric row marked invalid, -1 for none
	}{
		{"empty scale", with("scale_max", "-2"), "error-scale", -1},
		{"scale not a number", with("scale_min", "low"), "error-scale", -1},
		{"bad metric name", with("metric_name", "accuracy", "", "Style Points"), "error-metrics", 1},
		{"weight not a number", with("metric_weight", "2", "", "heavy"), "error-metrics", 1},
		{"template without the answer", with("prompt_template", "Grade {{.Question}}"), "error-prompt-template", -1},
		{"template that does not parse", with("prompt_template", "{{.Response"), "error-prompt-template", -1},
		{"no name", with("name", ""), "error-name", -1},
	}
	for _, b := range bad {
		res, doc := a.post(t, "/styles", b.form, nil)
		f := doc.Find("form[data-testid=style-form]")
		if res.StatusCode != 422 || f.Find("[data-testid="+b.errID+"]").Length() != 1 {
			t.Errorf("%s: status %d; want 422 and a message at %s (errors: %q)", b.name, res.StatusCode, b.errID,
				evalTexts(f.Find(".field-error, [data-testid=form-error]")))
			continue
		}
		// The user's input is all there, without the empty row.
		if got := f.Find("input[name=name]").AttrOr("value", "?"); got != b.form.Get("name") {
			t.Errorf("%s: name %q not kept", b.name, got)
		}
		if got := f.Find("textarea[name=prompt_template]").Text(); got != b.form.Get("prompt_template") {
			t.Errorf("%s: template %q not kept", b.name, got)
		}
		var names []string
		f.Find("input[name=metric_name]").Each(func(_ int, e *goquery.Selection) { names = append(names, e.AttrOr("value", "")) })
		if want := []string{b.form["metric_name"][0], b.form["metric_name"][2]}; !slices.Equal(names, want) {
			t.Errorf("%s: metric rows %q, want %q", b.name, names, want)
		}
		if got := f.Find("input[name=metric_description]").Eq(1).AttrOr("value", ""); got != "Idiomatic <code>" {
			t.Errorf("%s: metric description %q not kept", b.name, got)
		}
		marked := -1
		f.Find("[data-testid=metric-row]").Each(func(i int, r *goquery.Selection) {
			if r.Find("[aria-invalid=true]").Length() > 0 {
				marked = i
			}
		})
		if marked != b.badRow {
			t.Errorf("%s: metric row %d marked invalid, want %d", b.name, marked, b.badRow)
		}
		if !f.Parent().Is("details[open]") {
			t.Errorf("%s: the new-style form is folded away with its error", b.name)
		}
	}

	res, _ = a.post(t, "/styles", valid, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !regexp.MustCompile(`^/styles/\d+$`).MatchString(loc) {
		t.Fatalf("create style: %d %s", res.StatusCode, loc)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/styles/"), 10, 64)
	st, err := a.st.Style(ctx, id)
	if err != nil || st.Version != 1 || st.ScaleMin != 0 || st.ScaleMax != 5 || len(st.Metrics) != 2 ||
		st.Metrics[0].Weight != 2 || !strings.Contains(st.Metrics[0].Description, "factually") || st.Metrics[1].Name != "style_points" {
		t.Fatalf("created style: %+v, %v", st, err)
	}
	res, doc = a.post(t, "/styles", valid, nil)
	if res.StatusCode != 409 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "already exists") {
		t.Errorf("duplicate style: %d", res.StatusCode)
	}

	// Editing adds version 2; the history shows both, newest first.
	res, doc, _ = a.get(t, fmt.Sprintf("/styles/%d/edit", id))
	f := doc.Find("form[data-testid=style-form]")
	if res.StatusCode != 200 || f.AttrOr("action", "") != loc || f.Find("input[name=scale_max]").AttrOr("value", "") != "5" ||
		f.Find("input[name=metric_name]").Length() != 2 || !strings.Contains(f.Find("button[type=submit]").Text(), "version 2") {
		t.Fatalf("edit style page: %d, action %q, %d metric rows", res.StatusCode, f.AttrOr("action", ""), f.Find("input[name=metric_name]").Length())
	}
	res, doc = a.post(t, loc, with("scale_min", "9"), nil)
	if res.StatusCode != 422 || doc.Find("[data-testid=error-scale]").Length() != 1 || doc.Find("form[data-testid=style-form]").AttrOr("action", "") != loc {
		t.Errorf("bad style edit: %d", res.StatusCode)
	}
	res, _ = a.post(t, loc, with("scale_max", "10"), nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != loc {
		t.Fatalf("update style: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, doc, _ = a.get(t, loc)
	var versions, scales []string
	doc.Find("[data-testid=style-version]").Each(func(_ int, v *goquery.Selection) {
		versions = append(versions, v.AttrOr("data-version", ""))
		scales = append(scales, strings.TrimSpace(v.Find("p").First().Text()))
	})
	if res.StatusCode != 200 || !slices.Equal(versions, []string{"2", "1"}) || !slices.Equal(scales, []string{"Scale 0–10", "Scale 0–5"}) {
		t.Errorf("style history: %d, versions %q, scales %q", res.StatusCode, versions, scales)
	}
	_, doc, _ = a.get(t, "/styles")
	if row := doc.Find("[data-testid=style-row]:contains('Code review') td.num").Text(); row != "v2" {
		t.Errorf("styles list does not show version 2: %q", evalTexts(doc.Find("[data-testid=style-row]")))
	}
	if res, _, _ := a.get(t, "/styles/999"); res.StatusCode != 404 {
		t.Errorf("history of a missing style: %d", res.StatusCode)
	}

	// A built-in style cannot be deleted: the page shows why.
	def, _ := a.st.DefaultStyle(ctx)
	res, doc = a.post(t, fmt.Sprintf("/styles/%d/delete", def.ID), nil, hxHeader)
	if res.StatusCode != 409 || res.Header.Get("HX-Retarget") != "#flash" || !strings.Contains(doc.Find("[data-testid=flash-error]").Text(), "built in") {
		t.Errorf("delete built-in style: %d %q %q", res.StatusCode, res.Header.Get("HX-Retarget"), doc.Text())
	}
	res, doc = a.post(t, fmt.Sprintf("/styles/%d/delete", def.ID), nil, nil)
	if res.StatusCode != 409 || !strings.Contains(doc.Find("[data-testid=error-message]").Text(), "built in") {
		t.Errorf("delete built-in style without HTMX: %d", res.StatusCode)
	}
	res, _ = a.post(t, fmt.Sprintf("/styles/%d/delete", id), nil, hxHeader)
	if res.StatusCode != 200 || res.Header.Get("HX-Redirect") != "/styles" {
		t.Errorf("delete style: %d", res.StatusCode)
	}
	if _, err := a.st.Style(ctx, id); err == nil {
		t.Errorf("deleted style still there")
	}
}

// gradingTasks are the grading test's tasks; the strict judge's score of
// each sets how much the panel disagrees on it (the lenient one gives 8).
var gradingTasks = []struct {
	key, question string
	strict        int
}{
	{"g-1", "What is 1+1?", 8}, // spread 0
	{"g-2", "What is 2+2?", 2}, // spread 6/9
	{"g-3", "What is 3+3?", 5}, // spread 3/9
}

func gradingScript(r llmtest.ChatRequest) llmtest.Reply {
	if !r.IsJudge() {
		return llmtest.Reply{Content: "<b>Answer</b> to " + r.Last()}
	}
	score := 8
	if r.Model == "fake-judge" {
		for _, g := range gradingTasks {
			if strings.Contains(r.Last(), g.question) {
				score = g.strict
			}
		}
	}
	return llmtest.Reply{Content: fmt.Sprintf(`{"score": %d, "reasoning": "%s says %d."}`, score, r.Model, score)}
}

// gradingRun runs every grading task on two models with a panel of two
// judges, and returns the finished run's id.
func gradingRun(t *testing.T, a *app) int64 {
	t.Helper()
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
	keys := []string{}
	for _, g := range gradingTasks {
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":%q,"category":"math","question":%q,"excellent":"exactly right","pass":"close","incorrect_answer_direction":"a <wrong> sum"}`,
			g.key, g.question)}, 201, nil)
		keys = append(keys, g.key)
	}
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: fmt.Sprintf(`{"name":"G","task_ids":[%s]}`, `"`+strings.Join(keys, `","`)+`"`)}, 201, &col)
	var strict, lenient store.Judge
	a.do(t, call{method: "POST", path: "/api/judges", body: fmt.Sprintf(`{"name":"Strict","provider_id":%d,"model":"fake-judge","personality_name":"Strict examiner"}`, p.ID)}, 201, &strict)
	a.do(t, call{method: "POST", path: "/api/judges", body: fmt.Sprintf(`{"name":"Lenient","provider_id":%d,"model":"fake-large"}`, p.ID)}, 201, &lenient)
	var run runReply
	a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"name":"Grading","judge_ids":[%d,%d],"targets":[{"provider_id":%d,"model":"fake-small"},{"provider_id":%d,"model":"fake-large"}],"collection_ids":[%d]}`,
		strict.ID, lenient.ID, p.ID, p.ID, col.ID)}, 201, &run)
	a.collectEvents(t, run.ID, "")
	a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d", run.ID)}, 200, &run)
	if run.Status != store.RunFinished || run.Progress.Completed != 6 {
		t.Fatalf("grading run did not finish: %+v", run)
	}
	return run.ID
}

// gradingState is what the grading panel says.
type gradingState struct {
	item               int64
	task, model        string
	progress, position string
	prev, next         string
	post               string
}

func readGrading(t *testing.T, doc *goquery.Document) gradingState {
	t.Helper()
	p := doc.Find("#grading")
	if p.Length() != 1 {
		t.Fatalf("no grading panel in %s", doc.Text())
	}
	id, _ := strconv.ParseInt(p.AttrOr("data-item-id", ""), 10, 64)
	return gradingState{item: id, task: p.Find("[data-testid=grading-task-id]").Text(),
		model:    p.Find("[data-testid=grading-model-label]").Text(),
		progress: strings.TrimSpace(p.Find("[data-testid=grade-progress]").Text()),
		position: strings.Join(strings.Fields(p.Find("[data-testid=queue-position]").Text()), " "),
		prev:     p.Find("a[data-testid=prev-item]").AttrOr("hx-get", ""), next: p.Find("a[data-testid=next-item]").AttrOr("hx-get", ""),
		post: p.Find("#grade-form").AttrOr("hx-post", "")}
}

func TestGradingPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, gradingScript)
		ctx := t.Context()
		runID := gradingRun(t, a)
		page := fmt.Sprintf("/runs/%d/grade", runID)

		res, doc, html := a.get(t, page)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d", page, res.StatusCode)
		}
		g := readGrading(t, doc)
		// The judges disagree most on g-2 (2 against 8), then on g-3.
		if g.task != "g-2" || g.progress != "graded 0 of 6" || g.position != "item 1 of 6" || g.prev != "" || g.next == "" {
			t.Fatalf("first item: %+v", g)
		}
		since := regexp.MustCompile(`since=(\d+)`).FindStringSubmatch(g.post)
		if since == nil || !strings.Contains(g.next, "since="+since[1]) {
			t.Fatalf("the session is not carried by the links: post %q, next %q", g.post, g.next)
		}
		if doc.Find("form[data-testid=grading-filters] [name=since]").Length() != 0 {
			t.Errorf("a filter change would keep the old session")
		}
		panel := doc.Find("#grading")
		if q := panel.Find("[data-testid=grading-question]").Text(); q != "What is 2+2?" {
			t.Errorf("question shown: %q", q)
		}
		if r := panel.Find("[data-testid=grading-response]").Text(); !strings.HasPrefix(r, "<b>Answer</b> to What is 2+2?") {
			t.Errorf("response shown: %q", r)
		}
		if strings.Contains(html, "<b>Answer</b>") || strings.Contains(html, "a <wrong> sum") {
			t.Errorf("what models and users wrote is not escaped")
		}
		for key, want := range map[string]string{"excellent": "exactly right", "pass": "close", "incorrect": "a <wrong> sum"} {
			if got := panel.Find("[data-testid=ref-" + key + "]").Text(); got != want {
				t.Errorf("reference %s shows %q, want %q", key, got, want)
			}
		}
		if panel.Find("[data-testid=ref-good]").Length() != 0 {
			t.Errorf("an empty reference is shown")
		}
		verdicts := []string{}
		panel.Find("[data-testid=verdict]").Each(func(_ int, v *goquery.Selection) {
			verdicts = append(verdicts, strings.Join([]string{v.Find("[data-testid=verdict-judge]").Text(), v.Find("header > small").Text(),
				v.Find("[data-testid=verdict-score]").Text(), v.Find("[data-testid=verdict-reasoning]").Text()}, "|"))
		})
		if !slices.Equal(verdicts, []string{"Strict|Strict examiner|2/10|fake-judge says 2.", "Lenient||8/10|fake-large says 8."}) {
			t.Errorf("verdicts: %q", verdicts)
		}
		if d := panel.Find("[data-testid=disagreement]").Text(); d != "judges differ by 67%" {
			t.Errorf("disagreement badge: %q", d)
		}
		if got := evalTexts(doc.Find("select[name=model] option")); !slices.Equal(got, []string{"All models", "fake-small", "fake-large"}) {
			t.Errorf("model filter: %q", got)
		}
		if n := panel.Find("button[name=grade]").Length(); n != 3 || panel.Find("textarea[name=notes]").Length() != 1 {
			t.Errorf("grade form: %d buttons", n)
		}

		// A grade is stored and the next item comes back, in place.
		first := g
		res, doc = a.post(t, first.post, url.Values{"grade": {"correct"}, "notes": {"spot <on>"}}, hxHeader)
		g = readGrading(t, doc)
		if res.StatusCode != 200 || g.item == first.item || g.task != "g-2" || g.progress != "graded 1 of 6" || g.position != "item 2 of 6" {
			t.Fatalf("after grading: %d %+v", res.StatusCode, g)
		}
		if saved := doc.Find("[data-testid=grade-saved]").Text(); !strings.Contains(saved, "g-2") || !strings.Contains(saved, "correct") {
			t.Errorf("saved message: %q", saved)
		}
		if push := res.Header.Get("HX-Push-Url"); !strings.Contains(push, fmt.Sprintf("item=%d", g.item)) || !strings.Contains(push, "since="+since[1]) {
			t.Errorf("HX-Push-Url %q does not name the next item and session", push)
		}
		if doc.Find("html").Length() != 0 && doc.Find("nav").Length() > 1 {
			t.Errorf("the HTMX answer is a whole page")
		}
		grade, err := st.ItemGrade(ctx, first.item)
		if err != nil || grade == nil || grade.Grade != "correct" || grade.Notes != "spot <on>" {
			t.Fatalf("stored grade: %+v %v", grade, err)
		}
		// The graded item keeps its place in this session: going back finds it with its grade.
		if !strings.Contains(g.prev, fmt.Sprintf("item=%d", first.item)) {
			t.Errorf("previous of the next item is %q, want item %d", g.prev, first.item)
		}
		_, doc, _ = a.get(t, g.prev)
		back := doc.Find("#grading")
		if back.AttrOr("data-item-id", "") != fmt.Sprint(first.item) || back.Find("[data-testid=current-grade-value]").Text() != "correct" ||
			back.Find("textarea[name=notes]").Text() != "spot <on>" || back.Find("button[data-grade=correct][aria-pressed=true]").Length() != 1 {
			t.Errorf("going back shows item %s with grade %q and notes %q", back.AttrOr("data-item-id", ""),
				back.Find("[data-testid=current-grade-value]").Text(), back.Find("textarea[name=notes]").Text())
		}

		// A refused grade shows why, keeps the notes, and stores nothing.
		second := g
		res, doc = a.post(t, second.post, url.Values{"grade": {"maybe"}, "notes": {"unsure"}}, hxHeader)
		if res.StatusCode != 422 || readGrading(t, doc).item != second.item || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "correct, partial or wrong") ||
			doc.Find("textarea[name=notes]").Text() != "unsure" {
			t.Errorf("bad grade: %d, item %d, %q", res.StatusCode, readGrading(t, doc).item, doc.Find("[data-testid=form-error]").Text())
		}
		if g, _ := st.ItemGrade(ctx, second.item); g != nil {
			t.Errorf("a refused grade was stored: %+v", g)
		}

		// Without HTMX the form posts and redirects to the next item.
		res, _ = a.post(t, second.post, url.Values{"grade": {"partial"}}, nil)
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "since="+since[1]) {
			t.Errorf("plain grade post: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		_, doc, _ = a.get(t, res.Header.Get("Location"))
		third := readGrading(t, doc)
		if third.task != "g-3" || third.progress != "graded 2 of 6" || third.position != "item 3 of 6" {
			t.Errorf("after two grades: %+v", third)
		}
		// The last write wins.
		a.post(t, first.post, url.Values{"grade": {"wrong"}}, hxHeader)
		if g, _ := st.ItemGrade(ctx, first.item); g == nil || g.Grade != "wrong" || g.Notes != "" {
			t.Errorf("regrade: %+v", g)
		}

		// Filters: by model, and only the ungraded (a new session puts the graded aside).
		_, doc, _ = a.get(t, page+"?model=fake-large")
		g = readGrading(t, doc)
		if g.model != "Fake / fake-large" || g.progress != "graded 1 of 3" || g.position != "item 1 of 3" || !strings.Contains(g.post, "model=fake-large") {
			t.Errorf("model filter: %+v", g)
		}
		_, doc, _ = a.get(t, page+"?ungraded=1")
		g = readGrading(t, doc)
		if g.progress != "graded 2 of 6" || g.position != "item 1 of 4" || g.task != "g-3" {
			t.Errorf("ungraded filter: %+v", g)
		}
		if doc.Find("input[name=ungraded][checked]").Length() != 1 {
			t.Errorf("the ungraded box is not ticked")
		}
		res, doc, _ = a.get(t, page+"?status=FAILED")
		if res.StatusCode != 200 || doc.Find("[data-testid=grading-empty]").Length() != 1 || readGrading(t, doc).progress != "graded 0 of 0" {
			t.Errorf("empty filter: %d %q", res.StatusCode, doc.Find("#grading").Text())
		}
		// An HTMX filter change answers the panel alone.
		req, _ := http.NewRequest("GET", a.srv.URL+page+"?model=fake-small", nil)
		req.Header.Set("HX-Request", "true")
		hres, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		hdoc, _ := goquery.NewDocumentFromReader(hres.Body)
		hres.Body.Close()
		if hdoc.Find("#grading").Length() != 1 || hdoc.Find("form[data-testid=grading-filters]").Length() != 0 {
			t.Errorf("HTMX filter answer is not the panel alone")
		}

		for path, want := range map[string]int{
			page + "?status=BOGUS":                  400,
			page + "?since=yesterday":               400,
			fmt.Sprintf("/runs/%d/grade", runID+99): 404,
		} {
			if res, _, _ := a.get(t, path); res.StatusCode != want {
				t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
			}
		}
		// An item of another run is not this run's to grade.
		if res, _ := a.post(t, fmt.Sprintf("/runs/%d/grade/%d", runID+99, first.item), url.Values{"grade": {"correct"}}, nil); res.StatusCode != 404 {
			t.Errorf("grade through another run: %d", res.StatusCode)
		}
		if res, _ := a.post(t, fmt.Sprintf("/runs/%d/grade/99999", runID), url.Values{"grade": {"correct"}}, nil); res.StatusCode != 404 {
			t.Errorf("grade a missing item: %d", res.StatusCode)
		}
	})
}

// TestGradingMultiTurn shows every turn with its answer, a judge's metric
// scores, and the reference checks.
func TestGradingMultiTurn(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			return llmtest.Reply{Content: `{"accuracy": {"score": 4, "reasoning": "Right sums."}, "coherence": {"score": 2, "reasoning": "Rambles."}}`}
		}
		return llmtest.Reply{Content: fmt.Sprintf("Reply %d: %s", len(r.Messages), r.Last())}
	})
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
	var style store.JudgementStyle
	a.do(t, call{method: "POST", path: "/api/judgement-styles", body: `{"name":"Two","scale_min":0,"scale_max":5,"metrics":[{"name":"accuracy"},{"name":"coherence"}]}`}, 201, &style)
	var judge store.Judge
	a.do(t, call{method: "POST", path: "/api/judges", body: fmt.Sprintf(`{"name":"Examiner","provider_id":%d,"model":"fake-judge","style_id":%d}`, p.ID, style.ID)}, 201, &judge)
	a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"mt-1","category":"chat","turns":["Pick a number.","Now double it."],"reference":"Twice the first number","checks":[{"type":"contains","value":"double"}]}`}, 201, nil)
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"MT","task_ids":["mt-1"]}`}, 201, &col)
	var run runReply
	a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge_ids":[%d],"targets":[{"provider_id":%d,"model":"fake-small"}],"collection_ids":[%d]}`,
		judge.ID, p.ID, col.ID)}, 201, &run)
	a.collectEvents(t, run.ID, "")

	_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d/grade", run.ID))
	panel := doc.Find("#grading")
	turns := evalTexts(panel.Find("[data-testid=grading-question]"))
	answers := evalTexts(panel.Find("[data-testid=grading-response]"))
	if !slices.Equal(turns, []string{"Pick a number.", "Now double it."}) || len(answers) != 2 ||
		!strings.HasSuffix(answers[0], "Pick a number.") || !strings.HasSuffix(answers[1], "Now double it.") {
		t.Errorf("turns %q, answers %q", turns, answers)
	}
	if got := panel.Find("[data-testid=ref-reference]").Text(); got != "Twice the first number" {
		t.Errorf("reference: %q", got)
	}
	v := panel.Find("[data-testid=verdict]")
	rows := []string{}
	v.Find("tbody tr").Each(func(_ int, r *goquery.Selection) { rows = append(rows, strings.Join(evalTexts(r.Find("td")), "|")) })
	if v.Length() != 1 || v.Find("[data-testid=verdict-score]").Text() != "3/5" ||
		!slices.Equal(rows, []string{"accuracy|4|Right sums.", "coherence|2|Rambles."}) {
		t.Errorf("verdict: score %q, metric rows %q", v.Find("[data-testid=verdict-score]").Text(), rows)
	}
	if checks := evalTexts(panel.Find("[data-testid=grading-checks] tbody td:first-child")); !slices.Equal(checks, []string{"contains"}) {
		t.Errorf("checks shown: %q", checks)
	}
}
