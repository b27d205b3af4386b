package handlers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// texts lists the trimmed text of each selected element.
func texts(s *goquery.Selection) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, strings.TrimSpace(e.Text())) })
	return out
}

func attrs(s *goquery.Selection, name string) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, e.AttrOr(name, "")) })
	return out
}

// The tasks list says what each task has to be judged against, shows its
// tags, and an empty list points to Import as well as to the form.
func TestTasksListReferencesTagsAndEmptyState(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)

	_, doc, _ := a.get(t, "/tasks")
	empty := doc.Find("[data-testid=empty-tasks]")
	if empty.Find("a[href='/import']").Length() != 1 || empty.Find("a[href='#add-task']").Length() != 1 {
		t.Errorf("empty state links: %q", empty.Text())
	}
	if doc.Find("details#add-task[open] [data-testid=task-form]").Length() != 1 {
		t.Errorf("the form is not open under an empty list")
	}

	ctx := t.Context()
	if _, err := a.st.CreateTask(ctx, store.TaskInput{TaskKey: "full", Category: "c", Question: "2+2?", Reference: "4",
		Good: "four", IncorrectAnswerDirection: "anything but 4", Tags: []string{"math", "easy one"},
		Checks: []store.Check{{Type: "numeric"}, {Type: "rouge_l"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.CreateTask(ctx, store.TaskInput{TaskKey: "bare", Category: "c", Question: "Say hi"}); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = a.get(t, "/tasks")
	row := func(key string) *goquery.Selection {
		return doc.Find("[data-testid=tasks-table] tbody tr").FilterFunction(func(_ int, r *goquery.Selection) bool {
			return r.Find("td code").First().Text() == key
		})
	}
	full := row("full")
	refs := full.Find("[data-testid=task-refs] [data-ref]")
	if got, want := attrs(refs, "data-ref"), []string{"reference", "good", "incorrect", "check:numeric", "check:rouge_l"}; !slices.Equal(got, want) {
		t.Errorf("references %v, want %v", got, want)
	}
	if got, want := texts(refs), []string{"Reference", "Good", "Incorrect direction", "Numeric", "ROUGE-L"}; !slices.Equal(got, want) {
		t.Errorf("reference words %v, want %v", got, want)
	}
	if got := strings.TrimSpace(row("bare").Find("[data-testid=task-refs]").Text()); got != "none" {
		t.Errorf("a task without references shows %q", got)
	}
	tags := full.Find("[data-testid=task-tags] a")
	if got := texts(tags); !slices.Equal(got, []string{"math", "easy one"}) {
		t.Errorf("tags %v", got)
	}
	if got := tags.Last().AttrOr("href", ""); got != "/tasks?tag=easy+one" {
		t.Errorf("tag link %q", got)
	}
	if row("bare").Find("[data-testid=task-tags] a").Length() != 0 {
		t.Errorf("an untagged task shows tags")
	}
	// The tag link filters the list.
	_, doc, _ = a.get(t, "/tasks?tag=easy+one")
	if got := texts(doc.Find("[data-testid=tasks-table] tbody tr td code")); !slices.Equal(got, []string{"full"}) {
		t.Errorf("tasks tagged 'easy one': %v", got)
	}
	// The form names check types in words and keeps the raw type as the value.
	if l := doc.Find("[data-testid=checks] input[value=rouge_l]").Parent(); strings.TrimSpace(l.Text()) != "ROUGE-L" {
		t.Errorf("check label %q", l.Text())
	}
}

// The providers list names types in words and shows each model's prices;
// Test connection lists the models found, or says why it could not; the
// edit page can go back and test.
func TestProvidersListPricesAndTestConnection(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	ctx := t.Context()
	words := map[store.ProviderType]string{store.ProviderOpenAI: "OpenAI", store.ProviderOllama: "Ollama",
		store.ProviderLMStudio: "LM Studio", store.ProviderOpenRouter: "OpenRouter", store.ProviderCustom: "OpenAI-compatible"}
	ids := map[store.ProviderType]int64{}
	for i, typ := range store.ProviderTypes {
		in := store.ProviderInput{Name: fmt.Sprintf("Provider %d", i), Type: typ, BaseURL: a.fake.URL}
		if typ == store.ProviderCustom {
			in.Prices = []store.ProviderPrice{{Model: "fake-small", InputPerMTok: 0.075, OutputPerMTok: 0.3},
				{Model: "fake-large", InputPerMTok: 2.5, OutputPerMTok: 10}, {Model: "m3", InputPerMTok: 1, OutputPerMTok: 2},
				{Model: "m4", InputPerMTok: 3, OutputPerMTok: 4}}
		}
		if typ == store.ProviderOllama {
			in.ModelsEndpoint = "/v1/no-such-endpoint"
		}
		p, err := a.st.CreateProvider(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		ids[typ] = p.ID
	}
	_, doc, _ := a.get(t, "/providers")
	main := doc.Find("main").Text()
	doc.Find("[data-testid=providers-table] td[data-type]").Each(func(_ int, td *goquery.Selection) {
		typ := store.ProviderType(td.AttrOr("data-type", ""))
		if got := td.Text(); got != words[typ] {
			t.Errorf("type %s reads %q, want %q", typ, got, words[typ])
		}
		if strings.Contains(main, string(typ)) {
			t.Errorf("raw type %s shown on the page", typ)
		}
	})
	prices := doc.Find(fmt.Sprintf("#provider-%d [data-testid=provider-prices]", ids[store.ProviderCustom]))
	if got := strings.Join(strings.Fields(prices.Find("li[data-model=fake-small]").Text()), " "); got != "fake-small $0.075 / $0.3" {
		t.Errorf("price of fake-small %q", got)
	}
	if got := attrs(prices.Find("li[data-model]"), "data-model"); !slices.Equal(got, []string{"fake-large", "fake-small", "m3", "m4"}) {
		t.Errorf("priced models %v", got)
	}
	if got := strings.TrimSpace(prices.Find("details summary").Text()); got != "1 more" {
		t.Errorf("folded prices %q", got)
	}
	if got := strings.TrimSpace(doc.Find(fmt.Sprintf("#provider-%d [data-testid=provider-prices]", ids[store.ProviderOpenAI])).Text()); got != "none set" {
		t.Errorf("a provider without prices shows %q", got)
	}

	// Test connection against the fake OpenAI-compatible server, which
	// reports one model's context window.
	a.fake.ContextLengths = map[string]int64{"fake-large": 131072}
	res, doc := a.post(t, fmt.Sprintf("/providers/%d/test", ids[store.ProviderCustom]), nil, hxHeader)
	if res.StatusCode != 200 {
		t.Fatalf("test connection: %d", res.StatusCode)
	}
	if got := strings.TrimSpace(doc.Find("[data-testid=test-model-count]").Text()); got != fmt.Sprintf("%d models found", len(a.fake.Models)) {
		t.Errorf("model count %q", got)
	}
	if got := texts(doc.Find("[data-testid=test-models] li code")); !slices.Equal(got, a.fake.Models) {
		t.Errorf("models listed %v, want %v", got, a.fake.Models)
	}
	if got := texts(doc.Find("[data-testid=test-models] li:has([data-testid=model-context])")); !slices.Equal(got, []string{"fake-large 131,072 tokens of context"}) {
		t.Errorf("context windows shown %q", got)
	}
	_, doc = a.post(t, fmt.Sprintf("/providers/%d/test", ids[store.ProviderOllama]), nil, hxHeader)
	fail := doc.Find("[data-testid=test-result] .test-fail").Text()
	if !strings.Contains(fail, "Connection failed") || !strings.Contains(fail, "404") || !strings.Contains(fail, "/v1/no-such-endpoint") {
		t.Errorf("failed test says %q", fail)
	}
	if got := doc.Find("[data-testid=test-hint]").Text(); !strings.Contains(got, "models endpoint") {
		t.Errorf("a 404 hints %q", got)
	}
	if doc.Find("[data-testid=test-models]").Length() != 0 {
		t.Errorf("a failed test lists models")
	}

	// Nothing listening: the hint says so.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	down, err := a.st.CreateProvider(ctx, store.ProviderInput{Name: "Down", BaseURL: closed.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, doc = a.post(t, fmt.Sprintf("/providers/%d/test", down.ID), nil, hxHeader)
	if got := doc.Find("[data-testid=test-hint]").Text(); !strings.Contains(got, "is the server running") {
		t.Errorf("a refused connection hints %q (%s)", got, doc.Find("[data-testid=test-result]").Text())
	}

	// The edit page has Cancel (back to the list) and Test connection.
	_, doc, _ = a.get(t, fmt.Sprintf("/providers/%d/edit", ids[store.ProviderOpenAI]))
	if doc.Find("[data-testid=provider-form] a[data-testid=cancel][href='/providers']").Length() != 1 {
		t.Errorf("edit page has no Cancel back to the list")
	}
	test := doc.Find("button[data-testid=test-connection]")
	if test.AttrOr("hx-post", "") != fmt.Sprintf("/providers/%d/test", ids[store.ProviderOpenAI]) ||
		doc.Find(test.AttrOr("hx-target", "")).Length() != 1 {
		t.Errorf("edit page's Test connection: %q → %q", test.AttrOr("hx-post", ""), test.AttrOr("hx-target", ""))
	}
	// The create form on the list page has no Cancel: there is nothing to go back to.
	_, doc, _ = a.get(t, "/providers")
	if doc.Find("[data-testid=provider-form] [data-testid=cancel]").Length() != 0 {
		t.Errorf("the create form has a Cancel")
	}
}

// "Add all matching" adds every task the picker's search and category
// match, in one action, and says how many; the form saving name,
// description and tags says Save; ticking a task says it worked.
func TestCollectionAddAllMatching(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		ctx := t.Context()
		for i, cat := range []string{"math", "math", "math", "prose", "prose", "math"} {
			q := fmt.Sprintf("question %d", i)
			if i == 5 {
				q = "solve for x"
			}
			if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: fmt.Sprintf("t%d", i), Category: cat, Question: q}); err != nil {
				t.Fatal(err)
			}
		}
		col, err := st.CreateCollection(ctx, store.CollectionInput{Name: "Maths", TaskIDs: &[]store.TaskRef{{Key: "t0"}}})
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/collections/%d", col.ID)

		_, doc, _ := a.get(t, path)
		if got := strings.TrimSpace(doc.Find("[data-testid=collection-form] button[type=submit]").Text()); got != "Save" {
			t.Errorf("the collection form's button says %q", got)
		}
		if got := strings.TrimSpace(doc.Find("[data-testid=add-matching] button").Text()); got != "Add all 6 tasks" {
			t.Errorf("unfiltered add-all button %q", got)
		}
		// The picker filtered by category offers to add what it lists.
		_, doc, _ = a.get(t, path+"/picker?category=math&q=question")
		add := doc.Find("[data-testid=add-matching]")
		if got := strings.TrimSpace(add.Find("button").Text()); got != "Add all 3 matching" {
			t.Errorf("filtered add-all button %q", got)
		}
		form := url.Values{}
		add.Find("input[type=hidden]").Each(func(_ int, in *goquery.Selection) { form.Set(in.AttrOr("name", ""), in.AttrOr("value", "")) })
		res, _ := a.post(t, add.AttrOr("action", ""), form, nil)
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != path+"?category=math&q=question" {
			t.Fatalf("add all matching: %d → %q", res.StatusCode, loc)
		}
		if msg := flashAfter(t, a, res); msg != "Added 2 tasks to the collection." { // t0 was in already
			t.Errorf("flash %q", msg)
		}
		if got, _ := st.Collection(ctx, col.ID); got.TaskCount != 3 {
			t.Errorf("collection holds %d tasks, want t0, t1 and t2", got.TaskCount)
		}
		res, _ = a.post(t, add.AttrOr("action", ""), form, nil)
		if msg := flashAfter(t, a, res); msg != "Every matching task was in the collection already." {
			t.Errorf("flash when nothing is new %q", msg)
		}
		if res, _ := a.post(t, fmt.Sprintf("/collections/%d/add-matching", col.ID+1000), form, nil); res.StatusCode != 404 {
			t.Errorf("a missing collection: %d", res.StatusCode)
		}

		// Ticking and unticking a task flashes, out of band.
		tasks, _ := st.Tasks(ctx, store.TaskFilter{Query: "solve"})
		res, doc = a.post(t, fmt.Sprintf("%s/tasks/%d", path, tasks.Items[0].ID), url.Values{"member": {"1"}}, hxHeader)
		if res.StatusCode != 200 || doc.Find("#flash[hx-swap-oob] [data-testid=flash-success]").Text() != "Task added to the collection." {
			t.Errorf("tick: %d %q", res.StatusCode, doc.Find("#flash").Text())
		}
		_, doc = a.post(t, fmt.Sprintf("%s/tasks/%d", path, tasks.Items[0].ID), nil, hxHeader)
		if doc.Find("#flash [data-testid=flash-success]").Text() != "Task removed from the collection." ||
			doc.Find("[data-testid=collection-count]").Text() != "3 tasks" {
			t.Errorf("untick: %q %q", doc.Find("#flash").Text(), doc.Find("[data-testid=collection-count]").Text())
		}
	})
}

