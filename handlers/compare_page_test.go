package handlers_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// twoRuns runs "strong" and "weak" on ten tasks, then "strong" again with
// "other": the second strong scores lower on q03 (a regression against the
// first run, the baseline).
func twoRuns(t *testing.T, st *store.Store) (a *app, first, second int64) {
	t.Helper()
	a = newApp(t, st, func(r llmtest.ChatRequest) llmtest.Reply {
		if r.IsJudge() {
			switch {
			case strings.Contains(r.Last(), "weak says"):
				return llmtest.Reply{Content: `{"score": 2, "reasoning": "wrong"}`}
			case strings.Contains(r.Last(), "v2 strong says q03"):
				return llmtest.Reply{Content: `{"score": 4, "reasoning": "worse"}`}
			}
			return llmtest.Reply{Content: `{"score": 8, "reasoning": "right"}`}
		}
		prefix := ""
		if strings.Contains(r.Messages[0].Content, "v2") {
			prefix = "v2 "
		}
		return llmtest.Reply{Content: prefix + r.Model + " says " + r.Last()}
	})
	var p store.Provider
	a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q,"concurrency":8}`, a.fake.URL)}, 201, &p)
	var keys []string
	for i := range 10 {
		k := fmt.Sprintf("q%02d", i)
		a.do(t, call{method: "POST", path: "/api/tasks", body: fmt.Sprintf(`{"task_id":%q,"category":"c","question":%q}`, k, k)}, 201, nil)
		keys = append(keys, fmt.Sprintf("%q", k))
	}
	var col store.CollectionDetail
	a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"C","task_ids":[` + strings.Join(keys, ",") + `]}`}, 201, &col)
	start := func(name, system string, models ...string) int64 {
		var targets []string
		for _, m := range models {
			targets = append(targets, fmt.Sprintf(`{"provider_id":%d,"model":%q}`, p.ID, m))
		}
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"name":%q,"system_prompt":%q,"judge":{"provider_id":%d,"model":"j"},"targets":[%s],"collection_ids":[%d]}`,
			name, system, p.ID, strings.Join(targets, ","), col.ID)}, 201, &run)
		a.collectEvents(t, run.ID, "")
		return run.ID
	}
	return a, start("Monday", "v1", "strong", "weak"), start("Tuesday", "v2", "strong", "other")
}

// TestCompareVerdictsAndRegressions: the same model across runs is compared
// first, then models within a run; a regressed task names the model.
func TestCompareVerdictsAndRegressions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a, first, second := twoRuns(t, st)
		q := fmt.Sprintf("run_ids=%d,%d&baseline=%d", first, second, first)
		var cmp struct {
			PairTests []struct {
				A, B    string
				Pairing string `json:"pairing"`
			} `json:"pair_tests"`
		}
		a.do(t, call{method: "GET", path: "/api/compare?" + q}, 200, &cmp)
		var order []string
		for _, p := range cmp.PairTests {
			order = append(order, p.Pairing)
		}
		// 4 entries, 6 pairs: strong×strong across runs; strong–weak, strong–other within; 3 others.
		if want := "same_model,same_run,same_run,,,"; strings.Join(order, ",") != want {
			t.Fatalf("pairings %v, want %s", order, want)
		}
		if p := cmp.PairTests[0]; p.A != "strong (Monday)" || p.B != "strong (Tuesday)" {
			t.Errorf("first verdict compares %q and %q", p.A, p.B)
		}

		_, doc, _ := a.get(t, "/compare?"+q)
		groups := doc.Find(`[data-testid=verdicts]`)
		if groups.Length() != 3 || groups.First().AttrOr("data-pairing", "") != "same_model" || groups.Eq(1).AttrOr("data-pairing", "") != "same_run" {
			t.Errorf("verdict groups: %d, first %q", groups.Length(), groups.First().AttrOr("data-pairing", ""))
		}
		if first := strings.TrimSpace(doc.Find(`[data-testid=verdict]`).First().Text()); !strings.Contains(first, "strong (Monday)") || !strings.Contains(first, "strong (Tuesday)") {
			t.Errorf("first verdict on the page: %q", first)
		}
		var regressed []string
		doc.Find(`[data-testid=compare-task]`).Each(func(_ int, row *goquery.Selection) {
			if b := row.Find(`[data-testid=regressed]`); b.Length() > 0 {
				regressed = append(regressed, row.Find("code").First().Text()+" "+strings.TrimSpace(b.Text()))
			}
		})
		if len(regressed) != 1 || regressed[0] != "q03 REGRESSED: strong" {
			t.Errorf("regressed badges %q", regressed)
		}
		// The baseline run's columns come first, the first one pinned next to the task.
		heads := doc.Find(`[data-testid=compare-tasks] thead th`)
		if !heads.First().HasClass("sticky-task") || !heads.Eq(1).HasClass("sticky-base") || !strings.Contains(heads.Eq(1).Text(), "Monday") || heads.Eq(2).HasClass("sticky-base") {
			t.Errorf("task table head: %q", heads.Text())
		}
		for _, f := range []string{"html", "csv", "json"} {
			if doc.Find(fmt.Sprintf(`[data-testid=compare-report-%s]`, f)).AttrOr("href", "") != "/api/compare/report?baseline="+fmt.Sprint(first)+"&format="+f+"&run_ids="+fmt.Sprintf("%d%%2C%d", first, second) {
				t.Errorf("%s report link: %q", f, doc.Find(fmt.Sprintf(`[data-testid=compare-report-%s]`, f)).AttrOr("href", ""))
			}
		}
	})
}

// download fetches a comparison report and checks it is an attachment.
func download(t *testing.T, a *app, query, ext string) (string, []byte) {
	t.Helper()
	res, err := http.Get(a.srv.URL + "/api/compare/report?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s: status %d: %s", query, res.StatusCode, body)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.HasSuffix(cd, `.`+ext+`"`) {
		t.Errorf("%s: Content-Disposition %q", query, cd)
	}
	return res.Header.Get("Content-Type"), body
}

