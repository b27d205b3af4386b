package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"tribunal/runs"
	"tribunal/store"
	"tribunal/views"
)

// redirect sends the browser on after a successful form post: HTMX follows
// HX-Redirect, a plain form follows 303 See Other.
func redirect(c echo.Context, to string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// flashCookie carries a success message across the redirect that follows a
// create, update or delete; the next full page shows it once (takeFlash).
const flashCookie = "tribunal_flash"

// redirectFlash redirects like redirect and has the page it lands on say msg.
func redirectFlash(c echo.Context, msg, to string) error {
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: "/", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return redirect(c, to)
}

// takeFlash hands a waiting success message to the full page being shown
// (views.Layout draws it in #flash) and clears it, so it shows once.
// Fragments, the API and assets leave it for the page.
func takeFlash(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodGet || isHTMX(c) || isAPI(c) || strings.HasPrefix(r.URL.Path, "/assets/") {
			return next(c)
		}
		ck, err := r.Cookie(flashCookie)
		if err != nil {
			return next(c)
		}
		c.SetCookie(&http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		if msg, err := url.QueryUnescape(ck.Value); err == nil && msg != "" {
			c.SetRequest(r.WithContext(views.WithFlash(r.Context(), msg)))
		}
		return next(c)
	}
}

// formProblem returns the status and message for re-showing a form, or
// ok=false when err is not the user's to fix.
func formProblem(err error) (status int, msg string, ok bool) {
	status, msg = statusOf(err)
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusConflict:
		return status, msg, true
	}
	return 0, "", false
}

func formInt(c echo.Context, field string) (int, error) {
	v := strings.TrimSpace(c.FormValue(field))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &store.ValidationError{Field: field, Message: fmt.Sprintf("must be a whole number, got %q", v)}
	}
	return n, nil
}

// ---- providers ----

func (h *Handler) showProviders(c echo.Context) error {
	return h.renderProviders(c, http.StatusOK, views.ProviderForm{Input: store.ProviderInput{Type: store.ProviderOllama}})
}

func (h *Handler) renderProviders(c echo.Context, status int, form views.ProviderForm) error {
	ps, err := h.store.Providers(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, status, views.ProvidersPage(ps, form))
}

func providerForm(c echo.Context) (store.ProviderInput, error) {
	in := store.ProviderInput{
		Name: c.FormValue("name"), Type: store.ProviderType(c.FormValue("type")), BaseURL: c.FormValue("base_url"),
		ModelsEndpoint: c.FormValue("models_endpoint"), InferenceEndpoint: c.FormValue("inference_endpoint"),
	}
	var err error
	if in.Concurrency, err = formInt(c, "concurrency"); err != nil {
		return in, err
	}
	if in.RequestsPerMinute, err = formInt(c, "requests_per_minute"); err != nil {
		return in, err
	}
	if in.TimeoutSeconds, err = formInt(c, "timeout_seconds"); err != nil {
		return in, err
	}
	if in.ConnectTimeoutSeconds, err = formInt(c, "connect_timeout_seconds"); err != nil {
		return in, err
	}
	form, err := c.FormParams()
	if err != nil {
		return in, badRequest("unreadable form: %v", err)
	}
	keys, values, secrets := form["header_key"], form["header_value"], form["header_secret"]
	for i, k := range keys {
		if strings.TrimSpace(k) == "" {
			continue // an empty row the user added and left
		}
		hd := store.Header{Key: k}
		if i < len(values) {
			hd.Value = values[i]
		}
		hd.IsSecret = i >= len(secrets) || secrets[i] != "plain"
		in.Headers = append(in.Headers, hd)
	}
	if c.FormValue("prices_present") != "" {
		if in.Prices, err = parsePrices(c.FormValue("prices")); err != nil {
			return in, err
		}
	}
	return in, nil
}