// followRedirect follows a redirect (Location or HX-Redirect) with the
// cookies it set, and returns the page it lands on.
func followRedirect(t *testing.T, a *app, res *http.Response) (*goquery.Document, *http.Response) {
	t.Helper()
	loc := res.Header.Get("Location")
	if loc == "" {
		loc = res.Header.Get("HX-Redirect")
	}
	req, _ := http.NewRequest("GET", a.srv.URL+loc, nil)
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	doc, err := goquery.NewDocumentFromReader(got.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc, got
}

// flashAfter follows a redirect and returns the success message the page
// it lands on shows.
func flashAfter(t *testing.T, a *app, res *http.Response) string {
	t.Helper()
	doc, _ := followRedirect(t, a, res)
	return strings.TrimSpace(doc.Find("#flash [data-testid=flash-success]").Text())
}

// The collection's trend leaves out a model that has no score in any run
// (its every answer failed), and its labels stay inside the chart, wide
// and narrow.
func TestCollectionTrendChart(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), func(r llmtest.ChatRequest) llmtest.Reply {
		if r.Model == "fake-large" {
			return llmtest.Reply{Status: http.StatusBadRequest, Content: "model not loaded"}
		}
		return llmtest.DefaultReply(r)
	})
	ctx := t.Context()
	p, err := a.st.CreateProvider(ctx, store.ProviderInput{Name: "Fake", BaseURL: a.fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.CreateTask(ctx, store.TaskInput{TaskKey: "t1", Category: "c", Question: "2+2?"}); err != nil {
		t.Fatal(err)
	}
	col, err := a.st.CreateCollection(ctx, store.CollectionInput{Name: "C", TaskIDs: &[]store.TaskRef{{Key: "t1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		body := fmt.Sprintf(`{"name":"Nightly run with a rather long name, number %d","judge":{"provider_id":%d,"model":"fake-judge"},`+
			`"targets":[{"provider_id":%[2]d,"model":"fake-small"},{"provider_id":%[2]d,"model":"fake-large"}],"collection_ids":[%d]}`, i, p.ID, col.ID)
		var run struct{ ID int64 }
		a.do(t, call{method: "POST", path: "/api/runs", body: body}, 201, &run)
		if r := a.waitRunDone(t, run.ID); r.Status != store.RunFinished {
			t.Fatalf("run %d ended %s", run.ID, r.Status)
		}
	}
	_, doc, _ := a.get(t, fmt.Sprintf("/collections/%d/trend", col.ID))
	for _, which := range []string{"trend-wide", "trend-narrow"} {
		svg := doc.Find("[data-testid=" + which + "] svg")
		if svg.Length() != 1 {
			t.Fatalf("%s: %d charts", which, svg.Length())
		}
		if got := texts(svg.Find(".tb-legend text")); !slices.Equal(got, []string{"fake-small"}) {
			t.Errorf("%s legend %v, want only the model with scores", which, got)
		}
		vb := strings.Fields(svg.AttrOr("viewBox", ""))
		if len(vb) != 4 {
			t.Fatalf("%s viewBox %q", which, svg.AttrOr("viewBox", ""))
		}
		W, _ := strconv.ParseFloat(vb[2], 64)
		labels := svg.Find(".tb-tick[x]").FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Parent().AttrOr("text-anchor", "") == "middle"
		})
		if labels.Length() == 0 {
			t.Errorf("%s has no run labels", which)
		}
		labels.Each(func(_ int, s *goquery.Selection) {
			x, _ := strconv.ParseFloat(s.AttrOr("x", ""), 64)
			// Half a label's width at 11 px, at least 0.3 em per character.
			half := float64(len([]rune(s.Contents().Not("title").Text()))) * 11 * 0.3 / 2
			if x-half < 0 || x+half > W {
				t.Errorf("%s: label %q at x=%v leaves the %v px chart", which, s.Text(), x, W)
			}
		})
	}
}

// Every create, update and delete on the tasks and collections pages lands
// on a page saying it worked.
func TestListsSuccessFlash(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	task := url.Values{"task_id": {"t1"}, "category": {"c"}, "question": {"q"}}
	steps := []struct {
		path string
		form url.Values
		hx   bool
		want string
	}{
		{"/tasks", task, false, "Task created."},
		{"/tasks/1", task, false, "Task saved."},
		{"/tasks/1/delete", nil, true, "Task deleted."},
		{"/collections", url.Values{"name": {"C"}}, false, "Collection created."},
		{"/collections/1", url.Values{"name": {"C2"}, "tags": {"x"}}, false, "Collection saved."},
		{"/collections/1/delete", nil, true, "Collection deleted."},
	}
	for _, s := range steps {
		var h map[string]string
		if s.hx {
			h = hxHeader
		}
		res, _ := a.post(t, s.path, s.form, h)
		if msg := flashAfter(t, a, res); msg != s.want {
			t.Errorf("POST %s (%d): flash %q, want %q", s.path, res.StatusCode, msg, s.want)
		}
	}
}