// TestCompareReportDownloads: the comparison downloads as a self-contained
// HTML file, as CSV (a row per task and model) and as JSON.
func TestCompareReportDownloads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a, first, second := twoRuns(t, st)
		q := fmt.Sprintf("run_ids=%d,%d&baseline=%d", first, second, first)

		ct, html := download(t, a, q+"&format=html", "html")
		if !strings.HasPrefix(ct, "text/html") {
			t.Errorf("HTML content type %q", ct)
		}
		// Self-contained: nothing is fetched from anywhere (no URL, no src, no stylesheet link).
		// (SVG's xmlns names a namespace; nothing fetches it.)
		bare := regexp.MustCompile(`xmlns(:\w+)?="[^"]*"`).ReplaceAll(html, nil)
		if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|\ssrc=|<link[^>]+stylesheet|@import`).Find(bare); m != nil {
			t.Errorf("HTML report loads %q", m)
		}
		doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(html))
		if got := doc.Find(`[data-testid=entries] tbody tr`).Length(); got != 4 {
			t.Errorf("HTML report: %d model rows, want 4", got)
		}
		if got := doc.Find(`[data-testid=tasks] tbody tr`).Length(); got != 10 {
			t.Errorf("HTML report: %d task rows, want 10", got)
		}
		if !strings.Contains(doc.Find(`[data-testid=verdicts]`).First().Text(), "strong (Tuesday)") || !strings.Contains(doc.Text(), "REGRESSED: strong") || doc.Find("svg").Length() == 0 {
			t.Errorf("HTML report lacks the same-model verdict first, the regression or the charts")
		}

		_, body := download(t, a, q+"&format=json", "json")
		var doc2 struct {
			Format  string `json:"format"`
			Entries []struct {
				Model string `json:"model"`
				Score struct{ Mean float64 }
			} `json:"entries"`
			Tasks struct {
				Total int64 `json:"total"`
				Items []struct {
					TaskID      string `json:"task_id"`
					RegressedIn []int  `json:"regressed_in"`
				} `json:"items"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal(body, &doc2); err != nil {
			t.Fatalf("JSON report: %v", err)
		}
		if doc2.Format != "tribunal.comparison/v1" || len(doc2.Entries) != 4 || doc2.Entries[1].Score.Mean != 2 || doc2.Tasks.Total != 10 || len(doc2.Tasks.Items) != 10 {
			t.Errorf("JSON report %+v", doc2)
		}
		if it := doc2.Tasks.Items[3]; it.TaskID != "q03" || len(it.RegressedIn) != 1 || it.RegressedIn[0] != 2 {
			t.Errorf("JSON q03 %+v", it)
		}

		ct, body = download(t, a, q+"&format=csv", "csv")
		if !strings.HasPrefix(ct, "text/csv") {
			t.Errorf("CSV content type %q", ct)
		}
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1+10*4 || rows[0][0] != "task_id" {
			t.Fatalf("CSV: %d rows, header %v", len(rows), rows[0])
		}
		var regressions []string
		for _, r := range rows[1:] {
			if r[12] == "true" {
				regressions = append(regressions, r[0]+" "+r[5]+" "+r[3]+" "+r[7])
			}
		}
		if len(regressions) != 1 || regressions[0] != "q03 strong Tuesday 4" {
			t.Errorf("CSV regressions %q", regressions)
		}

		a.do(t, call{method: "GET", path: "/api/compare/report?format=html"}, 400, nil)
		a.do(t, call{method: "GET", path: q2(first) + "&format=pdf"}, 400, nil)
		a.do(t, call{method: "GET", path: "/api/compare/report?run_ids=99999"}, 404, nil)
	})
}