// parsePrices reads "model, input, output" lines (USD per million tokens).
func parsePrices(text string) ([]store.ProviderPrice, error) {
	out := []store.ProviderPrice{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// The model name may itself hold commas; the last two fields are the prices.
		parts := strings.Split(line, ",")
		if len(parts) < 3 {
			return out, &store.ValidationError{Field: "prices", Message: fmt.Sprintf("line %d: write model, input price, output price", n+1)}
		}
		k := len(parts)
		in, err1 := strconv.ParseFloat(strings.TrimSpace(parts[k-2]), 64)
		o, err2 := strconv.ParseFloat(strings.TrimSpace(parts[k-1]), 64)
		if err1 != nil || err2 != nil {
			return out, &store.ValidationError{Field: "prices", Message: fmt.Sprintf("line %d: the prices must be numbers", n+1)}
		}
		out = append(out, store.ProviderPrice{Model: strings.TrimSpace(strings.Join(parts[:k-2], ",")), InputPerMTok: in, OutputPerMTok: o})
	}
	return out, nil
}

func (h *Handler) createProvider(c echo.Context) error {
	in, err := providerForm(c)
	if err == nil {
		_, err = h.store.CreateProvider(withoutCancel(c), in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderProviders(c, status, views.ProviderForm{Input: in, Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Provider created.", "/providers")
}

func (h *Handler) editProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	p, err := h.store.Provider(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in := store.ProviderInput{Name: p.Name, Type: p.Type, BaseURL: p.BaseURL, ModelsEndpoint: p.ModelsEndpoint, Prices: p.Prices,
		InferenceEndpoint: p.InferenceEndpoint, Concurrency: p.Concurrency, RequestsPerMinute: p.RequestsPerMinute,
		TimeoutSeconds: p.TimeoutSeconds, ConnectTimeoutSeconds: p.ConnectTimeoutSeconds, Headers: p.Headers}
	return render(c, http.StatusOK, views.ProviderEditPage(views.ProviderForm{ID: id, Input: in}))
}

func (h *Handler) updateProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	in, err := providerForm(c)
	if err == nil {
		_, err = h.store.UpdateProvider(withoutCancel(c), id, in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return render(c, status, views.ProviderEditPage(views.ProviderForm{ID: id, Input: in, Error: msg}))
		}
		return err
	}
	h.engine.Refresh() // running calls see the new settings now
	return redirectFlash(c, "Provider saved.", "/providers")
}

func (h *Handler) deleteProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	if err := h.store.DeleteProvider(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Provider deleted.", "/providers")
}

func (h *Handler) providerHeaderRow(c echo.Context) error {
	return render(c, http.StatusOK, views.HeaderRow(store.Header{IsSecret: true}))
}

func (h *Handler) testProviderPage(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	res, err := h.testProvider(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ProviderTestResult(res.OK, res.Message, res.LatencyMs))
}

// providerModels lists a provider's model ids.
func (h *Handler) providerModels(c echo.Context, id int64) ([]modelJSON, error) {
	p, err := h.store.ProviderWithSecrets(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	models, err := h.engine.Client(p).Models(c.Request().Context())
	if err != nil {
		return nil, err
	}
	out := make([]modelJSON, len(models))
	var published []store.ProviderPrice
	for i, m := range models {
		out[i] = modelJSON{ID: m.ID, OwnedBy: m.OwnedBy}
		if in, o, ok := m.Pricing.PerMTok(); ok {
			published = append(published, store.ProviderPrice{Model: m.ID, InputPerMTok: in, OutputPerMTok: o})
		}
	}
	// OpenRouter publishes prices with its models: keep them for cost tracking,
	// and read the provider's prices again with them merged in.
	if p.Type == store.ProviderOpenRouter && len(published) > 0 {
		if err := h.store.MergePublishedPrices(withoutCancel(c), p.ID, published); err != nil {
			return nil, err
		}
		if p, err = h.store.Provider(c.Request().Context(), p.ID); err != nil {
			return nil, err
		}
	}
	prices := map[string]store.ProviderPrice{}
	for _, pr := range p.Prices {
		prices[pr.Model] = pr
	}
	for i := range out {
		if pr, ok := prices[out[i].ID]; ok {
			out[i].InputPerMTok, out[i].OutputPerMTok = &pr.InputPerMTok, &pr.OutputPerMTok
		}
	}
	return out, nil
}

type modelJSON struct {
	ID            string   `json:"id"`
	OwnedBy       string   `json:"owned_by,omitempty"`
	InputPerMTok  *float64 `json:"input_per_mtok,omitempty"`
	OutputPerMTok *float64 `json:"output_per_mtok,omitempty"`
}

// modelOptions feeds a model picker's datalist; a provider that cannot list
// its models still leaves the field open for typing.
func (h *Handler) modelOptions(c echo.Context) error {
	list := c.QueryParam("list")
	if list == "" {
		list = "models"
	}
	// The picker's select sends its own value, named judge_ or target_provider_id.
	var id int64
	var err error
	for _, k := range []string{"judge_provider_id", "target_provider_id", "provider_id"} {
		if v := c.QueryParam(k); v != "" {
			id, err = strconv.ParseInt(v, 10, 64)
			break
		}
	}
	if err != nil || id <= 0 {
		return c.NoContent(http.StatusOK) // no provider chosen yet: nothing to list
	}
	models, err := h.providerModels(c, id)
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	msg := ""
	if err != nil {
		if _, m := statusOf(err); m != "internal error" {
			msg = m
		} else {
			return err
		}
	}
	return render(c, http.StatusOK, views.ModelOptions(list, ids, msg))
}

// ---- tasks ----

func (h *Handler) tasksList(c echo.Context) (views.TasksList, error) {
	f, err := h.taskFilter(c)
	if err != nil {
		return views.TasksList{}, err
	}
	page, err := h.store.Tasks(c.Request().Context(), f)
	if err != nil {
		return views.TasksList{}, err
	}
	cats, err := h.store.TaskCategories(c.Request().Context())
	if err != nil {
		return views.TasksList{}, err
	}
	tags, err := h.store.AllTags(c.Request().Context())
	if err != nil {
		return views.TasksList{}, err
	}
	return views.TasksList{Query: f.Query, Category: f.Category, Categories: cats, Page: page, Tag: f.Tag, Tags: tags}, nil
}

func (h *Handler) showTasks(c echo.Context) error {
	return h.renderTasks(c, http.StatusOK, views.TaskForm{})
}

func (h *Handler) renderTasks(c echo.Context, status int, form views.TaskForm) error {
	l, err := h.tasksList(c)
	if err != nil {
		return err
	}
	return render(c, status, views.TasksPage(l, form))
}

func taskForm(c echo.Context) store.TaskInput {
	in := store.TaskInput{TaskKey: c.FormValue("task_id"), Category: c.FormValue("category"),
		Subcategory: c.FormValue("subcategory"), Question: c.FormValue("question"), Excellent: c.FormValue("excellent"),
		Good: c.FormValue("good"), Pass: c.FormValue("pass"), IncorrectAnswerDirection: c.FormValue("incorrect_answer_direction"),
		Reference: c.FormValue("reference"), SystemPrompt: c.FormValue("system_prompt"), UseCase: c.FormValue("usecase"),
		Constraints: c.FormValue("constraints"), Examples: c.FormValue("examples"), JudgeInstructions: c.FormValue("judge_instructions"),
		Comments: c.FormValue("comments"), Tags: strings.FieldsFunc(c.FormValue("tags"), func(r rune) bool { return r == ',' || r == ';' })}
	if follow := views.SplitTurns(c.FormValue("follow_ups")); len(follow) > 0 {
		in.Turns = append([]string{in.Question}, follow...)
	}
	form, _ := c.FormParams()
	for _, typ := range form["check"] {
		in.Checks = append(in.Checks, store.Check{Type: typ, Value: c.FormValue("check_value_" + typ)})
	}
	return in
}

func (h *Handler) createTask(c echo.Context) error {
	in := taskForm(c)
	if _, err := h.store.CreateTask(withoutCancel(c), in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderTasks(c, status, views.TaskForm{Input: in, Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Task created.", "/tasks")
}

func (h *Handler) editTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	t, err := h.store.Task(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TaskEditPage(views.TaskForm{ID: id, Input: t.Input()}))
}

func (h *Handler) updateTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	in := taskForm(c)
	if _, err := h.store.UpdateTask(withoutCancel(c), id, in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return render(c, status, views.TaskEditPage(views.TaskForm{ID: id, Input: in, Error: msg}))
		}
		return err
	}
	return redirectFlash(c, "Task saved.", "/tasks")
}

func (h *Handler) deleteTask(c echo.Context) error {
	id, err := pathID(c, "task")
	if err != nil {
		return err
	}
	if err := h.store.DeleteTask(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Task deleted.", "/tasks")
}

// ---- collections ----

func (h *Handler) showCollections(c echo.Context) error {
	return h.renderCollections(c, http.StatusOK, views.CollectionForm{})
}

func (h *Handler) renderCollections(c echo.Context, status int, form views.CollectionForm) error {
	form.Filter = c.QueryParam("tag")
	cs, err := h.store.CollectionsTagged(c.Request().Context(), form.Filter)
	if err != nil {
		return err
	}
	if form.AllTags, err = h.store.AllTags(c.Request().Context()); err != nil {
		return err
	}
	return render(c, status, views.CollectionsPage(cs, form))
}

func (h *Handler) createCollection(c echo.Context) error {
	tags := store.ParseTags(c.FormValue("tags"))
	in := store.CollectionInput{Name: c.FormValue("name"), Description: c.FormValue("description"), Tags: &tags}
	col, err := h.store.CreateCollection(withoutCancel(c), in)
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderCollections(c, status, views.CollectionForm{Name: in.Name, Desc: in.Description, Tags: c.FormValue("tags"), Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Collection created.", fmt.Sprintf("/collections/%d", col.ID))
}

func (h *Handler) taskPicker(c echo.Context, id int64) (views.TaskPicker, error) {
	page, err := queryInt(c, "page")
	if err != nil {
		return views.TaskPicker{}, err
	}
	q := c.QueryParam("q")
	tasks, err := h.store.Tasks(c.Request().Context(), store.TaskFilter{Query: q, Page: page, PerPage: 50})
	if err != nil {
		return views.TaskPicker{}, err
	}
	ids := make([]int64, len(tasks.Items))
	for i, t := range tasks.Items {
		ids[i] = t.ID
	}
	member, err := h.store.CollectionMembers(c.Request().Context(), id, ids)
	if err != nil {
		return views.TaskPicker{}, err
	}
	return views.TaskPicker{CollectionID: id, Query: q, Page: tasks, Member: member}, nil
}

func (h *Handler) showCollection(c echo.Context) error {
	return h.renderCollection(c, http.StatusOK, "")
}

func (h *Handler) renderCollection(c echo.Context, status int, formErr string) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	col, err := h.store.Collection(c.Request().Context(), id)
	if err != nil {
		return err
	}
	picker, err := h.taskPicker(c, id)
	if err != nil {
		return err
	}
	form := views.CollectionForm{ID: id, Name: col.Name, Desc: col.Description, Error: formErr, Tags: strings.Join(col.Tags, ", ")}
	if formErr != "" {
		form.Name, form.Desc, form.Tags = c.FormValue("name"), c.FormValue("description"), c.FormValue("tags")
	}
	return render(c, status, views.CollectionPage(col, form, picker))
}

func (h *Handler) collectionPicker(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	picker, err := h.taskPicker(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TaskPickerView(picker))
}

func (h *Handler) renameCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	in := store.CollectionInput{Name: c.FormValue("name"), Description: c.FormValue("description")}
	if form, _ := c.FormParams(); form.Has("tags") {
		tags := store.ParseTags(form.Get("tags"))
		in.Tags = &tags
	}
	if _, err := h.store.UpdateCollection(withoutCancel(c), id, in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderCollection(c, status, msg)
		}
		return err
	}
	return redirectFlash(c, "Collection saved.", fmt.Sprintf("/collections/%d", id))
}

// toggleCollectionTask adds the task when its checkbox is ticked (the form
// carries member=1) and removes it otherwise; it answers the new count.
func (h *Handler) toggleCollectionTask(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	taskID, err := pathID(c, "task")
	if err != nil {
		return err
	}
	ref := []store.TaskRef{{ID: taskID}}
	var col *store.CollectionDetail
	if c.FormValue("member") != "" {
		col, err = h.store.PatchCollectionTasks(withoutCancel(c), id, ref, nil)
	} else {
		col, err = h.store.PatchCollectionTasks(withoutCancel(c), id, nil, ref)
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.CollectionCount(col.ID, col.TaskCount))
}

func (h *Handler) deleteCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	if err := h.store.DeleteCollection(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Collection deleted.", "/collections")
}

// ---- runs ----

func (h *Handler) showRuns(c echo.Context) error {
	f, err := h.runFilter(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	l := views.RunsList{Status: string(f.Status), Tag: f.Tag, CollectionID: f.CollectionID,
		From: c.QueryParam("from"), To: c.QueryParam("to")}
	// The list's Compare button sends the ticked runs here, so that too few
	// are answered on the list itself.
	if c.QueryParam("compare") != "" {
		ids, err := queryRunIDs(c)
		if err != nil {
			return err
		}
		switch {
		case len(ids) == 0:
			l.CompareError = "Tick two or more runs to compare: none is ticked."
		case len(ids) == 1:
			l.CompareError = "Tick two or more runs to compare: only one is ticked."
		case len(ids) > runs.MaxCompareRuns:
			l.CompareError = fmt.Sprintf("Compare at most %d runs at a time (%d ticked).", runs.MaxCompareRuns, len(ids))
		default:
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = strconv.FormatInt(id, 10)
			}
			return c.Redirect(http.StatusSeeOther, "/compare?run_ids="+strings.Join(parts, ","))
		}
		l.Ticked = map[int64]bool{}
		for _, id := range ids {
			l.Ticked[id] = true
		}
	}
	page, err := h.store.Runs(ctx, f)
	if err != nil {
		return err
	}
	l.Page, l.Pages, l.Total = page.Page, page.Pages(), page.Total
	if l.Tags, err = h.store.AllTags(ctx); err != nil {
		return err
	}
	if l.Collections, err = h.store.Collections(ctx); err != nil {
		return err
	}
	now := time.Now()
	for _, r := range page.Items {
		prog, err := h.runs.Progress(ctx, &r)
		if err != nil {
			return err
		}
		g, err := h.runs.Glance(ctx, &r, prog, now)
		if err != nil {
			return err
		}
		l.Rows = append(l.Rows, views.RunRow{Run: r, Progress: prog, Glance: g})
	}
	return render(c, http.StatusOK, views.RunsPage(l))
}

func (h *Handler) newRunForm(c echo.Context, f views.NewRunForm) (views.NewRunForm, error) {
	ctx := c.Request().Context()
	var err error
	if f.Providers, err = h.store.Providers(ctx); err != nil {
		return f, err
	}
	if f.Collections, err = h.store.Collections(ctx); err != nil {
		return f, err
	}
	if f.Active, err = h.store.FirstActiveRun(ctx); err != nil {
		return f, err
	}
	if f.Judges, err = h.store.Judges(ctx); err != nil {
		return f, err
	}
	if len(f.Targets) == 0 {
		f.Targets = []views.ModelChoice{{}}
	}
	return f, nil
}

func (h *Handler) newRun(c echo.Context) error {
	f, err := h.newRunForm(c, views.NewRunForm{})
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.NewRunPage(f))
}

func (h *Handler) newRunTarget(c echo.Context) error {
	i, err := queryInt(c, "i")
	if err != nil {
		return err
	}
	ps, err := h.store.Providers(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ModelPicker("target", i, ps, views.ModelChoice{}))
}

// runFormInput reads the new-run form; picks that cannot be parsed stay in
// the returned form so the page can show them again.
func runFormInput(c echo.Context) (store.RunInput, views.NewRunForm, error) {
	form, err := c.FormParams()
	if err != nil {
		return store.RunInput{}, views.NewRunForm{}, badRequest("unreadable form: %v", err)
	}
	f := views.NewRunForm{Name: form.Get("name"), Selected: map[int64]bool{}, Panel: map[int64]bool{}, Checks: map[string]bool{},
		Repeats: form.Get("repeats"), SystemPrompt: form.Get("system_prompt"), ChecksOnly: form.Get("checks_only") != ""}
	in := store.RunInput{Name: form.Get("name"), TriggeredBy: "MANUAL", SystemPrompt: form.Get("system_prompt"), Pairwise: form.Get("pairwise") != ""}
	f.Pairwise = in.Pairwise
	f.Weights = form.Get("weights")
	parseID := func(field, v string) (int64, error) {
		if strings.TrimSpace(v) == "" {
			return 0, nil
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, &store.ValidationError{Field: field, Message: "is not a valid id"}
		}
		return id, nil
	}
	var firstErr error
	keep := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	weights, err := parseWeights(f.Weights)
	keep(err)
	in.Weights = weights
	jid, err := parseID("judge", form.Get("judge_provider_id"))
	keep(err)
	f.Judge = views.ModelChoice{ProviderID: jid, Model: form.Get("judge_model")}
	for _, v := range form["judge_ids"] {
		id, err := parseID("judge_ids", v)
		keep(err)
		if id > 0 {
			f.Panel[id] = true
			in.JudgeIDs = append(in.JudgeIDs, id)
		}
	}
	// The single judge applies unless a panel or checks alone were chosen.
	if len(in.JudgeIDs) == 0 && !f.ChecksOnly {
		in.Judge = &store.ModelRef{ProviderID: jid, Model: form.Get("judge_model")}
	}
	for _, m := range form["metrics"] {
		f.Checks[m] = true
		in.Metrics = append(in.Metrics, m)
	}
	if len(in.Metrics) == len(store.CheckTypes) && !f.ChecksOnly {
		in.Metrics = nil // every check on: the run scores everything, judge metrics included
	}
	if f.ChecksOnly && len(in.Metrics) == 0 {
		keep(&store.ValidationError{Field: "metrics", Message: "a run without a judge needs at least one reference check"})
	}
	if r := strings.TrimSpace(form.Get("repeats")); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil {
			keep(&store.ValidationError{Field: "repeats", Message: "is not a whole number"})
		}
		in.Repeats = n
	}
	at := func(list []string, i int) string {
		if i < len(list) {
			return list[i]
		}
		return ""
	}
	providers, models := form["target_provider_id"], form["target_model"]
	for i := range max(len(providers), len(models)) {
		pv, mv := at(providers, i), at(models, i)
		if strings.TrimSpace(pv) == "" && strings.TrimSpace(mv) == "" {
			continue
		}
		pid, err := parseID(fmt.Sprintf("targets[%d]", i), pv)
		keep(err)
		choice := views.ModelChoice{ProviderID: pid, Model: mv, Temperature: at(form["target_temperature"], i),
			MaxTokens: at(form["target_max_tokens"], i), ReasoningEffort: at(form["target_reasoning_effort"], i),
			SystemPrompt: at(form["target_system_prompt"], i)}
		f.Targets = append(f.Targets, choice)
		set, err := targetSettings(fmt.Sprintf("targets[%d].settings", i), choice)
		keep(err)
		in.Targets = append(in.Targets, store.ModelRef{ProviderID: pid, Model: mv, Settings: set})
	}
	for _, v := range form["collection_ids"] {
		id, err := parseID("collection_ids", v)
		keep(err)
		if id > 0 {
			f.Selected[id] = true
			in.CollectionIDs = append(in.CollectionIDs, id)
		}
	}
	// The query picker and run tags (pages_import.go).
	f.Pick, in.TaskSelection, in.TaskIDs, in.Tags, err = runPickInput(form)
	keep(err)
	return in, f, firstErr
}

// parseWeights reads "metric=weight, …".
func parseWeights(text string) (map[string]float64, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(text, ",") {
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		w, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || name == "" || err != nil {
			return nil, &store.ValidationError{Field: "weights", Message: fmt.Sprintf("%q: write metric=weight, e.g. accuracy=2", strings.TrimSpace(part))}
		}
		out[name] = w
	}
	return out, nil
}

// targetSettings parses a target's settings as typed in the form; empty fields keep the model's defaults.
func targetSettings(field string, c views.ModelChoice) (store.TargetSettings, error) {
	set := store.TargetSettings{ReasoningEffort: c.ReasoningEffort, SystemPrompt: strings.TrimSpace(c.SystemPrompt)}
	if v := strings.TrimSpace(c.Temperature); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return set, &store.ValidationError{Field: field + ".temperature", Message: "is not a number"}
		}
		set.Temperature = &t
	}
	if v := strings.TrimSpace(c.MaxTokens); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return set, &store.ValidationError{Field: field + ".max_tokens", Message: "is not a whole number"}
		}
		set.MaxTokens = &n
	}
	return set, nil
}

