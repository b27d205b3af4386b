package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

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

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
