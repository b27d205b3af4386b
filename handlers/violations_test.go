package handlers_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestStyleEditorAsksViolations: the style form's switch saves the flag on
// the version, shows again when editing, can be switched off in the next
// version, and the preview's system prompt asks for violations only with it.
func TestStyleEditorAsksViolations(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	form := url.Values{"name": {"Strict format"}, "scale_min": {"0"}, "scale_max": {"10"}, "metric_name": {"format"},
		"asks_violations": {"on"}}
	if res, _ := a.post(t, "/styles", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create style: %d", res.StatusCode)
	}
	var styles []store.JudgementStyle
	a.do(t, call{method: "GET", path: "/api/judgement-styles"}, 200, &styles)
	var id int64
	for _, s := range styles {
		if s.Name == "Strict format" {
			id = s.ID
			if !s.AsksViolations {
				t.Errorf("the switch was not saved: %+v", s)
			}
		}
	}
	_, doc, _ := a.get(t, fmt.Sprintf("/styles/%d/edit", id))
	if _, on := doc.Find("[data-testid=asks-violations]").Attr("checked"); !on {
		t.Errorf("the edit form forgets the switch")
	}
	form.Del("asks_violations")
	if res, _ := a.post(t, fmt.Sprintf("/styles/%d", id), form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("new version: %d", res.StatusCode)
	}
	var versions []store.JudgementStyle
	a.do(t, call{method: "GET", path: fmt.Sprintf("/api/judgement-styles/%d/versions", id)}, 200, &versions)
	if len(versions) != 2 || versions[0].AsksViolations || !versions[1].AsksViolations {
		t.Errorf("versions = %+v; want v2 without violations, v1 with", versions)
	}
	_, doc, _ = a.get(t, fmt.Sprintf("/styles/%d", id))
	if h := doc.Find("[data-testid=style-version][data-version=\"1\"]").Text(); !strings.Contains(h, "the judge lists violations") {
		t.Errorf("history of v1 does not say it lists violations: %s", h)
	}

	preview := func(on bool) string {
		f := url.Values{"scale_min": {"0"}, "scale_max": {"10"}, "metric_name": {"format"}}
		if on {
			f.Set("asks_violations", "on")
		}
		_, doc := a.post(t, "/styles/preview", f, map[string]string{"HX-Request": "true"})
		return doc.Text()
	}
	if p := preview(true); !strings.Contains(p, "missing_field: a required field") || !strings.Contains(p, `"violations": [{"category"`) {
		t.Errorf("the preview does not ask for violations:\n%s", p)
	}
	if p := preview(false); strings.Contains(p, "missing_field") {
		t.Errorf("the preview asks for violations without the switch:\n%s", p)
	}
}