func (h *Handler) createRunForm(c echo.Context) error {
	in, f, err := runFormInput(c)
	var run *store.Run
	if err == nil {
		run, err = h.engine.StartRun(withoutCancel(c), in)
	}
	if err != nil {
		status, msg, ok := formProblem(err)
		if !ok {
			return err
		}
		f.Error = msg
		if f, err = h.newRunForm(c, f); err != nil {
			return err
		}
		return render(c, status, views.NewRunPage(f))
	}
	return redirectFlash(c, "Run started.", fmt.Sprintf("/runs/%d", run.ID))
}

func progressView(run *store.Run, p runs.Progress, cur *store.CurrentWork) views.ProgressView {
	return views.ProgressView{RunID: run.ID, Status: string(run.Status), Phase: string(run.Phase), Progress: p,
		Current: cur, Elapsed: elapsed(run).String(), Error: run.Error}
}

func (h *Handler) progressOf(c echo.Context, run *store.Run) (views.ProgressView, runs.Progress, error) {
	prog, err := h.runs.Progress(c.Request().Context(), run)
	if err != nil {
		return views.ProgressView{}, prog, err
	}
	cur, err := h.store.RunCurrent(c.Request().Context(), run.ID)
	if err != nil {
		return views.ProgressView{}, prog, err
	}
	return progressView(run, prog, cur), prog, nil
}