func q2(id int64) string { return fmt.Sprintf("/api/compare/report?run_ids=%d", id) }

// TestDiffPageNamesBothSides: the diff names each answer's run (linked),
// model and score, and leads back to the comparison it came from.
func TestDiffPageNamesBothSides(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a, first, second := twoRuns(t, st)
		q := fmt.Sprintf("run_ids=%d,%d&baseline=%d", first, second, first)
		_, doc, _ := a.get(t, "/compare?"+q+"&only=regressions")
		href, ok := doc.Find(`[data-testid=compare-task] td.regressed a.muted`).Attr("href")
		if !ok {
			t.Fatal("no diff link on the regressed task")
		}
		_, diff, _ := a.get(t, href)
		sides := diff.Find(`[data-testid^=diff-side-]`)
		if sides.Length() != 2 {
			t.Fatalf("%d diff sides", sides.Length())
		}
		want := []struct {
			run   int64
			name  string
			score string
		}{{first, "Monday", "score 8.00"}, {second, "Tuesday", "score 4.00"}}
		for i, w := range want {
			s := sides.Eq(i)
			if s.Find("strong").First().Text() != "strong" || s.Find("a").AttrOr("href", "") != fmt.Sprintf("/runs/%d", w.run) ||
				s.Find("a").Text() != w.name || s.Find(`[data-testid=diff-score]`).Text() != w.score {
				t.Errorf("side %d: %q (link %q)", i, strings.Join(strings.Fields(s.Text()), " "), s.Find("a").AttrOr("href", ""))
			}
		}
		if back := diff.Find(`[data-testid=diff-back]`).AttrOr("href", ""); back != fmt.Sprintf("/compare?baseline=%d&run_ids=%d%%2C%d", first, first, second) {
			t.Errorf("back link %q", back)
		}
		// Opened without the comparison, it leads back to the two answers' runs.
		_, diff, _ = a.get(t, strings.Split(href, "?")[0]+"?"+regexp.MustCompile(`a=\d+&b=\d+`).FindString(href))
		if back := diff.Find(`[data-testid=diff-back]`).AttrOr("href", ""); back != fmt.Sprintf("/compare?run_ids=%d%%2C%d", first, second) {
			t.Errorf("back link without a comparison %q", back)
		}
	})
}

// TestComparePickNothing: Compare with no run ticked says why, on the picker.
func TestComparePickNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		res, doc, _ := a.get(t, "/compare?compare=1")
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(`[data-testid=compare-pick-error]`).Text(), "none is ticked") {
			t.Errorf("status %d, error %q", res.StatusCode, doc.Find(`[data-testid=compare-pick-error]`).Text())
		}
		if _, doc, _ = a.get(t, "/compare"); doc.Find(`[data-testid=compare-pick-error]`).Length() != 0 {
			t.Error("the picker scolds before anything was pressed")
		}
	})
}
