package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"tribunal/engine"
	"tribunal/llm/llmtest"
	"tribunal/report"
	"tribunal/runs"
	"tribunal/store"
	"tribunal/store/storetest"
)

// bundle is a store with a running engine and a fake provider.
type bundle struct {
	st       *store.Store
	eng      *engine.Engine
	provider int64
	col      int64
}

const hostile = `<script>alert("x")</script><img src="http://evil.example/p.png">`

func setup(t *testing.T) *bundle {
	t.Helper()
	st := storetest.SQLite(t)
	fake := llmtest.New(t, nil)
	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond, BackoffBase: time.Millisecond}, st, engine.NewBroker(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	bg := context.Background()
	p, err := st.CreateProvider(bg, store.ProviderInput{Name: "fake", BaseURL: fake.URL,
		Prices: []store.ProviderPrice{{Model: "fake-small", InputPerMTok: 1, OutputPerMTok: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.UpsertTasks(bg, store.ImportInput{Collection: "report", Tasks: []store.TaskInput{
		{TaskKey: "q1", Category: "math", Question: "What is 2+2?", Reference: "4", Checks: []store.Check{{Type: "contains"}}},
		{TaskKey: "q2", Category: "math", Question: "What is 3+3?"},
		{TaskKey: "q3", Category: "web", Question: hostile},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{st: st, eng: eng, provider: p.ID, col: res.Collection.ID}
}

// run starts a run of the models and waits until it has finished.
func (b *bundle) run(t *testing.T, name string, models ...string) int64 {
	t.Helper()
	ctx := context.Background()
	in := store.RunInput{Name: name, Judge: &store.ModelRef{ProviderID: b.provider, Model: "fake-judge"},
		CollectionIDs: []int64{b.col}, Tags: []string{"report-test"}}
	for _, m := range models {
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: b.provider, Model: m})
	}
	run, err := b.eng.StartRun(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := b.st.Run(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Active() {
			if r.Status != store.RunFinished {
				t.Fatalf("run %d ended %s: %s", r.ID, r.Status, r.Error)
			}
			return r.ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s", r.ID, r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestJSONExport(t *testing.T) {
	b := setup(t)
	id := b.run(t, "json", "fake-small", "fake-large")
	ctx := context.Background()
	items, _ := b.st.RunItems(ctx, id, store.ItemFilter{})
	if _, err := b.st.SetGrade(ctx, items.Items[0].ID, store.GradeInput{Grade: "partial", Notes: "close"}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.WriteJSON(ctx, &buf, runs.New(b.st, nil), id); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format string `json:"format"`
		Run    struct {
			ID      int64    `json:"id"`
			Status  string   `json:"status"`
			Tags    []string `json:"tags"`
			Targets []struct {
				Model string `json:"model"`
			} `json:"targets"`
		} `json:"run"`
		Settings struct {
			Input struct {
				Name string `json:"name"`
			} `json:"input"`
			JudgeContract string `json:"judge_contract"`
		} `json:"settings"`
		Judges []struct {
			PromptTemplate string `json:"prompt_template"`
			ScaleMax       int    `json:"scale_max"`
		} `json:"judges"`
		Summary struct {
			Overall  store.Stats        `json:"overall"`
			PerModel []store.ModelStats `json:"per_model"`
			Models   []runs.ModelScore  `json:"models"`
		} `json:"summary"`
		Metrics store.RunMetrics `json:"metrics"`
		Tasks   []report.Task    `json:"tasks"`
		Items   []report.Item    `json:"items"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if doc.Format != report.FormatRun || doc.Run.ID != id || doc.Run.Status != "FINISHED" || len(doc.Run.Targets) != 2 ||
		doc.Run.Tags[0] != "report-test" {
		t.Errorf("run: %+v", doc.Run)
	}
	if doc.Settings.Input.Name != "json" || doc.Settings.JudgeContract == "" {
		t.Errorf("settings snapshot: %+v", doc.Settings)
	}
	if len(doc.Judges) != 1 || doc.Judges[0].PromptTemplate == "" || doc.Judges[0].ScaleMax != 10 {
		t.Errorf("judges: %+v", doc.Judges)
	}
	if len(doc.Tasks) != 3 || doc.Tasks[0].Reference != "4" || doc.Tasks[0].Checks[0].Type != "contains" {
		t.Errorf("tasks: %+v", doc.Tasks)
	}
	if len(doc.Items) != 6 {
		t.Fatalf("%d items, want 6", len(doc.Items))
	}
	graded := doc.Items[0]
	if graded.Grade == nil || *graded.Grade != "partial" || graded.GradeNotes != "close" {
		t.Errorf("graded item: grade %v notes %q", graded.Grade, graded.GradeNotes)
	}
	for _, it := range doc.Items {
		var judged, checked bool
		for _, s := range it.Scores {
			judged = judged || s.Metric == "score" && s.Score == 7 && s.Reasoning != ""
			checked = checked || s.Metric == "check_contains"
		}
		if !judged || checked != (it.TaskID == "q1") || it.Response == nil {
			t.Errorf("item %s/%s: scores %+v", it.TaskID, it.Model, it.Scores)
		}
	}
	if doc.Summary.Overall.Items != 6 || len(doc.Summary.PerModel) != 2 || len(doc.Summary.Models) != 2 {
		t.Errorf("summary: %+v", doc.Summary)
	}
	if doc.Metrics.Overall["score"] != 7 || len(doc.Metrics.PerModel) != 2 {
		t.Errorf("metrics: %+v", doc.Metrics)
	}

	buf.Reset()
	id2 := b.run(t, "second", "fake-small")
	if err := report.WriteJSON(ctx, &buf, runs.New(b.st, nil), id, id2); err != nil {
		t.Fatal(err)
	}
	var many struct {
		Format string            `json:"format"`
		Runs   []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &many); err != nil || many.Format != report.FormatRuns || len(many.Runs) != 2 {
		t.Fatalf("two runs: format %q, %d runs, %v", many.Format, len(many.Runs), err)
	}
}

// selfContained checks a report loads nothing: no scripts, and every src
// and href is a fragment or a data: URL, under a CSP that forbids the rest.
func selfContained(t *testing.T, doc *goquery.Document) {
	t.Helper()
	if n := doc.Find("script").Length(); n > 0 {
		t.Errorf("%d script elements", n)
	}
	csp, _ := doc.Find(`meta[http-equiv="Content-Security-Policy"]`).Attr("content")
	if !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	doc.Find("[src], [href], [srcset], [action], [poster], [data]").Each(func(_ int, s *goquery.Selection) {
		for _, attr := range []string{"src", "href", "srcset", "action", "poster", "data"} {
			v, ok := s.Attr(attr)
			if ok && !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "data:") {
				t.Errorf("<%s %s=%q> points outside the file", goquery.NodeName(s), attr, v)
			}
		}
	})
	if n := doc.Find("img, iframe, object, embed, link[rel=stylesheet]").Length(); n > 0 {
		t.Errorf("%d external-resource elements", n)
	}
}

func TestHTMLReport(t *testing.T) {
	b := setup(t)
	id := b.run(t, "html", "fake-small", "fake-large")
	var buf bytes.Buffer
	ctx := context.Background()
	if err := report.WriteHTML(ctx, &buf, runs.New(b.st, nil), report.Options{Gates: []report.GateLine{{Scope: "overall", Gate: "score ≥ 6", Value: "7", Pass: true}}}, id); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, doc)
	if got := doc.Find(`[data-testid=report-title]`).Text(); got != "html" {
		t.Errorf("title = %q", got)
	}
	if n := doc.Find(`[data-testid=per-model] tbody tr`).Length(); n != 2 {
		t.Errorf("%d per-model rows, want 2", n)
	}
	if n := doc.Find("svg").Length(); n < 3 {
		t.Errorf("%d charts, want at least 3 (scores, distribution, categories)", n)
	}
	if n := doc.Find(`[data-testid=item]`).Length(); n != 6 {
		t.Errorf("%d items, want 6", n)
	}
	if !strings.Contains(doc.Find("#gates").Text(), "all passed") {
		t.Error("the gates section is missing")
	}
	// The hostile task is text, not markup.
	if !strings.Contains(doc.Text(), `<script>alert("x")</script>`) {
		t.Error("the hostile question is not shown as text")
	}

	id2 := b.run(t, "html 2", "fake-small")
	buf.Reset()
	if err := report.WriteHTML(ctx, &buf, runs.New(b.st, nil), report.Options{MaxItems: 1}, id, id2); err != nil {
		t.Fatal(err)
	}
	doc, err = goquery.NewDocumentFromReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, doc)
	if doc.Find(`[data-testid=comparison]`).Length() != 1 || doc.Find(`[data-testid=run]`).Length() != 2 {
		t.Error("a comparison of two runs lacks its comparison or run sections")
	}
	if n := doc.Find(`[data-testid=comparison] table`).First().Find("tbody tr").Length(); n != 2 {
		t.Errorf("comparison table has %d rows, want 2", n)
	}
	if n := doc.Find(`[data-testid=item]`).Length(); n != 2 {
		t.Errorf("MaxItems 1: %d items listed, want 1 per run", n)
	}
}