const perTaskLimit = 200

func (h *Handler) showRun(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := h.store.Run(ctx, id)
	if err != nil {
		return err
	}
	d := views.RunPageData{Run: run}
	var prog runs.Progress
	if d.Progress, prog, err = h.progressOf(c, run); err != nil {
		return err
	}
	if prog.Failed > 0 {
		if d.Failures, err = h.runs.Failures(ctx, id); err != nil {
			return err
		}
	}
	if d.Logs, err = h.store.LastRunLogs(ctx, id, 200); err != nil {
		return err
	}
	sum, err := h.runs.Summary(ctx, run, prog)
	if err != nil {
		return err
	}
	if d.Results, err = h.resultsView(ctx, run, prog, sum, false); err != nil {
		return err
	}
	if d.Items, err = h.itemsTable(c, run); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunPage(d))
}

func (h *Handler) itemsTable(c echo.Context, run *store.Run) (views.ItemsTable, error) {
	f, err := h.itemFilter(c)
	if err != nil {
		return views.ItemsTable{}, err
	}
	page, err := h.store.RunItems(c.Request().Context(), run.ID, f)
	if err != nil {
		return views.ItemsTable{}, err
	}
	t := views.ItemsTable{RunID: run.ID, Status: string(f.Status), Model: f.Model, Page: page}
	seen := map[string]bool{}
	for _, tg := range run.Targets {
		if !seen[tg.Model] {
			seen[tg.Model] = true
			t.Models = append(t.Models, tg.Model)
		}
	}
	return t, nil
}