// TestViolationsShownAndExported runs the built-in TaskBench style with the
// fake judge listing violations (one of them trying HTML), and for another
// model a malformed list: the items all score, the run page counts them per
// model and category with links to the filtered items, the item page lists
// them escaped (and the note), and the exports carry them.
func TestViolationsShownAndExported(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		scores := `"accuracy": {"score": 80, "reasoning": "a"}, "format": {"score": 90, "reasoning": "f"}, "compliance": {"score": 60, "reasoning": "c"}`
		a := newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
			switch {
			case !r.IsJudge():
				return llmtest.Reply{Content: "answer from " + r.Model + "."}
			case strings.Contains(r.Last(), "answer from tidy."):
				return llmtest.Reply{Content: `{` + scores + `, "violations": [{"category": "under_min", "detail": "<b>12</b> words, 20 asked"},
					{"category": "format", "detail": "no list"}]}`}
			}
			return llmtest.Reply{Content: `{` + scores + `, "violations": {"oops": 1}}`}
		})
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"concurrency":4}`, a.fake.URL)}, 201, &p)
		for _, k := range []string{"t1", "t2"} {
			a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":%q,"category":"c","question":"Write %s"}`, k, k)}, 201, nil)
		}
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"C","task_ids":["t1","t2"]}`}, 201, &col)
		var styles []store.JudgementStyle
		a.do(t, call{method: "GET", path: "/api/judgement-styles"}, 200, &styles)
		i := slices.IndexFunc(styles, func(s store.JudgementStyle) bool { return s.Name == store.TaskBenchStyleName })
		if i < 0 {
			t.Fatalf("no built-in %q in %+v", store.TaskBenchStyleName, styles)
		}
		var judge store.Judge
		a.do(t, call{method: "POST", path: "/api/judges", body: fmt.Sprintf(`{"name":"TB","provider_id":%d,"model":"j","style_id":%d}`, p.ID, styles[i].ID)}, 201, &judge)
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge_ids":[%d],"targets":[{"provider_id":%d,"model":"tidy"},{"provider_id":%d,"model":"sloppy"}],"collection_ids":[%d]}`,
			judge.ID, p.ID, p.ID, col.ID)}, 201, &run)
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("run %s", r.Status)
		}

		// The run page: tidy has 2 under_min and 2 format violations, sloppy none.
		_, doc, _ := a.get(t, fmt.Sprintf("/runs/%d", run.ID))
		table := doc.Find("[data-testid=violations-table]")
		if table.Length() != 1 {
			t.Fatalf("no violations table on the run page")
		}
		cells := map[string]string{}
		table.Find("[data-testid=violations-row]").Each(func(_ int, row *goquery.Selection) {
			model := strings.TrimSpace(row.Find("td").First().Text())
			row.Find("td[data-category]").Each(func(_ int, td *goquery.Selection) {
				cells[firstWord(model)+"/"+td.AttrOr("data-category", "")] = strings.TrimSpace(td.Text())
			})
		})
		for k, want := range map[string]string{"tidy/under_min": "2", "tidy/format": "2", "tidy/over_max": "0", "sloppy/format": "0", "sloppy/other": "0"} {
			if cells[k] != want {
				t.Errorf("cell %s = %q; want %q (all %v)", k, cells[k], want, cells)
			}
		}
		link := table.Find("td[data-category=under_min] a[data-testid=violation-count]")
		if href := link.AttrOr("href", ""); href != fmt.Sprintf("/runs/%d?model=tidy&violation=under_min#items", run.ID) ||
			link.AttrOr("hx-get", "") != fmt.Sprintf("/runs/%d/items?model=tidy&violation=under_min", run.ID) {
			t.Errorf("count link %q / %q", href, link.AttrOr("hx-get", ""))
		}

		// The link's items: tidy's two, and the filter shows the category picked.
		_, doc, _ = a.get(t, link.AttrOr("hx-get", ""))
		if n := doc.Find("[data-testid=item-row]").Length(); n != 2 {
			t.Errorf("%d items with an under_min violation; want 2", n)
		}
		if got := doc.Find("[data-testid=items-violation-filter] option[selected]").AttrOr("value", ""); got != "under_min" {
			t.Errorf("the filter shows %q", got)
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?violation=rude", run.ID)}, 400, nil)

		// The item page lists the verdict's violations, escaped.
		itemURL := doc.Find("[data-testid=item-link]").First().AttrOr("href", "")
		_, doc, raw := a.get(t, itemURL)
		if strings.Contains(raw, "<b>12</b>") {
			t.Errorf("a judge's detail reached the page unescaped")
		}
		var listed []string
		doc.Find("[data-testid=judge-violations] li").Each(func(_ int, li *goquery.Selection) {
			listed = append(listed, li.AttrOr("data-category", "")+": "+strings.TrimSpace(li.Text()))
		})
		if want := []string{"under_min: Below a minimum <b>12</b> words, 20 asked", "format: Wrong format no list"}; !slices.Equal(listed, want) {
			t.Errorf("item violations %q; want %q", listed, want)
		}

		// The grading page shows the grader the same list beside the verdict;
		// a verdict that named none says so, and why when its list was not one.
		for model, want := range map[string][]string{
			"tidy":   {"under_min: Below a minimum <b>12</b> words, 20 asked", "format: Wrong format no list"},
			"sloppy": nil,
		} {
			_, doc, raw := a.get(t, fmt.Sprintf("/runs/%d/grade?model=%s", run.ID, model))
			if strings.Contains(raw, "<b>12</b>") {
				t.Errorf("a judge's detail reached the grading page unescaped")
			}
			box := doc.Find("[data-testid=verdict] [data-testid=verdict-violations]")
			var listed []string
			box.Find("li").Each(func(_ int, li *goquery.Selection) {
				listed = append(listed, li.AttrOr("data-category", "")+": "+strings.TrimSpace(li.Text()))
			})
			if box.Length() != 1 || !slices.Equal(listed, want) || (want == nil) != strings.Contains(box.Text(), "None listed") {
				t.Errorf("%s's grading violations %q (%d lists: %q); want %q", model, listed, box.Length(), box.Text(), want)
			}
			if note := box.Find("[data-testid=violations-note]").Text(); (want == nil) != strings.Contains(note, "were not a list; none were kept") {
				t.Errorf("%s's grading violations note %q", model, note)
			}
		}

		// A sloppy item scored, its note kept.
		var items struct{ Items []struct{ ID int64 } }
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/items?model=sloppy", run.ID)}, 200, &items)
		if len(items.Items) != 2 {
			t.Fatalf("sloppy items: %+v", items)
		}
		var detail struct {
			Overall *float64 `json:"overall"`
			Judges  []struct {
				Violations     []map[string]string `json:"violations"`
				ViolationsNote string              `json:"violations_note"`
			} `json:"judges"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/items/%d", items.Items[0].ID)}, 200, &detail)
		if detail.Overall == nil || *detail.Overall < 76.99 || *detail.Overall > 77.01 || len(detail.Judges) != 1 ||
			len(detail.Judges[0].Violations) != 0 || detail.Judges[0].ViolationsNote != "the judge's violations were not a list; none were kept" {
			t.Errorf("sloppy item = %+v; want overall 77 and the note", detail)
		}
		_, doc, _ = a.get(t, fmt.Sprintf("/items/%d", items.Items[0].ID))
		if n := doc.Find("[data-testid=violations-note]").Text(); !strings.Contains(n, "not a list") {
			t.Errorf("the item page does not show the note: %q", n)
		}

		// Exports: the CSV's violations column, the JSON's items and summary, the HTML report's table.
		res, err := http.Get(fmt.Sprintf("%s/api/runs/%d/export", a.srv.URL, run.ID))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(res.Body).ReadAll()
		res.Body.Close()
		if err != nil || len(rows) != 5 {
			t.Fatalf("CSV: %d rows, %v", len(rows), err)
		}
		vcol := slices.Index(rows[0], "violations")
		model := slices.Index(rows[0], "model")
		for _, r := range rows[1:] {
			var vs []map[string]string
			if r[model] == "sloppy" {
				if r[vcol] != "" {
					t.Errorf("sloppy's violations cell = %q", r[vcol])
				}
				continue
			}
			if err := json.Unmarshal([]byte(r[vcol]), &vs); err != nil || len(vs) != 2 || vs[0]["category"] != "under_min" || vs[0]["judge"] != "TB" {
				t.Errorf("tidy's violations cell = %q (%v)", r[vcol], err)
			}
		}
		var export struct {
			Summary struct {
				Violations struct {
					PerModel []struct {
						Total int64 `json:"total"`
					} `json:"per_model"`
					Total int64 `json:"total"`
				} `json:"violations"`
			} `json:"summary"`
			Items []struct {
				Model      string              `json:"model"`
				Violations []map[string]string `json:"violations"`
			} `json:"items"`
		}
		a.do(t, call{method: "GET", path: fmt.Sprintf("/api/runs/%d/export?format=json", run.ID)}, 200, &export)
		if export.Summary.Violations.Total != 4 || len(export.Items) != 4 {
			t.Errorf("JSON export: summary %+v, %d items", export.Summary.Violations, len(export.Items))
		}
		for _, it := range export.Items {
			if want := map[string]int{"tidy": 2, "sloppy": 0}[it.Model]; len(it.Violations) != want {
				t.Errorf("JSON item of %s has %d violations; want %d", it.Model, len(it.Violations), want)
			}
		}
		res, err = http.Get(fmt.Sprintf("%s/api/runs/%d/export?format=html", a.srv.URL, run.ID))
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(html), `data-testid="violations"`) || !strings.Contains(string(html), "2 (2)") {
			t.Errorf("the HTML report has no violations table")
		}
	})
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