func (h *Handler) runItemsPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	t, err := h.itemsTable(c, run)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ItemsTableView(t))
}

func (h *Handler) runResultsPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.store.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	prog, err := h.runs.Progress(c.Request().Context(), run)
	if err != nil {
		return err
	}
	sum, err := h.runs.Summary(c.Request().Context(), run, prog)
	if err != nil {
		return err
	}
	v, err := h.resultsView(c.Request().Context(), run, prog, sum, c.QueryParam("analysis") != "")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunResults(v))
}

// runFailuresPartial is the table of a run's failures, reloaded when a watched run ends.
func (h *Handler) runFailuresPartial(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if _, err := h.store.Run(c.Request().Context(), id); err != nil {
		return err
	}
	groups, err := h.runs.Failures(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.RunFailures(id, groups))
}

// runActionPage pauses, resumes or cancels, answering the new progress panel.
func (h *Handler) runActionPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.runAction(c, id, c.Param("action"))
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return err
	}
	if run == nil {
		return err
	}
	p, _, perr := h.progressOf(c, run)
	if perr != nil {
		return perr
	}
	if err != nil {
		p.Error = err.Error()
	}
	return render(c, http.StatusOK, views.RunProgress(p))
}

// retryJudgingPage re-queues the items whose judging failed and reloads the run page.
func (h *Handler) retryJudgingPage(c echo.Context) error {
	return h.requeuePage(c, h.runs.RetryJudging, "no item of this run failed in judging")
}

// retryFailedPage re-queues an ended run's failed items and reloads the run page.
func (h *Handler) retryFailedPage(c echo.Context) error {
	return h.requeuePage(c, h.runs.RetryFailed, "no item of this run failed")
}

// requeuePage sends items of a run back with requeue and reloads the run
// page; none is the conflict shown when there was nothing to send back.
func (h *Handler) requeuePage(c echo.Context, requeue func(context.Context, int64) (int64, error), none string) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	n, err := requeue(withoutCancel(c), id)
	if err != nil {
		return err
	}
	if n == 0 {
		return echo.NewHTTPError(http.StatusConflict, none)
	}
	return redirectFlash(c, "Items sent back for another try.", fmt.Sprintf("/runs/%d", id))
}

// resultsView adds judge agreement and the run's statistics to the aggregates.
//
// The statistics cost a pass over every item, so a page never waits for
// them: it shows the cached ones (a live run's may lag a few items behind)
// or, with none cached, loads them in a second request (compute = true).
func (h *Handler) resultsView(ctx context.Context, run *store.Run, prog runs.Progress, sum *runs.Summary, compute bool) (views.RunResultsView, error) {
	v := views.RunResultsView{Run: run, Summary: sum}
	a, fresh, ok, err := h.runs.Analysis(ctx, run, prog, compute)
	if err != nil {
		return v, err
	}
	if !ok || (!fresh && !run.Active()) {
		v.AnalysisPending = true
		return v, nil
	}
	v.Agreement, v.Analysis = &a.Agreement, a.Report
	if run.Options.Pairwise {
		pv, err := h.pairwiseView(ctx, run)
		if err != nil {
			return v, err
		}
		v.Pairwise = &pv
	}
	return v, nil
}

func (h *Handler) rerunPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	run, err := h.runs.Rerun(withoutCancel(c), id, "MANUAL")
	if err != nil {
		return err
	}
	return redirectFlash(c, "New run started from this run's setup.", fmt.Sprintf("/runs/%d", run.ID))
}

func (h *Handler) deleteRunPage(c echo.Context) error {
	id, err := pathID(c, "run")
	if err != nil {
		return err
	}
	if err := h.runs.Delete(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Run deleted.", "/runs")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
